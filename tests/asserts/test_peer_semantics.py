"""Where assay claims an op of a peer, it behaves as the peer does: promptfoo (equals,
contains-any / contains-all, json-schema as YAML), the TypeScript helper (attribute-equality
evidence), RFC 6901 (URI fragment pointers), json-patch-tests (type-strict equality), WikiEval
(stripped text equality). And no odd argument ever raises: a bad argument is a failed check."""

from __future__ import annotations

import itertools
import math
from typing import Any

import pytest

from assay import evaluate_deterministic_scorer
from assay.asserts import OPS, AssertSpec, CheckResult, OutputView, parse_assert, run_assert
from assay.errors import ValidationError

NAN = float("nan")
INF = float("inf")


def check(raw: Any, output: Any, *, text: bool = True) -> CheckResult:
    return run_assert(parse_assert(raw), OutputView(output, text=text))


def reason_of(result: CheckResult) -> str:
    assert result.passed is False
    assert isinstance(result.evidence, dict)
    reason = result.evidence.get("reason")
    assert isinstance(reason, str) and reason
    return reason


def assert_bad_argument(raw: dict[str, Any], output: Any, *, text: bool = True) -> None:
    """A bad argument fails the check, negated or not, with reason invalid_argument."""
    negated = {**raw, "op": f"not-{raw['op']}"}
    for spec in (raw, negated):
        assert reason_of(check(spec, output, text=text)) == "invalid_argument", spec


# ------------------------------------------------ 1. equals at a pointer is type-strict JSON


def test_json_patch_tests_a15_strings_are_not_numbers() -> None:
    # json-patch-tests A.15: {"/": 9, "~1": 10}, test /~01 "10" is an error; 10 is not.
    doc = '{"/": 9, "~1": 10}'
    assert check({"op": "equals", "path": "/~01", "value": 10}, doc).passed is True
    result = check({"op": "equals", "path": "/~01", "value": "10"}, doc)
    assert reason_of(result) == "not_equal"


@pytest.mark.parametrize(
    ("path", "value", "equal"),
    [
        ("/n", "10", False),
        ("/n", 10, True),
        ("/n", 10.0, True),
        ("/t", "true", False),
        ("/t", True, True),
        ("/z", "null", False),
        ("/z", None, True),
        ("/s", "10", True),
        ("/s", 10, False),
        ("/j", '{"a": 1}', True),  # a string at the pointer is a string, never re-parsed
        ("/j", {"a": 1}, False),
        ("/o", {"a": 1.0}, True),
        ("/o", '{"a": 1}', False),
    ],
)
def test_equals_at_a_pointer_compares_json_values(path: str, value: Any, equal: bool) -> None:
    doc = '{"n": 10, "t": true, "z": null, "s": "10", "j": "{\\"a\\": 1}", "o": {"a": 1}}'
    result = check({"op": "equals", "path": path, "value": value}, doc)
    assert result.passed is equal
    assert check({"op": "not-equals", "path": path, "value": value}, doc).passed is not equal


def test_equals_without_pointer_string_is_text_other_is_json() -> None:
    assert check("equals:10", "10").passed is True  # text against text
    assert check({"op": "equals", "value": "10"}, '"10"').passed is False  # text, not JSON
    assert check({"op": "equals", "value": 10}, "10.0").passed is True  # JSON against JSON
    assert check({"op": "equals", "value": 10}, '"10"').passed is False
    assert check({"op": "equals", "value": True}, '"true"').passed is False
    assert check({"op": "equals", "value": None}, '"null"').passed is False
    assert reason_of(check({"op": "equals", "value": [1]}, "[1")) == "not_json"


def test_equals_on_a_json_value_output_is_type_strict() -> None:
    # The scorer API hands outputs in as JSON values: a JSON string is not re-parsed.
    assert check({"op": "equals", "value": 1}, "1", text=False).passed is False
    assert check({"op": "equals", "value": "1"}, 1, text=False).passed is False
    assert check({"op": "equals", "value": "1"}, "1", text=False).passed is True


