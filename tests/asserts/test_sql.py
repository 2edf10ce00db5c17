"""SQL ops: is-sql-ish (keyword heuristic) and is-sql (a real parser)."""

from __future__ import annotations

from typing import Any

import pytest

from assay.asserts import DEFAULT_CONTEXT, CheckResult, OutputView, parse_assert
from assay.asserts import run_assert as _run


def check(raw: Any, output: Any, *, text: bool = True) -> CheckResult:
    return _run(parse_assert(raw), OutputView(output, text=text), DEFAULT_CONTEXT)


def assert_failed(result: CheckResult) -> None:
    assert result.passed is False
    assert isinstance(result.reason, str)
    assert result.reason


# --------------------------------------------------------------------------- is-sql-ish


@pytest.mark.parametrize(
    "output",
    [
        "SELECT name FROM users",
        "select name from users",
        "SELECT\nname\nFROM\nt",
        "  \n SELECT a\tFROM t",
        "SELECT 1;",
        "select 1 ;",
        "(SELECT 1) ;",
        "(SELECT a FROM t)",
        "SELECT(a)FROM(t)",
        "WITH x AS (SELECT 1) SELECT * FROM x",
        "INSERT INTO t VALUES (1)",
        "UPDATE t SET a = 1",
        "DELETE FROM t WHERE a = 1",
        "CREATE TABLE t (a INT)",
        "DROP TABLE t",
        "EXPLAIN SELECT 1;",
    ],
)
def test_is_sql_ish_passes(output: str) -> None:
    assert check("is-sql-ish", output).passed is True
    result = check("not-is-sql-ish", output)
    assert_failed(result)
    assert result.evidence == {"reason": "negated"}


@pytest.mark.parametrize(
    "output",
    [
        "",
        "   ",
        "The answer is 42.",
        "Here is the data you asked for.",
        "Selecting rows from a table is easy",
        "selection FROM t",
        "SELECT",
        "SELECT 1",
        "SELECT a, b",
        "42",
        "from users select name",
    ],
)
def test_is_sql_ish_fails(output: str) -> None:
    assert_failed(check("is-sql-ish", output))
    assert check("not-is-sql-ish", output).passed is True


def test_is_sql_ish_reasons_differ() -> None:
    no_keyword = check("is-sql-ish", "The answer is 42.")
    no_clause = check("is-sql-ish", "SELECT 1")
    assert_failed(no_keyword)
    assert_failed(no_clause)
    assert no_keyword.reason != no_clause.reason


def test_is_sql_ish_with_path() -> None:
    out = '{"sql": "SELECT id FROM t", "note": "hello"}'
    assert check({"op": "is-sql-ish", "path": "/sql"}, out).passed is True
    assert_failed(check({"op": "is-sql-ish", "path": "/note"}, out))


@pytest.mark.parametrize("op", ["is-sql-ish", "not-is-sql-ish"])
def test_is_sql_ish_takes_no_argument(op: str) -> None:
    for output in ("SELECT a FROM t", "prose"):
        assert_failed(check(f"{op}:anything", output))


def test_is_sql_ish_huge_output_is_cheap() -> None:
    text = "SELECT a FROM t WHERE x IN (" + ", ".join(["1"] * 500_000) + ");"
    assert check("is-sql-ish", text).passed is True
    assert_failed(check("is-sql-ish", "word " * 500_000))


# --------------------------------------------------------------------------- is-sql


@pytest.mark.parametrize(
    "output",
    [
        "SELECT 1",
        "SELECT a, b FROM t WHERE c = 1 ORDER BY a LIMIT 10",
        "select * from users where id = 1",
        "INSERT INTO t (a) VALUES (1)",
        "UPDATE t SET a = 1 WHERE b = 2",
        "DELETE FROM t WHERE a = 1",
        "CREATE TABLE t (a INT, b TEXT)",
        "DROP TABLE t",
        "WITH x AS (SELECT 1 AS n) SELECT n FROM x",
        "SELECT a FROM t;\nSELECT b FROM u;",
        "SELECT a FROM t JOIN u ON t.id = u.id GROUP BY a HAVING COUNT(*) > 1",
        "  SELECT 1;  \n",
    ],
)
def test_is_sql_passes(output: str) -> None:
    assert check("is-sql", output).passed is True
    result = check("not-is-sql", output)
    assert_failed(result)
    assert result.evidence == {"reason": "negated"}


@pytest.mark.parametrize(
    "output",
    [
        "",
        "   \n",
        "SELEC * FORM x",
        "The quick brown fox jumps over the lazy dog.",
        "I cannot answer that.",
        "Hello",
        "Hello, world!",
        "SELECT * FROM",
        "SELECT FROM WHERE",
        "SELECT 1 +",
        "42",
        "'hello'",
        "a + b",
        "```sql\nSELECT 1\n```",
    ],
)
def test_is_sql_fails(output: str) -> None:
    assert_failed(check("is-sql", output))
    assert check("not-is-sql", output).passed is True


def test_is_sql_parse_error_evidence() -> None:
    result = check("is-sql", "SELECT * FROM")
    assert_failed(result)
    assert result.evidence == {"reason": "sql_parse_error"}


def test_is_sql_dialect() -> None:
    assert check({"op": "is-sql", "dialect": "postgres"}, "SELECT a::int FROM t").passed is True
    assert check("is-sql:postgres", "SELECT a::int FROM t").passed is True
    assert check({"op": "is-sql", "dialect": "mysql"}, "SELECT `a` FROM t").passed is True


@pytest.mark.parametrize("op", ["is-sql", "not-is-sql"])
def test_is_sql_unknown_dialect_fails(op: str) -> None:
    for output in ("SELECT 1", "not sql at all"):
        result = check({"op": op, "dialect": "nosuchdialect"}, output)
        assert_failed(result)
        assert "nosuchdialect" in (result.reason or "")
    assert_failed(check(f"{op}:nosuchdialect", "SELECT 1"))


@pytest.mark.parametrize("dialect", [5, ["postgres"], {"a": 1}, True])
@pytest.mark.parametrize("op", ["is-sql", "not-is-sql"])
def test_is_sql_non_string_dialect_fails(op: str, dialect: Any) -> None:
    result = check({"op": op, "dialect": dialect}, "SELECT 1")
    assert_failed(result)
    assert "dialect" in (result.reason or "")


def test_is_sql_with_path() -> None:
    out = '{"query": "SELECT id FROM t WHERE x = 1", "note": "SELEC * FORM x"}'
    assert check({"op": "is-sql", "path": "/query"}, out).passed is True
    assert_failed(check({"op": "is-sql", "path": "/note"}, out))


def test_is_sql_does_not_log_the_output(caplog: pytest.LogCaptureFixture) -> None:
    secret = "SELECT secret_column_xyz FROM t WHERE"
    with caplog.at_level("DEBUG"):
        check("is-sql", secret)
        check("is-sql", "SELECT secret_column_xyz FROM t")
    assert "secret_column_xyz" not in caplog.text
