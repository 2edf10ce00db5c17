"""SQL ops: is-sql-ish (a cheap keyword heuristic) and is-sql (a real parser, sqlglot)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache
from typing import Any, Final

from assay.asserts._context import CheckContext, OutputView
from assay.asserts._result import ArgumentProblem, Outcome

_LEADING = frozenset("SELECT INSERT UPDATE DELETE WITH CREATE ALTER DROP MERGE EXPLAIN".split())
_CLAUSES = frozenset(
    """FROM WHERE INTO VALUES SET TABLE JOIN GROUP ORDER HAVING LIMIT UNION AS ON VIEW INDEX USING
    RETURNING SELECT BY""".split()
)
# Statements sqlglot may keep as an opaque Command: accepted by their leading keyword only.
_COMMANDS = frozenset(
    "SHOW EXPLAIN GRANT REVOKE TRUNCATE ANALYZE VACUUM CALL COMMENT REFRESH".split()
)
# Any whitespace (newlines included) and parentheses separate words.
_WORD_SPLIT = re.compile(r"[\s()]+")


def op_is_sql_ish(view: OutputView, args: Mapping[str, Any], ctx: CheckContext) -> Outcome:
    text = view.text().strip()
    words = [w for w in _WORD_SPLIT.split(text, maxsplit=4096) if w]
    if not words or words[0].upper().rstrip(";") not in _LEADING:
        reason = "output does not start with a SQL statement keyword"
        return False, reason, {"reason": "no_sql_keyword"}
    has_clause = any(w.upper().rstrip(",;") in _CLAUSES for w in words[1:4096])
    if has_clause or text.endswith(";"):
        return True, None, None
    reason = "output has a SQL keyword but no clause or trailing ';'"
    return False, reason, {"reason": "no_sql_clause"}


# The dialect when the assert names none. sqlglot's own default reads a backtick as an ordinary
# character; SQLite reads `x` and "x" as identifiers (as MySQL and standard SQL do).
DEFAULT_DIALECT: Final = "sqlite"


@cache
def _statement_types() -> tuple[type, ...]:
    from sqlglot import exp

    names = "Query DML DDL Create Drop Alter Merge Insert Update Delete Describe Use Set"
    kinds: list[type] = [getattr(exp, name) for name in names.split()]
    # Statements newer sqlglot versions parse into nodes of their own instead of a Command
    # (TRUNCATE, GRANT, ...); getattr: an older sqlglot may lack some of them.
    for name in ("TruncateTable", "Grant", "Revoke", "Analyze", "Comment", "Pragma"):
        kind = getattr(exp, name, None)
        if isinstance(kind, type):
            kinds.append(kind)
    return tuple(kinds)


@cache
def _quiet_sqlglot() -> None:
    import logging

    # sqlglot logs warnings that quote the SQL it parses; outputs must never reach a log.
    logging.getLogger("sqlglot").setLevel(logging.CRITICAL)


def _dialect_arg(args: Mapping[str, Any]) -> str:
    name = "dialect" if "dialect" in args else "value"
    dialect = args.get(name)
    if dialect is None:
        return DEFAULT_DIALECT
    if not isinstance(dialect, str) or not dialect.strip():
        raise ArgumentProblem(f"argument '{name}' (the SQL dialect) must be a dialect name")
    from sqlglot.dialects.dialect import Dialect

    try:
        Dialect.get_or_raise(dialect)
    except (ValueError, TypeError, KeyError) as exc:
        raise ArgumentProblem(f"unknown SQL dialect {dialect!r}: {exc}") from None
    return dialect


def op_is_sql(view: OutputView, args: Mapping[str, Any], ctx: CheckContext) -> Outcome:
    import sqlglot
    from sqlglot import exp
    from sqlglot.errors import ErrorLevel, SqlglotError

    _quiet_sqlglot()
    dialect = _dialect_arg(args)
    text = view.text().strip()
    if not text:
        return False, "output is empty", {"reason": "sql_parse_error"}
    try:
        trees = sqlglot.parse(text, read=dialect, error_level=ErrorLevel.RAISE)
    except SqlglotError as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return False, f"not parseable SQL: {first[:200]}", {"reason": "sql_parse_error"}
    statements = [t for t in trees if t is not None]
    if not statements:
        return False, "output holds no SQL statement", {"reason": "sql_parse_error"}
    kinds = _statement_types()
    for tree in statements:
        if isinstance(tree, exp.Command) and str(tree.this).upper() in _COMMANDS:
            continue  # statements sqlglot keeps unparsed, e.g. SHOW TABLES
        if not isinstance(tree, kinds):
            reason = f"parsed as {type(tree).__name__}, not a SQL statement"
            return False, reason, {"reason": "not_a_statement"}
    return True, None, None