# ------------------------------------------------------------- 2. WikiEval: stripped text


def test_text_equals_strips_surrounding_whitespace_on_both_sides() -> None:
    assert check("equals:  done  ", "done\n").passed is True
    assert check("equals:  done  ", " done").passed is True
    assert check("equals:done", "\tdone \r\n").passed is True
    assert check("equals:done", "do ne").passed is False
    assert check("not-equals:  done  ", "done\n").passed is False


def test_equals_at_a_pointer_does_not_strip() -> None:
    doc = '{"a": " done", "b": "done"}'
    assert check({"op": "equals", "path": "/a", "value": "done"}, doc).passed is False
    assert check({"op": "equals", "path": "/b", "value": " done"}, doc).passed is False
    assert check({"op": "equals", "path": "/a", "value": " done"}, doc).passed is True


# ------------------------------------------------------- 3. NaN, infinities, text values


@pytest.mark.parametrize(
    "raw",
    [
        {"op": "equals", "value": NAN},
        {"op": "equals", "value": [1, NAN]},
        {"op": "equals", "value": {"a": NAN}},
        {"op": "contains", "value": NAN},
        {"op": "icontains", "value": NAN},
        {"op": "starts-with", "value": NAN},
        {"op": "contains-any", "value": [NAN]},
        {"op": "contains-any", "value": ["x", NAN]},
        {"op": "contains-all", "value": ["nan", NAN]},
        {"op": "regex", "value": NAN},
        {"op": "regex", "pattern": NAN},
        {"op": "levenshtein", "value": NAN},
        {"op": "levenshtein", "value": "x", "threshold": NAN},
        {"op": "json-schema", "value": {"maximum": NAN}},
    ],
    ids=lambda raw: raw["op"],
)
def test_nan_is_a_bad_argument(raw: dict[str, Any]) -> None:
    for output in ("NaN", "nan", "banana", '{"a": 1}'):
        assert_bad_argument(raw, output)


@pytest.mark.parametrize("op", ["contains", "icontains", "starts-with"])
def test_infinities_are_compared_as_json_text(op: str) -> None:
    assert check({"op": op, "value": INF}, "Infinity and beyond").passed is True
    assert check({"op": op, "value": INF}, "inf and beyond").passed is False
    assert check({"op": op, "value": -INF}, "-Infinity!").passed is True
    assert check({"op": op, "value": -INF}, "-inf!").passed is False


def test_infinities_in_lists_and_regex_are_json_text() -> None:
    assert check({"op": "contains-any", "value": [INF]}, "Infinity").passed is True
    assert check({"op": "contains-all", "value": [-INF, 1]}, "-Infinity 1").passed is True
    assert check({"op": "regex", "value": INF}, "Infinity").passed is True
    assert check({"op": "regex", "value": INF}, "inf").passed is False


def test_levenshtein_needs_a_string_target() -> None:
    assert_bad_argument({"op": "levenshtein", "value": 42, "threshold": 0}, "42")
    assert_bad_argument({"op": "levenshtein", "value": 4.5}, "4.5")
    assert check({"op": "levenshtein", "value": "42", "threshold": 0}, "42").passed is True


@pytest.mark.parametrize("value", [True, False, None, {"a": 1}, ["a"]])
@pytest.mark.parametrize("op", ["contains", "icontains", "starts-with", "regex", "levenshtein"])
def test_booleans_null_and_containers_are_bad_text_values(op: str, value: Any) -> None:
    assert_bad_argument({"op": op, "value": value}, "True true None null a")


@pytest.mark.parametrize("item", [True, None, {"a": 1}, ["a"]])
def test_list_items_must_be_strings_or_numbers(item: Any) -> None:
    for op in ("contains-any", "contains-all"):
        assert_bad_argument({"op": op, "value": ["a", item]}, 'a true null {"a":1} ["a"]')


