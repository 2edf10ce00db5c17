"""Tier 1 asserts: parsing, the op table, negation, bad arguments and paths.

Per-family details live in test_asserts_text.py, test_asserts_json.py and test_asserts_sql.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from assay.asserts import (
    DEFAULT_CONTEXT,
    KNOWN_OPS,
    OPS,
    CheckContext,
    CheckResult,
    OutputView,
    as_text,
    json_equal,
    parse_assert,
    run_assert,
)
from assay.errors import GoldenError


@dataclass(frozen=True)
class Finished:
    """A live output and why the model stopped (for natural-stop)."""

    text: str
    finish_reason: str
    latency_ms: float | None = None
    cost_usd: float | None = None


def check(raw: Any, output: Any, *, text: bool = True, ctx: CheckContext | None = None):
    if isinstance(output, Finished):
        view = OutputView(
            output.text,
            finish_reason=output.finish_reason,
            latency_ms=output.latency_ms,
            cost_usd=output.cost_usd,
        )
    else:
        view = OutputView(output, text=text)
    return run_assert(parse_assert(raw), view, ctx or DEFAULT_CONTEXT)


def assert_failed_with_reason(result: CheckResult) -> None:
    assert result.passed is False
    assert isinstance(result.reason, str)
    assert result.reason.strip()


# --------------------------------------------------------------------------- the op table

DESIGN_OPS = {
    "equals",
    "contains",
    "icontains",
    "not-contains",
    "starts-with",
    "contains-any",
    "contains-all",
    "regex",
    "is-json",
    "contains-json",
    "json-schema",
    "attribute-equality",
    "is-sql",
    "is-sql-ish",
    "levenshtein",
    "natural-stop",
    "python",
    "javascript",
    "is-valid-tool-call",
    "tool-call",
    "assert-set",
    "any-of",
    "latency",
    "cost",
    "similar",
    "judge",
}


def test_known_ops_match_the_design() -> None:
    assert set(KNOWN_OPS) == DESIGN_OPS
    assert list(KNOWN_OPS) == sorted(KNOWN_OPS)
    # The groups are run by run_assert itself and a judge assert by the gate, not by an entry
    # of the op table.
    assert set(OPS) | {"not-contains", "assert-set", "any-of", "judge"} == DESIGN_OPS


@dataclass(frozen=True)
class OpCase:
    """One op with arguments, an output that passes, one that fails, and bad arguments."""

    args: dict[str, Any]
    passing: Any
    failing: Any
    bad_args: dict[str, Any]
    text: bool = True
    extra: dict[str, Any] = field(default_factory=dict)


_CALL_F = '{"type": "function", "function": {"name": "f", "arguments": "{}"}}'
_CALL_G = '{"type": "function", "function": {"name": "g", "arguments": "{}"}}'

OP_CASES: dict[str, OpCase] = {
    "equals": OpCase({"value": "hello"}, "hello", "Hello", {}),
    "contains": OpCase({"value": "foo"}, "a foo b", "a fo o b", {"value": ["foo"]}),
    "icontains": OpCase({"value": "FOO"}, "a foo b", "a bar b", {}),
    "starts-with": OpCase({"value": "SELECT"}, "SELECT 1", "select 1", {}),
    "contains-any": OpCase({"value": ["x", "foo"]}, "a foo", "a bar", {"value": []}),
    "contains-all": OpCase({"value": ["a", "b"]}, "a b", "a c", {"value": {"a": 1}}),
    "regex": OpCase({"value": "^a+$"}, "aaa", "aab", {"value": "("}),
    "is-json": OpCase({}, '{"a": 1}', "not json", {"value": "x"}),
    "contains-json": OpCase({}, 'see {"a": 1} here', "no json here", {"value": {"type": 12}}),
    "json-schema": OpCase(
        {"value": {"type": "object"}}, '{"a": 1}', "[1]", {"value": {"type": 12}}
    ),
    "attribute-equality": OpCase(
        {"left_path": "/a", "right_path": "/b"},
        '{"a": 1, "b": 1}',
        '{"a": 1, "b": 2}',
        {"left_path": "/a"},
    ),
    "is-sql": OpCase({}, "SELECT a FROM t", "hello there friend", {"dialect": "nosuchdialect"}),
    "is-sql-ish": OpCase({}, "SELECT a FROM t", "The answer is 42.", {"value": "x"}),
    "natural-stop": OpCase({}, Finished("hi", "stop"), Finished("hi", "length"), {"value": "x"}),
    "levenshtein": OpCase(
        {"value": "kitten", "threshold": 3},
        "sitting",
        "sitting on the mat",
        {"value": "kitten", "threshold": -1},
    ),
    "is-valid-tool-call": OpCase({}, _CALL_F, "no call here", {"tools": "get_weather"}),
    "tool-call": OpCase({"name": "f"}, _CALL_F, _CALL_G, {"arguments": "x"}),
    "latency": OpCase(
        {"threshold": 500},
        Finished("hi", "stop", latency_ms=120.0),
        Finished("hi", "stop", latency_ms=900.0),
        {"threshold": -1},
    ),
    "cost": OpCase(
        {"threshold": 0.01},
        Finished("hi", "stop", cost_usd=0.002),
        Finished("hi", "stop", cost_usd=0.05),
        {"threshold": "cheap"},
    ),
}


def test_every_op_has_a_case() -> None:
    # python's, javascript's and similar's passing checks carry their score as evidence, so
    # they have their own tests (tests/asserts/test_python_and_tool_calls.py,
    # test_javascript.py, test_model_graded.py) instead.
    assert set(OP_CASES) | {"python", "javascript", "similar"} == set(OPS)


@pytest.mark.parametrize("op", sorted(OP_CASES))
def test_op_passes(op: str) -> None:
    case = OP_CASES[op]
    result = check({"op": op, **case.args}, case.passing, text=case.text)
    assert result == CheckResult(result.text, op, True, None, None)


@pytest.mark.parametrize("op", sorted(OP_CASES))
def test_op_fails(op: str) -> None:
    case = OP_CASES[op]
    result = check({"op": op, **case.args}, case.failing, text=case.text)
    assert_failed_with_reason(result)
    assert result.op == op


@pytest.mark.parametrize("op", sorted(OP_CASES))
def test_negated_op_passes_when_op_fails(op: str) -> None:
    case = OP_CASES[op]
    result = check({"op": f"not-{op}", **case.args}, case.failing, text=case.text)
    assert result.passed is True
    assert result.op == f"not-{op}"
    assert result.reason is None


@pytest.mark.parametrize("op", sorted(OP_CASES))
def test_negated_op_fails_when_op_passes(op: str) -> None:
    case = OP_CASES[op]
    result = check({"op": f"not-{op}", **case.args}, case.passing, text=case.text)
    assert_failed_with_reason(result)
    assert result.op == f"not-{op}"
    assert result.evidence == {"reason": "negated"}


@pytest.mark.parametrize("negate", [False, True], ids=["plain", "negated"])
@pytest.mark.parametrize("op", sorted(OP_CASES))
def test_bad_argument_fails_even_when_negated(op: str, negate: bool) -> None:
    case = OP_CASES[op]
    full = f"not-{op}" if negate else op
    for output in (case.passing, case.failing):
        result = check({"op": full, **case.bad_args}, output, text=case.text)
        assert_failed_with_reason(result)
        assert result.evidence != {"reason": "negated"}


# Each: (assert mapping, output, a word the reason must contain).
BAD_ARGUMENTS = [
    pytest.param({"op": "equals"}, "x", "value", id="equals-missing-value"),
    pytest.param({"op": "contains", "value": ""}, "x", "empty", id="contains-empty-value"),
    pytest.param({"op": "contains"}, "x", "value", id="contains-missing-value"),
    pytest.param({"op": "contains", "value": {"a": 1}}, "x", "value", id="contains-dict-value"),
    pytest.param({"op": "contains", "value": True}, "True", "value", id="contains-bool-value"),
    pytest.param({"op": "icontains"}, "x", "value", id="icontains-missing-value"),
    pytest.param({"op": "starts-with"}, "x", "value", id="starts-with-missing-value"),
    pytest.param({"op": "contains-any"}, "x", "value", id="contains-any-missing-value"),
    pytest.param({"op": "contains-any", "value": ","}, "x", "value", id="contains-any-empty"),
    pytest.param({"op": "contains-all"}, "x", "value", id="contains-all-missing-value"),
    pytest.param({"op": "contains-all", "value": 7}, "7", "value", id="contains-all-number"),
    pytest.param({"op": "regex"}, "x", "value", id="regex-missing-value"),
    pytest.param({"op": "regex", "value": "("}, "(", "regex", id="regex-invalid"),
    pytest.param({"op": "regex", "value": "a["}, "a[", "regex", id="regex-unclosed-class"),
    pytest.param({"op": "regex", "value": "a", "flags": "x"}, "a", "flag", id="regex-bad-flag"),
    pytest.param({"op": "regex", "value": "a", "flags": "iq"}, "a", "flag", id="regex-bad-flag2"),
    pytest.param({"op": "regex", "value": "a", "flags": 1}, "a", "flags", id="regex-flags-int"),
    pytest.param({"op": "json-schema"}, "{}", "schema", id="json-schema-missing-value"),
    pytest.param(
        {"op": "json-schema", "value": {"type": 12}}, "{}", "schema", id="json-schema-invalid"
    ),
    pytest.param(
        {"op": "json-schema", "value": {"minimum": "1"}}, "0", "schema", id="json-schema-minimum"
    ),
    pytest.param({"op": "json-schema", "value": "{"}, "{}", "schema", id="json-schema-not-json"),
    pytest.param({"op": "json-schema", "value": 12}, "{}", "schema", id="json-schema-number"),
    pytest.param(
        {"op": "json-schema", "value": {"$schema": "http://example.com/nope", "type": "object"}},
        "{}",
        "http://example.com/nope",
        id="json-schema-unknown-draft",
    ),
    pytest.param(
        {"op": "contains-json", "value": {"type": 12}}, '{"a": 1}', "schema", id="cj-invalid"
    ),
    pytest.param(
        {"op": "attribute-equality", "left_path": "/a"}, '{"a": 1}', "right_path", id="ae-no-right"
    ),
    pytest.param(
        {"op": "attribute-equality", "right_path": "/a"}, '{"a": 1}', "left_path", id="ae-no-left"
    ),
    pytest.param(
        {"op": "attribute-equality", "left_path": "a", "right_path": "/a"},
        '{"a": 1}',
        "pointer",
        id="ae-bad-pointer",
    ),
    pytest.param(
        {"op": "is-sql", "dialect": "nosuchdialect"},
        "SELECT 1",
        "dialect",
        id="is-sql-unknown-dialect",
    ),
    pytest.param({"op": "is-sql", "dialect": 5}, "SELECT 1", "dialect", id="is-sql-int-dialect"),
    pytest.param({"op": "levenshtein"}, "x", "value", id="levenshtein-missing-value"),
    pytest.param(
        {"op": "levenshtein", "value": "a", "threshold": -1}, "a", "threshold", id="lev-negative"
    ),
    pytest.param(
        {"op": "levenshtein", "value": "a", "threshold": 1.5}, "a", "threshold", id="lev-float"
    ),
    pytest.param(
        {"op": "levenshtein", "value": "a", "threshold": "3"}, "a", "threshold", id="lev-string"
    ),
    pytest.param(
        {"op": "levenshtein", "value": "a", "threshold": True}, "a", "threshold", id="lev-bool"
    ),
    pytest.param({"op": "is-json", "value": "x"}, "{}", "value", id="is-json-takes-no-value"),
    pytest.param({"op": "is-sql-ish", "value": "x"}, "SELECT 1;", "value", id="is-sql-ish-value"),
]


@pytest.mark.parametrize("negate", [False, True], ids=["plain", "negated"])
@pytest.mark.parametrize(("raw", "output", "word"), BAD_ARGUMENTS)
def test_bad_argument_is_a_failed_check(
    raw: dict[str, Any], output: str, word: str, negate: bool
) -> None:
    spec = dict(raw)
    if negate:
        spec["op"] = "not-" + spec["op"]
    result = check(spec, output)
    assert_failed_with_reason(result)
    assert word.lower() in (result.reason or "").lower()
    assert result.op == spec["op"]


OTHER_OUTPUTS = ["", "plain prose, no JSON", '{"a": 1}', "[1, 2]", "SELECT a FROM t;", "aaa"]


@pytest.mark.parametrize("negate", [False, True], ids=["plain", "negated"])
@pytest.mark.parametrize(("raw", "output", "word"), BAD_ARGUMENTS)
def test_bad_argument_fails_whatever_the_output(
    raw: dict[str, Any], output: str, word: str, negate: bool
) -> None:
    # A broken assert must not pass just because the output happens to fail the op early
    # (no JSON found, output empty, ...) and the assert is negated.
    spec = dict(raw)
    if negate:
        spec["op"] = "not-" + spec["op"]
    for other in OTHER_OUTPUTS:
        result = check(spec, other)
        assert result.passed is False, f"{spec} passed on output {other!r}"
        assert result.reason


def test_bad_argument_in_string_form_fails_even_when_negated() -> None:
    for raw in ("regex:(", "not-regex:(", "not-json-schema:{", "json-schema:{"):
        assert_failed_with_reason(check(raw, "("))


def test_attribute_equality_non_string_pointer_is_a_failed_check() -> None:
    # A bad argument must never crash the run.
    for negate in ("", "not-"):
        result = check(
            {"op": f"{negate}attribute-equality", "left_path": 5, "right_path": "/a"}, '{"a": 5}'
        )
        assert_failed_with_reason(result)


# --------------------------------------------------------------------------- not-contains


def test_not_contains_passes_when_absent() -> None:
    result = check("not-contains:secret", "nothing to see")
    assert result == CheckResult("not-contains:secret", "not-contains", True)


def test_not_contains_fails_when_present() -> None:
    result = check({"op": "not-contains", "value": "secret"}, "the secret is out")
    assert_failed_with_reason(result)
    assert result.op == "not-contains"
    assert result.evidence == {"reason": "negated"}


def test_not_contains_missing_value_fails() -> None:
    assert_failed_with_reason(check({"op": "not-contains"}, "anything"))
    assert_failed_with_reason(check("not-contains", "anything"))


def test_not_contains_with_type_alias_and_single_key_form() -> None:
    assert check({"type": "not-contains", "value": "x"}, "abc").passed is True
    assert check({"not-contains": "x"}, "abc").passed is True
    assert check({"not-contains": "b"}, "abc").passed is False


# --------------------------------------------------------------------------- unknown ops / args


@pytest.mark.parametrize(
    ("raw", "named"),
    [
        ("frobnicate:x", "frobnicate"),
        ("not-frobnicate:x", "not-frobnicate"),
        ({"op": "frobnicate", "value": 1}, "frobnicate"),
        ({"type": "not-frobnicate"}, "not-frobnicate"),
        ({"frobnicate": "x"}, "frobnicate"),
        ("Contains:x", "Contains"),
        ("not-not-contains:x", "not-not-contains"),
    ],
)
def test_unknown_op_fails_closed_naming_the_op(raw: Any, named: str) -> None:
    result = check(raw, "x")
    assert_failed_with_reason(result)
    assert f"'{named}'" in (result.reason or "")
    assert result.op == named
    assert result.evidence == {"reason": "unknown_op"}


@pytest.mark.parametrize("negate", ["", "not-"])
def test_unknown_argument_fails(negate: str) -> None:
    result = check({"op": f"{negate}contains", "value": "a", "bogus": 1}, "a")
    assert_failed_with_reason(result)
    assert "bogus" in (result.reason or "")
    result = check({"op": f"{negate}contains", "value": "a", "bogus": 1}, "b")
    assert_failed_with_reason(result)


def test_argument_of_another_op_is_unknown() -> None:
    # 'flags' belongs to regex, 'threshold' to levenshtein.
    assert_failed_with_reason(check({"op": "contains", "value": "a", "flags": "i"}, "a"))
    assert_failed_with_reason(check({"op": "equals", "value": "a", "threshold": 1}, "a"))


def test_description_and_name_are_ignored() -> None:
    raw = {"op": "contains", "value": "a", "description": "has a", "name": "n"}
    assert check(raw, "a").passed is True


# --------------------------------------------------------------------------- parse_assert


def test_parse_string_form() -> None:
    spec = parse_assert("contains:foo")
    assert (spec.op, spec.negate, dict(spec.args), spec.text) == (
        "contains",
        False,
        {"value": "foo"},
        "contains:foo",
    )
    assert spec.full_op == "contains"


def test_parse_string_form_keeps_colons_in_the_argument() -> None:
    spec = parse_assert("regex:^a:b$")
    assert spec.op == "regex"
    assert spec.args == {"value": "^a:b$"}


def test_parse_string_form_without_argument() -> None:
    spec = parse_assert("is-json")
    assert (spec.op, spec.negate, dict(spec.args), spec.text) == ("is-json", False, {}, "is-json")


def test_parse_string_form_negated() -> None:
    spec = parse_assert("not-regex:^a$")
    assert spec.op == "regex"
    assert spec.negate is True
    assert spec.full_op == "not-regex"
    assert spec.text == "not-regex:^a$"


def test_parse_mapping_form() -> None:
    spec = parse_assert({"op": "contains", "value": "foo", "path": "/answer"})
    assert spec.op == "contains"
    assert spec.negate is False
    assert dict(spec.args) == {"value": "foo", "path": "/answer"}
    assert "contains" in spec.text
    assert "foo" in spec.text
    assert "/answer" in spec.text


def test_parse_type_alias() -> None:
    spec = parse_assert({"type": "not-icontains", "value": "x"})
    assert (spec.op, spec.negate, dict(spec.args)) == ("icontains", True, {"value": "x"})


def test_parse_single_key_mapping() -> None:
    spec = parse_assert({"contains": "foo"})
    assert (spec.op, spec.negate, dict(spec.args)) == ("contains", False, {"value": "foo"})
    spec = parse_assert({"not-regex": "^a"})
    assert (spec.op, spec.negate, dict(spec.args)) == ("regex", True, {"value": "^a"})


def test_parse_camel_case_aliases() -> None:
    spec = parse_assert(
        {"op": "attribute-equality", "leftPath": "/a", "rightPath": "/b", "caseInsensitive": 1}
    )
    assert dict(spec.args) == {"left_path": "/a", "right_path": "/b", "case_insensitive": 1}


@pytest.mark.parametrize(
    "raw",
    [
        "",
        ":foo",
        "   :foo",
        {"op": "contains", "type": "contains", "value": "x"},
        {"value": "x", "path": "/a"},
        {},
        {"op": ""},
        {"op": "  "},
        {"op": 5, "value": "x"},
        5,
        None,
        ["contains", "x"],
    ],
)
def test_parse_rejects_malformed_shapes(raw: Any) -> None:
    with pytest.raises(GoldenError):
        parse_assert(raw, source="goldens/a.md")


def test_parse_error_names_source_and_field() -> None:
    with pytest.raises(GoldenError) as info:
        parse_assert({"value": "x", "path": "/a"}, source="goldens/a.md", field="asserts[2]")
    assert info.value.source == "goldens/a.md"
    assert info.value.field == "asserts[2]"
    assert "goldens/a.md" in str(info.value)


def test_result_to_dict() -> None:
    failed = check({"op": "contains", "value": "x", "path": "/nope"}, '{"a": 1}')
    assert failed.to_dict() == {
        "text": failed.text,
        "op": "contains",
        "passed": False,
        "reason": failed.reason,
        "evidence": {"reason": "missing_pointer", "path": "/nope"},
    }
    assert failed.reason
    passed = check("contains:a", "a")
    # Every record has the same five keys, null where empty.
    assert passed.to_dict() == {
        "text": "contains:a",
        "op": "contains",
        "passed": True,
        "reason": None,
        "evidence": None,
    }


def test_redacted_check_keeps_the_op_and_the_verdict_only() -> None:
    failed = check({"op": "not-contains", "value": "secret-arg"}, "has secret-arg")
    assert failed.passed is False and "secret-arg" in failed.text
    assert failed.to_redacted_dict() == {
        "text": "not-contains",
        "op": "not-contains",
        "passed": False,
        "reason": None,
        "evidence": None,
    }
    assert "secret-arg" not in repr(failed.to_redacted_dict())
    assert set(failed.to_redacted_dict()) == set(failed.to_dict())


# --------------------------------------------------------------------------- paths


def test_path_selects_the_value() -> None:
    out = '{"answer": "Paris is the capital", "other": "Berlin"}'
    assert check({"op": "contains", "value": "Paris", "path": "/answer"}, out).passed is True
    assert check({"op": "contains", "value": "Berlin", "path": "/answer"}, out).passed is False
    assert check({"op": "not-contains", "value": "Berlin", "path": "/answer"}, out).passed is True


def test_path_into_arrays_and_escaped_keys() -> None:
    out = '{"items": [{"a/b": "x1"}, {"a/b": "y2"}]}'
    assert check({"op": "equals", "value": "y2", "path": "/items/1/a~1b"}, out).passed is True
    assert check({"op": "equals", "value": "x1", "path": "/items/1/a~1b"}, out).passed is False


def test_path_on_a_json_value_output() -> None:
    out = {"a": {"b": [10, 20]}}
    assert check({"op": "equals", "value": 20, "path": "/a/b/1"}, out, text=False).passed is True


@pytest.mark.parametrize("negate", ["", "not-"])
@pytest.mark.parametrize("path", ["/nope", "/a/0", "/list/2", "/list/-", "/list/01", "/__class__"])
def test_missing_pointer_is_a_failed_check_with_evidence(negate: str, path: str) -> None:
    out = '{"a": "text", "list": [1, 2]}'
    result = check({"op": f"{negate}contains", "value": "zzz", "path": path}, out)
    assert_failed_with_reason(result)
    assert result.evidence == {"reason": "missing_pointer", "path": path}


def test_missing_pointer_for_every_op() -> None:
    for op, case in OP_CASES.items():
        result = check({"op": op, **case.args, "path": "/missing"}, '{"a": 1}')
        assert_failed_with_reason(result)
        assert result.evidence == {"reason": "missing_pointer", "path": "/missing"}, op


@pytest.mark.parametrize("negate", ["", "not-"])
def test_path_on_non_json_output_fails(negate: str) -> None:
    result = check({"op": f"{negate}contains", "value": "zzz", "path": "/a"}, "plain prose")
    assert_failed_with_reason(result)
    assert result.evidence == {"reason": "not_json", "path": "/a"}


@pytest.mark.parametrize("negate", ["", "not-"])
@pytest.mark.parametrize("path", ["answer", "/a~2", "/a~"])
def test_malformed_path_fails(negate: str, path: str) -> None:
    result = check({"op": f"{negate}contains", "value": "zzz", "path": path}, '{"a": "b"}')
    assert_failed_with_reason(result)
    assert result.evidence == {"reason": "invalid_pointer", "path": path}


@pytest.mark.parametrize("path", [5, ["a"], {"a": 1}])
def test_non_string_path_fails(path: Any) -> None:
    assert_failed_with_reason(check({"op": "contains", "value": "a", "path": path}, '{"a": "a"}'))


def test_empty_path_is_the_whole_document() -> None:
    out = '{"a": 1}'
    assert check({"op": "json-schema", "value": {"type": "object"}, "path": ""}, out).passed


def test_null_path_means_no_path() -> None:
    assert check({"op": "contains", "value": "hi", "path": None}, "hi there").passed is True


def test_path_to_falsy_values_is_not_missing() -> None:
    out = '{"zero": 0, "empty": "", "null": null, "false": false}'
    assert check({"op": "equals", "value": 0, "path": "/zero"}, out).passed is True
    assert check({"op": "equals", "value": "", "path": "/empty"}, out).passed is True
    assert check({"op": "is-json", "path": "/null"}, out).passed is True
    assert check({"op": "equals", "value": False, "path": "/false"}, out).passed is True


# --------------------------------------------------------------------------- helpers


def test_output_view_parses_once_and_lazily() -> None:
    view = OutputView('{"a": [1, 2]}')
    first = view.as_json()
    assert first == (True, {"a": [1, 2]})
    assert view.as_json()[1] is first[1]
    assert OutputView("not json").as_json() == (False, None)
    assert OutputView("abc", text=False).as_json() == (True, "abc")
    assert OutputView({"a": 1}, text=False).as_json() == (True, {"a": 1})


def test_output_view_deeply_nested_text_is_not_json_rather_than_a_crash() -> None:
    deep = "[" * 100_000 + "]" * 100_000
    assert OutputView(deep).as_json() == (False, None)
    assert check("is-json", deep).passed is False


def test_as_text() -> None:
    assert as_text("abc") == "abc"
    assert as_text({"a": [1, "é"]}) == '{"a":[1,"é"]}'
    assert as_text(None) == "null"
    assert as_text(True) == "true"


@pytest.mark.parametrize(
    ("a", "b", "equal"),
    [
        (1, 1.0, True),
        (True, 1, False),
        (False, 0, False),
        (True, True, True),
        (None, None, True),
        (None, 0, False),
        ("1", 1, False),
        ({"a": 1, "b": [1, 2]}, {"b": [1.0, 2], "a": 1}, True),
        ({"a": 1}, {"a": 1, "b": 2}, False),
        ([1, 2], [2, 1], False),
        ([1, [True]], [1.0, [1]], False),
        ({"a": {"b": {"c": 1}}}, {"a": {"b": {"c": 1.0}}}, True),
        ([], {}, False),
    ],
)
def test_json_equal(a: Any, b: Any, equal: bool) -> None:
    assert json_equal(a, b) is equal
    assert json_equal(b, a) is equal


def test_equals_null_asserts_a_json_null_output() -> None:
    spec = parse_assert({"op": "equals", "value": None})
    assert run_assert(spec, OutputView("null")).passed is True
    assert run_assert(spec, OutputView(None, text=False)).passed is True
    failed = run_assert(spec, OutputView("x"))
    assert failed.passed is False
    assert (failed.reason or "").startswith("output does not equal the expected value")
    assert failed.evidence == {"reason": "not_json"}


@pytest.mark.parametrize("reason, passed", [("stop", True), ("length", False)])
def test_an_assert_at_a_path_still_knows_why_the_model_stopped(reason: str, passed: bool) -> None:
    # The view at a path carried latency and cost but not the finish reason, so natural-stop
    # at a path always failed with "no finish reason is known".
    result = check({"op": "natural-stop", "path": "/a"}, Finished('{"a": 1}', reason))
    assert result.passed is passed


@pytest.mark.parametrize(
    "raw, output",
    [
        ("starts-with: 30", "30 days, no more."),
        ("contains:  30 days", "refunds within 30 days"),
        ("regex: ^a", "ab"),
        ("not-contains: x", "abc"),
    ],
)
def test_the_string_form_drops_the_spaces_after_the_colon(raw: str, output: str) -> None:
    # 'starts-with: 30' tested " 30", so it failed on "30 days, no more.".
    assert check(raw, output).passed is True


def test_the_mapping_form_keeps_a_value_exactly() -> None:
    assert check({"op": "contains", "value": " x"}, "ax").passed is False
    assert check({"op": "contains", "value": " x"}, "a x").passed is True
