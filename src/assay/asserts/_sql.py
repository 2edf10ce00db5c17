"""SQL ops: is-sql-ish (a cheap keyword heuristic) and is-sql (a real parser, sqlglot)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from assay.asserts._context import CheckContext, OutputView, as_text
from assay.asserts._result import ArgumentProblem, Outcome

_LEADING = frozenset(
    ["SELECT", "INSERT", "UPDATE", "DELETE", "WITH", "CREATE", "ALTER", "DROP", "MERGE", "EXPLAIN"]
)
_CLAUSES = frozenset(
    [
        "FROM",
        "WHERE",
        "INTO",
        "VALUES",
        "SET",
        "TABLE",
        "JOIN",
        "GROUP",
        "ORDER",
        "HAVING",
        "LIMIT",
        "UNION",
        "AS",
        "ON",
        "VIEW",
        "INDEX",
        "USING",
        "RETURNING",
        "SELECT",
        "BY",
    ]
)
# Statements sqlglot may keep as an opaque Command: accepted by their leading keyword only.
_COMMANDS = frozenset(
    [
        "SHOW",
        "EXPLAIN",
        "GRANT",
        "REVOKE",
        "TRUNCATE",
        "ANALYZE",
        "VACUUM",
        "CALL",
        "COMMENT",
        "REFRESH",
    ]
)
# Any whitespace (newlines included) and parentheses separate words.
_WORD_SPLIT = re.compile(r"[\s()]+")


def op_is_sql_ish(view: OutputView, args: Mapping[str, Any], ctx: CheckContext) -> Outcome:
    text = as_text(view.raw).strip()
    words = [w for w in _WORD_SPLIT.split(text, maxsplit=4096) if w]
    if not words or words[0].upper().rstrip(";") not in _LEADING:
        return False, "output does not start with a SQL statement keyword", None
    has_clause = any(w.upper().rstrip(",;") in _CLAUSES for w in words[1:4096])
    if has_clause or text.endswith(";"):
        return True, None, None
    return False, "output has a SQL keyword but no clause or trailing ';'", None


def _statement_types() -> tuple[type, ...]:
    from sqlglot import exp

    return (
        exp.Query,
        exp.DML,
        exp.DDL,
        exp.Create,
        exp.Drop,
        exp.Alter,
        exp.Merge,
        exp.Insert,
        exp.Update,
        exp.Delete,
        exp.Describe,
        exp.Use,
        exp.Set,
    )


def op_is_sql(view: OutputView, args: Mapping[str, Any], ctx: CheckContext) -> Outcome:
    import logging

    import sqlglot
    from sqlglot.errors import ErrorLevel, SqlglotError

    # sqlglot logs warnings that quote the SQL it parses; outputs must never reach a log.
    logging.getLogger("sqlglot").setLevel(logging.CRITICAL)
    dialect = args.get("dialect") or args.get("value") or None
    if dialect is not None:
        if not isinstance(dialect, str):
            raise ArgumentProblem("argument 'dialect' must be a string")
        try:
            from sqlglot.dialects.dialect import Dialect

            Dialect.get_or_raise(dialect)
        except ValueError as exc:
            raise ArgumentProblem(f"unknown SQL dialect {dialect!r}: {exc}") from None
    text = as_text(view.raw).strip()
    if not text:
        return False, "output is empty", None
    try:
        trees = sqlglot.parse(text, read=dialect, error_level=ErrorLevel.RAISE)
    except SqlglotError as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return False, f"not parseable SQL: {first[:200]}", {"reason": "sql_parse_error"}
    statements = [t for t in trees if t is not None]
    if not statements:
        return False, "output holds no SQL statement", None
    kinds = _statement_types()
    from sqlglot import exp

    for tree in statements:
        if isinstance(tree, exp.Command) and str(tree.this).upper() in _COMMANDS:
            continue  # statements sqlglot keeps unparsed, e.g. SHOW TABLES in the default dialect
        if not isinstance(tree, kinds):
            return False, f"parsed as {type(tree).__name__}, not a SQL statement", None
    return True, None, None