# ---------------------------------------------- 4. promptfoo's quoted comma-separated values


def listed(value: str) -> str:
    """The items contains-any reads from ``value``, as its failure reason lists them."""
    result = check({"op": "contains-any", "value": value}, "\x00")
    assert reason_of(result) == "no_substring_found"
    return result.reason or ""


# promptfoo's own table (test/util/parseCommaSeparatedValues.test.ts), but for '""', which
# promptfoo reads as one empty item (which every output contains) and assay drops.
PROMPTFOO_TABLE = [
    ('"hello, world",foo', ["hello, world", "foo"]),
    ('"say \\"hi\\"",b', ['say "hi"', "b"]),
    ('a ""quoted"" value, plain', ['a ""quoted"" value', "plain"]),
    ("alpha, , beta,, ", ["alpha", "beta"]),
    ("  spaced  ,  next  ", ["spaced", "next"]),
    ('"only one"', ["only one"]),
    ("no-quotes-at-all", ["no-quotes-at-all"]),
    ('"trailing"   ', ["trailing"]),
    ("a,b,c", ["a", "b", "c"]),
    ('" ",x', [" ", "x"]),
    ('x,"y,z"', ["x", "y,z"]),
    ('"a","b"', ["a", "b"]),
    ('"a" , "b"', ["a", "b"]),
    ('"\\n",x', ["\\n", "x"]),
    ('"\\\\",x', ["\\", "x"]),
    ("a,", ["a"]),
    (",a", ["a"]),
    ('"comma,inside","another, one"', ["comma,inside", "another, one"]),
    ('mix,"quoted, field",bare', ["mix", "quoted, field", "bare"]),
    ('"a""b""c"', ['a"b"c']),
    ('"你好，世界",café', ["你好，世界", "café"]),
    ('"hello, world",universe', ["hello, world", "universe"]),
    ('"a\\"b"', ['a"b']),
    ('\t"x, y"\t,\tz\t', ["x, y", "z"]),
    ('" padded ", b', [" padded ", "b"]),
]


@pytest.mark.parametrize(("value", "items"), PROMPTFOO_TABLE)
def test_string_values_split_as_promptfoo_does(value: str, items: list[str]) -> None:
    assert f"none of {items!r}" in listed(value)
    output = "\x00".join(items)
    assert check({"op": "contains-all", "value": value}, output).passed is True
    assert check({"op": "contains-any", "value": value}, output).passed is True


def test_a_quoted_item_keeps_its_comma_for_contains_any() -> None:
    value = '"hello, world",universe'
    assert check({"op": "contains-any", "value": value}, "hello world").passed is False
    assert check({"op": "contains-any", "value": value}, "say hello, world").passed is True
    assert check(f"contains-all:{value}", "hello, world and universe").passed is True


@pytest.mark.parametrize(
    "value", ['"unterminated', '"a"b,c', 'a,"b', '"a" "b"', '"a"x', ',,"', '"a\\"']
)
@pytest.mark.parametrize("op", ["contains-any", "contains-all"])
def test_malformed_quoted_values_are_bad_arguments(op: str, value: str) -> None:
    assert_bad_argument({"op": op, "value": value}, 'a b c "a"b unterminated')
    string_form = check(f"{op}:{value}", "a b c")
    assert reason_of(string_form) == "invalid_argument"


@pytest.mark.parametrize("value", ['""', '"", ,', '" "'])
def test_no_non_empty_item_is_a_bad_argument(value: str) -> None:
    if value == '" "':
        assert check({"op": "contains-any", "value": value}, "a b").passed is True
        return
    assert_bad_argument({"op": "contains-any", "value": value}, "anything")


# ------------------------------------------------------------- 5. reasons in the evidence

