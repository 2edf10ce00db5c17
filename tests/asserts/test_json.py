"""JSON ops: is-json, contains-json, json-schema, attribute-equality."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from typing import Any

import pytest
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from assay.asserts import DEFAULT_CONTEXT, CheckContext, CheckResult, OutputView, parse_assert
from assay.asserts import run_assert as _run


def check(raw: Any, output: Any, *, text: bool = True, ctx: CheckContext | None = None):
    return _run(parse_assert(raw), OutputView(output, text=text), ctx or DEFAULT_CONTEXT)


def assert_failed(result: CheckResult) -> None:
    assert result.passed is False
    assert isinstance(result.reason, str)
    assert result.reason


def issue_set(result: CheckResult) -> set[tuple[str, str]]:
    assert result.evidence is not None
    assert result.evidence["reason"] == "schema_validation_failed"
    issues = result.evidence["issues"]
    for issue in issues:
        assert set(issue) == {"path", "reason", "message"}
        assert isinstance(issue["message"], str)
        assert issue["message"]
    pairs = {(i["path"], i["reason"]) for i in issues}
    assert len(pairs) == len(issues), "duplicate issues"
    return pairs


# --------------------------------------------------------------------------- is-json


@pytest.mark.parametrize(
    "output", ['{"a": 1}', "[]", "0", "-1.5e3", '"str"', "true", "null", '  {"a": [1]}\n']
)
def test_is_json_passes(output: str) -> None:
    assert check("is-json", output).passed is True


@pytest.mark.parametrize(
    "output", ["", "not json", "{'a': 1}", '{"a": 1,}', '{"a": 1} trailing', "[1, 2", "{a: 1}"]
)
def test_is_json_fails(output: str) -> None:
    assert_failed(check("is-json", output))
    assert check("not-is-json", output).passed is True


@pytest.mark.parametrize("output", ["NaN", "Infinity", "-Infinity", '{"a": NaN}', "[Infinity]"])
def test_is_json_rejects_non_standard_numbers(output: str) -> None:
    # RFC 8259 has no NaN or Infinity; Python's json module accepts them by default.
    assert_failed(check("is-json", output))


def test_is_json_on_json_value_output() -> None:
    assert check("is-json", {"a": 1}, text=False).passed is True
    assert check("is-json", "just a string", text=False).passed is True


def test_not_is_json() -> None:
    result = check("not-is-json", '{"a": 1}')
    assert_failed(result)
    assert result.evidence == {"reason": "negated"}


# --------------------------------------------------------------------------- contains-json


def test_contains_json_finds_an_object_in_prose() -> None:
    out = 'Sure! Here is the result: {"name": "Ada", "age": 36}. Anything else?'
    assert check("contains-json", out).passed is True


def test_contains_json_finds_an_array_in_prose() -> None:
    assert check("contains-json", "The list is [1, 2, 3] as requested.").passed is True


def test_contains_json_skips_braces_that_are_not_json() -> None:
    out = 'Use {curly} braces, e.g. {"ok": true}'
    result = check({"op": "contains-json", "value": {"required": ["ok"]}}, out)
    assert result.passed is True


def test_contains_json_fails_without_json() -> None:
    result = check("contains-json", "no json {here} [either")
    assert_failed(result)
    assert check("not-contains-json", "no json {here} [either").passed is True


def test_contains_json_in_fenced_block() -> None:
    out = 'Answer:\n```json\n{\n  "id": 7,\n  "tags": ["a"]\n}\n```\n'
    schema = {"type": "object", "required": ["id", "tags"]}
    assert check({"op": "contains-json", "value": schema}, out).passed is True


def test_contains_json_with_schema() -> None:
    out = 'Result: {"name": "Ada", "age": 36} done'
    good = {"type": "object", "required": ["name"], "properties": {"age": {"type": "integer"}}}
    assert check({"op": "contains-json", "value": good}, out).passed is True
    assert check({"op": "contains-json", "schema": good}, out).passed is True
    bad = {"type": "object", "required": ["email"]}
    result = check({"op": "contains-json", "value": bad}, out)
    assert_failed(result)
    assert issue_set(result) == {("/email", "required")}
    assert check({"op": "not-contains-json", "value": bad}, out).passed is True


def test_contains_json_schema_in_string_form() -> None:
    out = 'x {"n": 1} y'
    assert check('contains-json:{"required": ["n"]}', out).passed is True
    assert_failed(check('contains-json:{"required": ["m"]}', out))


def test_contains_json_ignores_a_footnote_before_the_object() -> None:
    # "[1]" is a citation; the object after it is what the schema is about.
    out = 'According to the docs [1], the answer is {"name": "Ada"}.'
    schema = {"type": "object", "required": ["name"]}
    assert check({"op": "contains-json", "value": schema}, out).passed is True


def test_contains_json_on_json_value_output() -> None:
    assert check({"op": "contains-json"}, {"a": 1}, text=False).passed is True
    assert check({"op": "contains-json"}, [1], text=False).passed is True
    assert_failed(check({"op": "contains-json"}, 5, text=False))


@pytest.mark.parametrize("op", ["contains-json", "not-contains-json"])
def test_contains_json_invalid_schema_fails(op: str) -> None:
    result = check({"op": op, "value": {"type": 12}}, '{"a": 1}')
    assert_failed(result)
    assert "schema" in (result.reason or "").lower()
    # The schema is broken whatever the output holds: no JSON found must not make it pass.
    assert_failed(check({"op": op, "value": {"type": 12}}, "prose without json"))


# --------------------------------------------------------------------------- json-schema

PERSON = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"type": "integer", "minimum": 0}},
    "required": ["name", "age"],
    "additionalProperties": False,
}


def test_json_schema_passes() -> None:
    assert check({"op": "json-schema", "value": PERSON}, '{"name": "Ada", "age": 36}').passed


def test_json_schema_type_violation() -> None:
    result = check({"op": "json-schema", "value": PERSON}, '{"name": "Ada", "age": "old"}')
    assert_failed(result)
    assert issue_set(result) == {("/age", "type")}
    assert "/age" in (result.reason or "")


def test_json_schema_one_issue_per_missing_and_extra_property() -> None:
    result = check({"op": "json-schema", "value": PERSON}, '{"extra": 1, "more": 2}')
    assert_failed(result)
    assert issue_set(result) == {
        ("/name", "required"),
        ("/age", "required"),
        ("/extra", "additionalProperties"),
        ("/more", "additionalProperties"),
    }
    assert result.evidence is not None
    assert len(result.evidence["issues"]) == 4


def test_json_schema_several_violations() -> None:
    result = check({"op": "json-schema", "value": PERSON}, '{"name": 5, "age": -1}')
    assert issue_set(result) == {("/name", "type"), ("/age", "minimum")}


def test_json_schema_nested_required_path() -> None:
    schema = {"properties": {"user": {"type": "object", "required": ["id"]}}}
    result = check({"op": "json-schema", "value": schema}, '{"user": {}}')
    assert issue_set(result) == {("/user/id", "required")}


def test_json_schema_issue_paths_are_escaped_pointers() -> None:
    schema = {"required": ["a/b", "m~n"]}
    result = check({"op": "json-schema", "value": schema}, "{}")
    assert issue_set(result) == {("/a~1b", "required"), ("/m~0n", "required")}


def test_json_schema_array_item_path() -> None:
    schema = {"type": "array", "items": {"type": "integer"}}
    result = check({"op": "json-schema", "value": schema}, '[1, "two", 3, "four"]')
    assert issue_set(result) == {("/1", "type"), ("/3", "type")}


def test_json_schema_additional_properties_respects_pattern_properties() -> None:
    schema = {
        "properties": {"a": {}},
        "patternProperties": {"^x-": {}},
        "additionalProperties": False,
    }
    result = check({"op": "json-schema", "value": schema}, '{"a": 1, "x-ok": 2, "bad": 3}')
    assert issue_set(result) == {("/bad", "additionalProperties")}


def test_json_schema_required_reports_each_missing_property_once() -> None:
    schema = {"allOf": [{"required": ["a"]}, {"required": ["a", "b"]}]}
    result = check({"op": "json-schema", "value": schema}, "{}")
    assert result.evidence is not None
    paths = sorted(i["path"] for i in result.evidence["issues"])
    assert "/b" in paths
    assert set(paths) == {"/a", "/b"}


def test_json_schema_negated() -> None:
    assert check({"op": "not-json-schema", "value": PERSON}, '{"name": 1}').passed is True
    result = check({"op": "not-json-schema", "value": PERSON}, '{"name": "a", "age": 1}')
    assert_failed(result)
    assert result.evidence == {"reason": "negated"}


def test_json_schema_output_not_json() -> None:
    result = check({"op": "json-schema", "value": {"type": "object"}}, "hello")
    assert_failed(result)


def test_json_schema_string_form() -> None:
    assert check('json-schema:{"type": "array"}', "[1]").passed is True
    assert_failed(check('json-schema:{"type": "array"}', "{}"))


def test_json_schema_schema_argument_name() -> None:
    assert check({"op": "json-schema", "schema": {"type": "array"}}, "[1]").passed is True


def test_json_schema_boolean_schemas() -> None:
    assert check({"op": "json-schema", "value": True}, '{"a": 1}').passed is True
    assert_failed(check({"op": "json-schema", "value": False}, '{"a": 1}'))


def test_json_schema_path_into_a_json_string_validates_the_string() -> None:
    out = '{"answer": "{\\"a\\": 1}", "n": 3}'
    assert check({"op": "json-schema", "value": {"type": "string"}, "path": "/answer"}, out).passed
    assert_failed(check({"op": "json-schema", "value": {"type": "object"}, "path": "/answer"}, out))
    assert check({"op": "json-schema", "value": {"type": "integer"}, "path": "/n"}, out).passed


def test_json_schema_path_issue_paths_are_relative_to_the_value() -> None:
    out = '{"data": {"user": {"age": "x"}}}'
    schema = {"properties": {"age": {"type": "integer"}}}
    result = check({"op": "json-schema", "value": schema, "path": "/data/user"}, out)
    assert issue_set(result) == {("/age", "type")}


def test_json_schema_on_json_value_output() -> None:
    assert check({"op": "json-schema", "value": {"type": "string"}}, "x", text=False).passed
    assert_failed(check({"op": "json-schema", "value": {"type": "object"}}, "x", text=False))


DRAFT7 = "http://json-schema.org/draft-07/schema#"


def test_json_schema_default_draft_is_2020_12() -> None:
    # prefixItems only exists from 2019-09/2020-12 on.
    assert_failed(
        check({"op": "json-schema", "value": {"prefixItems": [{"type": "string"}]}}, "[1]")
    )


def test_json_schema_draft07_is_honoured() -> None:
    # Draft-07 has no prefixItems (an unknown keyword, ignored) ...
    schema = {"$schema": DRAFT7, "prefixItems": [{"type": "string"}]}
    assert check({"op": "json-schema", "value": schema}, "[1]").passed is True
    # ... and an array-valued items is tuple validation, which 2020-12 rejects as a schema.
    tuple_schema = {"$schema": DRAFT7, "items": [{"type": "string"}]}
    result = check({"op": "json-schema", "value": tuple_schema}, "[1]")
    assert issue_set(result) == {("/0", "type")}
    assert check({"op": "json-schema", "value": tuple_schema}, '["a", 1]').passed is True
    assert_failed(check({"op": "json-schema", "value": {"items": [{"type": "string"}]}}, "[1]"))


def test_json_schema_explicit_2020_12() -> None:
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "prefixItems": [{"type": "string"}],
    }
    assert_failed(check({"op": "json-schema", "value": schema}, "[1]"))
    assert check({"op": "json-schema", "value": schema}, '["a"]').passed is True


@pytest.mark.parametrize("op", ["json-schema", "not-json-schema"])
def test_json_schema_unknown_draft_fails(op: str) -> None:
    schema = {"$schema": "https://example.com/my-draft", "type": "object"}
    for out in ("{}", "[]"):
        result = check({"op": op, "value": schema}, out)
        assert_failed(result)
        assert "https://example.com/my-draft" in (result.reason or "")


@pytest.mark.parametrize(
    "schema",
    [{"type": 12}, {"required": "name"}, {"minimum": "0"}, {"properties": []}, 12, [1], "nope"],
)
@pytest.mark.parametrize("op", ["json-schema", "not-json-schema"])
def test_json_schema_invalid_schema_fails(op: str, schema: Any) -> None:
    for out in ("{}", '{"name": 1}', "5"):
        result = check({"op": op, "value": schema}, out)
        assert_failed(result)
        assert "schema" in (result.reason or "").lower()


@pytest.mark.parametrize("op", ["json-schema", "not-json-schema"])
def test_json_schema_unresolvable_ref_fails_without_network(op: str) -> None:
    schema = {"$ref": "http://localhost:1/never/there.json"}
    result = check({"op": op, "value": schema}, "{}")
    assert_failed(result)
    assert "ref" in (result.reason or "").lower()


def test_json_schema_local_refs() -> None:
    schema = {
        "$defs": {"pos": {"type": "integer", "minimum": 1}},
        "properties": {"n": {"$ref": "#/$defs/pos"}},
    }
    assert check({"op": "json-schema", "value": schema}, '{"n": 3}').passed is True
    result = check({"op": "json-schema", "value": schema}, '{"n": 0}')
    assert issue_set(result) == {("/n", "minimum")}


def _registry() -> Registry:
    remote = {"$id": "http://example.com/pos.json", "type": "integer", "minimum": 1}
    resource = Resource.from_contents(remote, default_specification=DRAFT202012)
    return Registry().with_resource("http://example.com/pos.json", resource)


def test_json_schema_ref_through_the_context_registry() -> None:
    ctx = CheckContext(schema_registry=_registry())
    schema = {"properties": {"n": {"$ref": "http://example.com/pos.json"}}}
    assert check({"op": "json-schema", "value": schema}, '{"n": 3}', ctx=ctx).passed is True
    result = check({"op": "json-schema", "value": schema}, '{"n": 0}', ctx=ctx)
    assert issue_set(result) == {("/n", "minimum")}


def test_json_schema_same_schema_different_registries() -> None:
    # The validator cache must not hand a validator built for one registry to another.
    schema = {"$ref": "http://example.com/pos.json"}
    loose = Resource.from_contents({"type": "integer"}, default_specification=DRAFT202012)
    ctx_strict = CheckContext(schema_registry=_registry())
    ctx_loose = CheckContext(
        schema_registry=Registry().with_resource("http://example.com/pos.json", loose)
    )
    assert_failed(check({"op": "json-schema", "value": schema}, "0", ctx=ctx_strict))
    assert check({"op": "json-schema", "value": schema}, "0", ctx=ctx_loose).passed is True
    assert_failed(check({"op": "json-schema", "value": schema}, "0", ctx=ctx_strict))
    assert_failed(check({"op": "json-schema", "value": schema}, "0"))


def test_json_schema_same_schema_different_key_order_is_the_same_schema() -> None:
    a = {"type": "object", "required": ["x"]}
    b = {"required": ["x"], "type": "object"}
    assert issue_set(check({"op": "json-schema", "value": a}, "{}")) == {("/x", "required")}
    assert issue_set(check({"op": "json-schema", "value": b}, "{}")) == {("/x", "required")}


def test_json_schema_format_is_an_annotation_in_2020_12() -> None:
    schema = {"type": "string", "format": "email"}
    assert check({"op": "json-schema", "value": schema}, '"not an email"').passed is True


_PATHOLOGICAL_SCHEMA_SCRIPT = textwrap.dedent(
    """
    import json, sys
    from assay.asserts import OutputView, parse_assert, run_assert

    evil = "a" * 50_000 + "b"
    if sys.argv[1] == "pattern":
        schema, data = {"type": "string", "pattern": "(a+)+$"}, evil
    else:
        schema, data = {"patternProperties": {"(a+)+$": {"type": "integer"}}}, {evil: "x"}
    out = []
    for op in ("json-schema", "not-json-schema"):
        result = run_assert(parse_assert({"op": op, "value": schema}), OutputView(data, text=False))
        out.append([result.passed, result.reason])
    print(json.dumps(out))
    """
)


@pytest.mark.parametrize(("keyword", "valid"), [("pattern", False), ("patternProperties", True)])
def test_json_schema_pathological_pattern_cannot_hang(keyword: str, valid: bool) -> None:
    # Design: "a pathological pattern cannot hang a run". Run in a child process so a hang
    # fails this test instead of the whole suite; the bound is a generous sanity limit only.
    command = [sys.executable, "-c", _PATHOLOGICAL_SCHEMA_SCRIPT, keyword]
    try:
        proc = subprocess.run(command, capture_output=True, text=True, timeout=30, check=False)
    except subprocess.TimeoutExpired:
        proc = None
    if proc is None:
        pytest.fail(f"json-schema '{keyword}' (a+)+$ over 50 KB is not time-bounded: it hung")
    assert proc.returncode == 0, proc.stderr
    (plain, plain_reason), (negated, negated_reason) = json.loads(proc.stdout)
    # Linear-time matching gives the true verdict; time-bounded matching that gives up must
    # fail both the plain and the negated assert (a check that cannot be decided never passes).
    correct = plain is valid and negated is (not valid)
    gave_up = plain is False and negated is False and bool(plain_reason) and bool(negated_reason)
    assert correct or gave_up, (plain, plain_reason, negated, negated_reason)


# --------------------------------------------------------------------------- attribute-equality


def ae(left: str, right: str, op: str = "attribute-equality") -> dict[str, Any]:
    return {"op": op, "left_path": left, "right_path": right}


def test_attribute_equality_numbers() -> None:
    assert check(ae("/a", "/b"), '{"a": 1, "b": 1.0}').passed is True
    assert check(ae("/a", "/b"), '{"a": 1, "b": 1}').passed is True
    result = check(ae("/a", "/b"), '{"a": 1, "b": 2}')
    assert_failed(result)
    assert result.evidence == {
        "reason": "attribute_mismatch",
        "left_path": "/a",
        "right_path": "/b",
        "left": 1,
        "right": 2,
    }


def test_attribute_equality_booleans_are_not_numbers() -> None:
    assert_failed(check(ae("/a", "/b"), '{"a": true, "b": 1}'))
    assert_failed(check(ae("/a", "/b"), '{"a": false, "b": 0}'))
    assert_failed(check(ae("/a", "/b"), '{"a": null, "b": false}'))
    assert check(ae("/a", "/b"), '{"a": true, "b": true}').passed is True


def test_attribute_equality_strings_vs_numbers() -> None:
    assert_failed(check(ae("/a", "/b"), '{"a": "1", "b": 1}'))


def test_attribute_equality_nested_objects_key_order_irrelevant() -> None:
    out = '{"a": {"x": 1, "y": [1, {"z": null}]}, "b": {"y": [1.0, {"z": null}], "x": 1}}'
    assert check(ae("/a", "/b"), out).passed is True
    out = '{"a": {"x": 1, "y": [1, 2]}, "b": {"x": 1, "y": [2, 1]}}'
    assert_failed(check(ae("/a", "/b"), out))
    out = '{"a": {"x": 1}, "b": {"x": 1, "extra": 2}}'
    assert_failed(check(ae("/a", "/b"), out))


def test_attribute_equality_camel_case() -> None:
    raw = {"op": "attribute-equality", "leftPath": "/p/0", "rightPath": "/q"}
    assert check(raw, '{"p": ["v"], "q": "v"}').passed is True


def test_attribute_equality_negated() -> None:
    assert check(ae("/a", "/b", "not-attribute-equality"), '{"a": 1, "b": 2}').passed is True
    result = check(ae("/a", "/b", "not-attribute-equality"), '{"a": 1, "b": 1}')
    assert_failed(result)
    assert result.evidence == {"reason": "negated"}


def test_attribute_equality_missing_pointer() -> None:
    result = check(ae("/a", "/zzz"), '{"a": 1}')
    assert_failed(result)
    assert result.evidence == {"reason": "missing_pointer", "path": "/zzz"}
    result = check(ae("/yyy", "/a"), '{"a": 1}')
    assert result.evidence == {"reason": "missing_pointer", "path": "/yyy"}


def test_negated_attribute_equality_missing_pointer_still_fails() -> None:
    # Design: a missing pointer is a failed check with evidence {reason: missing_pointer, path},
    # as it is for 'path' (which fails even when negated).
    result = check(ae("/a", "/zzz", "not-attribute-equality"), '{"a": 1}')
    assert_failed(result)
    assert result.evidence == {"reason": "missing_pointer", "path": "/zzz"}


def test_attribute_equality_with_path_scopes_both_pointers() -> None:
    raw = {**ae("/x", "/y"), "path": "/inner"}
    assert check(raw, '{"inner": {"x": 2, "y": 2}, "x": 1}').passed is True


def test_attribute_equality_output_not_json() -> None:
    assert_failed(check(ae("/a", "/b"), "plain text"))


@pytest.mark.parametrize("op", ["attribute-equality", "not-attribute-equality"])
@pytest.mark.parametrize(
    "raw",
    [
        {"left_path": "a", "right_path": "/a"},
        {"left_path": "/a~2", "right_path": "/a"},
        {"left_path": "/a"},
        {"right_path": "/a"},
        {},
    ],
)
def test_attribute_equality_bad_arguments(op: str, raw: dict[str, Any]) -> None:
    assert_failed(check({"op": op, **raw}, '{"a": 1}'))