MISMATCHES = [
    ({"op": "equals", "value": "a"}, "b", "not_equal"),
    ({"op": "equals", "value": 1}, "2", "not_equal"),
    ({"op": "equals", "value": 1}, "one", "not_json"),
    ({"op": "contains", "value": "a"}, "b", "substring_not_found"),
    ({"op": "icontains", "value": "A"}, "b", "substring_not_found"),
    ({"op": "starts-with", "value": "a"}, "ba", "prefix_not_found"),
    ({"op": "contains-any", "value": "a,b"}, "c", "no_substring_found"),
    ({"op": "contains-all", "value": "a,b"}, "a", "missing_substrings"),
    ({"op": "regex", "value": "^a"}, "ba", "pattern_not_matched"),
    ({"op": "is-json"}, "{", "not_json"),
    ({"op": "contains-json"}, "no json", "no_json_found"),
    ({"op": "json-schema", "value": {"type": "string"}}, "1", "schema_validation_failed"),
    ({"op": "json-schema", "value": {"type": "string"}}, "{", "not_json"),
    ({"op": "attribute-equality", "left_path": "/a", "right_path": "/b"}, '{"a":1,"b":2}', None),
    ({"op": "is-sql"}, "SELECT * FROM", "sql_parse_error"),
    ({"op": "is-sql"}, "", "sql_parse_error"),
    ({"op": "is-sql-ish"}, "hello", "no_sql_keyword"),
    ({"op": "is-sql-ish"}, "SELECT 1", "no_sql_clause"),
    ({"op": "levenshtein", "value": "abc", "threshold": 1}, "xyz", "edit_distance"),
]


@pytest.mark.parametrize(("raw", "output", "reason"), MISMATCHES)
def test_every_mismatch_names_what_was_wrong(raw: dict[str, Any], output: str, reason: Any) -> None:
    found = reason_of(check(raw, output))
    assert found == (reason or "attribute_mismatch")
    assert found != "invalid_argument"


def test_an_unknown_argument_has_evidence() -> None:
    # weight is known to every op (the golden reads it); promptfoo's metric is not.
    result = check({"op": "contains", "value": "a", "metric": "m"}, "a")
    assert result.passed is False
    assert result.evidence == {"reason": "unknown_argument", "arguments": ["metric"]}
    result = check({"op": "not-is-json", "value": "x", "flags": "i"}, "a")
    assert result.evidence == {"reason": "unknown_argument", "arguments": ["flags", "value"]}


def test_mixed_key_types_in_an_assert_built_in_python_are_named() -> None:
    # parse_assert may refuse such keys; a spec built directly must still fail, not raise.
    spec = AssertSpec("contains", False, {"value": "a", 1: "x", "metric": 2})
    result = run_assert(spec, OutputView("a"))
    assert result.evidence == {"reason": "unknown_argument", "arguments": ["1", "metric"]}


@pytest.mark.parametrize(
    "raw",
    [
        {"op": "contains", "value": ""},
        {"op": "regex", "value": "("},
        {"op": "regex", "value": "a", "flags": 0},
        {"op": "is-sql", "dialect": "nosuch"},
        {"op": "is-sql", "dialect": ""},
        {"op": "json-schema", "value": {"type": 1}},
        {"op": "levenshtein", "value": "a", "threshold": -1},
    ],
)
def test_bad_arguments_say_invalid_argument(raw: dict[str, Any]) -> None:
    assert_bad_argument(raw, "a")


# ------------------------------------------------------------------- 6. is-sql's dialect


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT * FROM `employees`",
        "SELECT `first name` FROM `my table` WHERE `id` = 1",
        'SELECT "first name" FROM "my table"',
        "SELECT a::int FROM t",
        "SELECT a FROM t WHERE name = 'O''Brien'",
        "INSERT INTO t (a) VALUES (1) RETURNING id",
        "SELECT COUNT(*) FILTER (WHERE a > 1) FROM t",
        "SELECT ROW_NUMBER() OVER (PARTITION BY a ORDER BY b) FROM t",
        "SELECT CAST(a AS VARCHAR(10)) FROM t",
        "SELECT * FROM t OFFSET 5 ROWS FETCH NEXT 10 ROWS ONLY",
        "SELECT a FROM t WHERE b IS NOT DISTINCT FROM c",
        "SELECT a FROM t WHERE d > DATE '2024-01-01' LIMIT 10 OFFSET 5",
        "TRUNCATE TABLE t",
        "GRANT SELECT ON t TO u",
        "SHOW TABLES",
    ],
)
def test_is_sql_default_dialect_reads_backticks_and_standard_sql(sql: str) -> None:
    assert check("is-sql", sql).passed is True


@pytest.mark.parametrize(
    "sql", ["SELECT * FROM `employees", "SELECT `a FROM t", "SELECT * FROM employees`"]
)
def test_is_sql_default_dialect_rejects_an_unterminated_backtick(sql: str) -> None:
    assert reason_of(check("is-sql", sql)) == "sql_parse_error"
    assert check("not-is-sql", sql).passed is True


# ------------------------------------------------ 7. RFC 6901 pointers as URI fragments

RFC_DOC = (
    '{"foo": ["bar", "baz"], "": 0, "a/b": 1, "c%d": 2, "e^f": 3, "g|h": 4, '
    '"i\\\\j": 5, "k\\"l": 6, " ": 7, "m~n": 8}'
)
WHOLE = {
    "foo": ["bar", "baz"],
    "": 0,
    "a/b": 1,
    "c%d": 2,
    "e^f": 3,
    "g|h": 4,
    "i\\j": 5,
    'k"l': 6,
    " ": 7,
    "m~n": 8,
}
# RFC 6901 section 5 (JSON string representation) and section 6 (URI fragment).
SECTION_5 = [
    ("", WHOLE),
    ("/foo", ["bar", "baz"]),
    ("/foo/0", "bar"),
    ("/", 0),
    ("/a~1b", 1),
    ("/c%d", 2),
    ("/e^f", 3),
    ("/g|h", 4),
    ("/i\\j", 5),
    ('/k"l', 6),
    ("/ ", 7),
    ("/m~0n", 8),
]
SECTION_6 = [
    ("#", WHOLE),
    ("#/foo", ["bar", "baz"]),
    ("#/foo/0", "bar"),
    ("#/", 0),
    ("#/a~1b", 1),
    ("#/c%25d", 2),
    ("#/e%5Ef", 3),
    ("#/g%7Ch", 4),
    ("#/i%5Cj", 5),
    ("#/k%22l", 6),
    ("#/%20", 7),
    ("#/m~0n", 8),
]


@pytest.mark.parametrize(("pointer", "value"), SECTION_5 + SECTION_6)
def test_rfc6901_example_tables(pointer: str, value: Any) -> None:
    assert check({"op": "equals", "path": pointer, "value": value}, RFC_DOC).passed is True
    other = {"op": "equals", "path": pointer, "value": "not this"}
    assert reason_of(check(other, RFC_DOC)) == "not_equal"


@pytest.mark.parametrize(("fragment", "plain"), list(zip(SECTION_6, SECTION_5, strict=True)))
def test_fragment_pointers_work_in_attribute_equality(fragment: Any, plain: Any) -> None:
    raw = {"op": "attribute-equality", "left_path": fragment[0], "right_path": plain[0]}
    assert check(raw, RFC_DOC).passed is True


def test_fragment_pointers_in_other_ops_and_escapes() -> None:
    doc = '{"a b": "x y", "€": "euro", "~/": 1}'
    assert check({"op": "contains", "path": "#/a%20b", "value": "x"}, doc).passed is True
    assert check({"op": "equals", "path": "#/%E2%82%AC", "value": "euro"}, doc).passed is True
    assert check({"op": "equals", "path": "#/~0~1", "value": 1}, doc).passed is True
    assert check({"op": "equals", "path": "#/%7E0%7E1", "value": 1}, doc).passed is True


@pytest.mark.parametrize("pointer", ["#/%", "#/%2", "#/%zz", "#/a%g0", "#/%FF", "#/%C3", "#a"])
def test_bad_fragment_pointers_are_malformed(pointer: str) -> None:
    result = check({"op": "contains", "path": pointer, "value": "x"}, '{"a": "x"}')
    assert result.evidence == {"reason": "invalid_pointer", "path": pointer}
    raw = {"op": "attribute-equality", "left_path": pointer, "right_path": "/a"}
    assert reason_of(check(raw, '{"a": "x"}')) == "invalid_pointer"
    assert reason_of(check({**raw, "op": "not-attribute-equality"}, '{"a": "x"}')) == (
        "invalid_pointer"
    )


# ------------------------------------------------------------ 8. schemas written as YAML

YAML_SCHEMA = "type: object\nrequired: [name]\nproperties:\n  name: {type: string}\n"


@pytest.mark.parametrize("op", ["json-schema", "contains-json"])
def test_a_schema_may_be_written_as_yaml(op: str) -> None:
    assert check({"op": op, "value": YAML_SCHEMA}, '{"name": "ok"}').passed is True
    failed = check({"op": op, "schema": YAML_SCHEMA}, '{"name": 1}')
    assert reason_of(failed) == "schema_validation_failed"
    assert check({"op": op, "value": '{"type": "object"}'}, "{}").passed is True  # JSON still


@pytest.mark.parametrize(
    "schema", ["just words", "- a\n- b\n", "{", "42", "key: [unclosed", "when: 2024-01-01"]
)
@pytest.mark.parametrize("op", ["json-schema", "contains-json"])
def test_schema_text_that_is_no_schema_is_a_bad_argument(op: str, schema: str) -> None:
    assert_bad_argument({"op": op, "value": schema}, '{"a": 1}')


def test_a_yaml_boolean_schema_is_a_schema() -> None:
    assert check({"op": "json-schema", "value": "true"}, "1").passed is True
    assert check({"op": "json-schema", "value": "false"}, "1").passed is False


# --------------------------------------------------- 9. attribute-equality names both values


def test_attribute_mismatch_evidence_carries_both_values() -> None:
    raw = {"op": "attribute-equality", "left_path": "/a", "right_path": "#/b"}
    result = check(raw, '{"a": {"x": [1]}, "b": "1"}')
    assert result.evidence == {
        "reason": "attribute_mismatch",
        "left_path": "/a",
        "right_path": "#/b",
        "left": {"x": [1]},
        "right": "1",
    }


# -------------------------------------- 10. odd argument types never raise; they fail closed


class Odd:
    """No JSON form, no useful str."""

    def __repr__(self) -> str:
        return "Odd()"


ODD_VALUES: list[Any] = [
    0,
    7,
    -1,
    1.5,
    NAN,
    INF,
    True,
    False,
    None,
    "",
    "x",
    "(",
    [],
    [1, "a"],
    [NAN],
    {},
    {"type": "object"},
    {1: "a", "b": 2},
    {"a": NAN},
    {"x"},
    b"x",
    Odd(),
]
ODD_OUTPUTS: list[Any] = ["x", '{"a": 1}', 5, None, [1], {"a": 1}, {1: "a", "b": 2}, NAN, b"x", {1}]
ARG_NAMES = ("value", "pattern", "flags", "threshold", "dialect", "schema", "path")
ARG_NAMES += ("left_path", "right_path", "case_insensitive")


def _accepted(op: str) -> list[str]:
    _, accepted = OPS[op]
    return [name for name in ARG_NAMES if name in accepted or name == "path"]


def _base_args(op: str) -> dict[str, Any]:
    """Arguments that make a valid assert of ``op``, so the odd one is the only problem."""
    return {
        "attribute-equality": {"left_path": "/a", "right_path": "/a"},
        "levenshtein": {"value": "x"},
        "json-schema": {"value": {}},
    }.get(op, {"value": "x"} if "value" in OPS[op][1] else {})


def _judge(raw: dict[str, Any], output: Any) -> tuple[CheckResult, CheckResult]:
    plain = run_assert(parse_assert(raw), OutputView(output))
    negated = run_assert(parse_assert({**raw, "op": f"not-{raw['op']}"}), OutputView(output))
    return plain, negated


def _fails_closed_or_decides(plain: CheckResult, negated: CheckResult) -> None:
    """Either a real verdict (the negation disagrees) or a failed check both ways; a broken
    assert never passes. A failed check always says why."""
    assert isinstance(plain.passed, bool) and isinstance(negated.passed, bool)
    assert not (plain.passed and negated.passed)
    for result in (plain, negated):
        if not result.passed:
            reason_of(result)
            assert isinstance(result.reason, str) and result.reason


@pytest.mark.parametrize("op", sorted(OPS))
def test_odd_arguments_never_raise(op: str) -> None:
    for name, value in itertools.product(_accepted(op), ODD_VALUES):
        raw = {"op": op, **_base_args(op), name: value}
        for output in ("x", '{"a": "x"}'):
            _fails_closed_or_decides(*_judge(raw, output))


@pytest.mark.parametrize("op", sorted(OPS))
def test_odd_outputs_never_raise(op: str) -> None:
    raw = {"op": op, **_base_args(op)}
    for output in ODD_OUTPUTS:
        _fails_closed_or_decides(*_judge(raw, output))
        _fails_closed_or_decides(*_judge({**raw, "path": "/a"}, output))


@pytest.mark.parametrize("op", ["json-schema", "contains-json"])
def test_a_python_output_with_int_keys_fails_a_pattern_schema_closed(op: str) -> None:
    schema = {"patternProperties": {"^a": {"type": "string"}}, "additionalProperties": False}
    plain, negated = _judge({"op": op, "value": schema}, {1: "a", "b": 2})
    assert reason_of(plain) == reason_of(negated) == "not_json"


def _invalid(name: str, value: Any) -> bool:
    """Odd values that are a bad argument wherever they are given (for the ops that take
    ``name``): NaN, anything without a JSON form, and a non-string pointer, dialect or flags."""
    if isinstance(value, float) and math.isnan(value):
        return True
    if isinstance(value, set | bytes | Odd) or value == [NAN] or value == {"a": NAN}:
        return name != "case_insensitive"
    if name in ("path", "left_path", "right_path", "flags", "dialect"):
        return value is not None and not isinstance(value, str)
    if name == "threshold":
        return value is None or isinstance(value, bool) or not isinstance(value, int) or value < 0
    return False


@pytest.mark.parametrize("op", sorted(OPS))
def test_odd_arguments_that_are_invalid_fail_both_ways(op: str) -> None:
    for name, value in itertools.product(_accepted(op), ODD_VALUES):
        if not _invalid(name, value) or (name == "case_insensitive"):
            continue
        raw = {"op": op, **_base_args(op), name: value}
        plain, negated = _judge(raw, '{"a": "x"}')
        assert plain.passed is False and negated.passed is False, (raw, plain, negated)


@pytest.mark.parametrize("op", sorted(OPS))
def test_the_scorer_api_never_raises_on_odd_arguments(op: str) -> None:
    for name, value in itertools.product(_accepted(op), ODD_VALUES):
        definition = {"type": op, **_base_args(op), name: value}
        for output in ODD_OUTPUTS:
            result = evaluate_deterministic_scorer(definition, {"output": output})
            assert result["passed"] in (True, False)
            if not result["passed"]:
                assert isinstance(result["evidence"]["reason"], str)
            if _invalid(name, value):
                assert result["passed"] is False, (definition, output, result)


def test_the_scorer_api_still_refuses_what_is_no_definition() -> None:
    with pytest.raises(ValidationError):
        evaluate_deterministic_scorer({"type": "nosuch"}, {"output": "x"})
    with pytest.raises(ValidationError):
        evaluate_deterministic_scorer({"type": 5}, {"output": "x"})
