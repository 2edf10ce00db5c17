"""evaluate_deterministic_scorer: contains, regex, attribute-equality, json-schema, pointers."""

from __future__ import annotations

import json
from typing import Any

import pytest

import assay
from assay import (
    AbortController,
    CandidateSummary,
    CheckResult,
    Result,
    ValidationError,
    evaluate_deterministic_scorer,
    evaluate_prompt_candidates,
)

PASS = {"score": 1, "passed": True}


def score(definition: dict[str, Any], output: Any, **extra: Any) -> dict[str, Any]:
    return evaluate_deterministic_scorer(definition, {"input": None, "output": output, **extra})


def assert_fail(result: dict[str, Any]) -> dict[str, Any]:
    """A failed score: exactly score 0, passed False and a non-empty evidence mapping."""
    assert set(result) == {"score", "passed", "evidence"}
    assert result["score"] == 0
    assert result["passed"] is False
    evidence = result["evidence"]
    assert isinstance(evidence, dict)
    assert isinstance(evidence.get("reason"), str)
    assert evidence["reason"]
    return evidence


def assert_pass(result: dict[str, Any]) -> None:
    assert result == PASS
    assert "evidence" not in result
    assert result["passed"] is True


def schema_issues(result: dict[str, Any]) -> list[dict[str, Any]]:
    evidence = assert_fail(result)
    assert evidence["reason"] == "schema_validation_failed"
    issues = evidence["issues"]
    assert isinstance(issues, list)
    for issue in issues:
        assert isinstance(issue["path"], str)
        assert isinstance(issue["reason"], str)
    return issues


def pairs(issues: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return sorted((i["path"], i["reason"]) for i in issues)


# --------------------------------------------------------------------------- exports


def test_public_exports() -> None:
    assert assay.evaluate_deterministic_scorer is evaluate_deterministic_scorer
    assert assay.evaluate_prompt_candidates is evaluate_prompt_candidates


# --------------------------------------------------------------------------- contains


def test_contains_pass_is_exactly_score_and_passed() -> None:
    result = score(
        {"type": "contains", "path": "/answer", "value": "freeze"}, {"answer": "a freeze"}
    )
    assert_pass(result)


def test_contains_fail_has_evidence() -> None:
    result = score({"type": "contains", "path": "/answer", "value": "thaw"}, {"answer": "a freeze"})
    assert_fail(result)


def test_contains_without_path_reads_whole_output() -> None:
    assert_pass(score({"type": "contains", "value": "lo wo"}, "hello world"))
    assert_fail(score({"type": "contains", "value": "xyz"}, "hello world"))


def test_contains_is_case_sensitive_by_default() -> None:
    output = {"answer": "Change Freeze applies"}
    assert_fail(score({"type": "contains", "path": "/answer", "value": "change freeze"}, output))
    assert_pass(score({"type": "contains", "path": "/answer", "value": "Change Freeze"}, output))


@pytest.mark.parametrize("key", ["case_insensitive", "caseInsensitive"])
def test_contains_case_insensitive_both_spellings(key: str) -> None:
    output = {"answer": "Change Freeze applies"}
    definition = {"type": "contains", "path": "/answer", "value": "change FREEZE", key: True}
    assert_pass(score(definition, output))
    definition_off = {"type": "contains", "path": "/answer", "value": "change FREEZE", key: False}
    assert_fail(score(definition_off, output))
    missing = {"type": "contains", "path": "/answer", "value": "thaw", key: True}
    assert_fail(score(missing, output))


# --------------------------------------------------------------------------- regex


def test_regex_search_semantics() -> None:
    # Search, not full match: a pattern that matches in the middle passes.
    assert_pass(score({"type": "regex", "path": "/a", "pattern": r"b\d"}, {"a": "ab1c"}))
    assert_fail(score({"type": "regex", "path": "/a", "pattern": r"^b\d"}, {"a": "ab1c"}))
    assert_pass(score({"type": "regex", "pattern": "wor"}, "hello world"))


def test_regex_flag_i_changes_the_result() -> None:
    output = {"a": "HELLO"}
    assert_fail(score({"type": "regex", "path": "/a", "pattern": "hello"}, output))
    assert_pass(score({"type": "regex", "path": "/a", "pattern": "hello", "flags": "i"}, output))


def test_regex_flag_m_changes_the_result() -> None:
    output = {"a": "one\ntwo\nthree"}
    assert_fail(score({"type": "regex", "path": "/a", "pattern": "^two$"}, output))
    assert_pass(score({"type": "regex", "path": "/a", "pattern": "^two$", "flags": "m"}, output))


def test_regex_flag_s_changes_the_result() -> None:
    output = {"a": "one\ntwo"}
    assert_fail(score({"type": "regex", "path": "/a", "pattern": "one.two"}, output))
    assert_pass(score({"type": "regex", "path": "/a", "pattern": "one.two", "flags": "s"}, output))


def test_regex_combined_flags() -> None:
    output = {"a": "x\nONE\nTWO"}
    definition = {"type": "regex", "path": "/a", "pattern": "^one.two$", "flags": "ims"}
    assert_pass(score(definition, output))
    assert_fail(score({**definition, "flags": "im"}, output))
    assert_fail(score({**definition, "flags": "is"}, output))
    assert_fail(score({**definition, "flags": "ms"}, output))


@pytest.mark.parametrize("pattern", ["(", "[a-", "a{2,1}", "*x"])
def test_invalid_regex_is_a_failed_score_never_an_exception(pattern: str) -> None:
    evidence = assert_fail(score({"type": "regex", "path": "/a", "pattern": pattern}, {"a": "("}))
    assert evidence


def test_pathological_regex_cannot_hang_and_fails() -> None:
    output = {"a": "a" * 40 + "!"}
    assert_fail(score({"type": "regex", "path": "/a", "pattern": "^(a+)+$"}, output))


def test_unknown_regex_flag_is_a_failed_score() -> None:
    assert_fail(score({"type": "regex", "path": "/a", "pattern": "a", "flags": "x"}, {"a": "a"}))


# --------------------------------------------------------------------------- attribute-equality


@pytest.mark.parametrize(
    ("left", "right"),
    [
        (1, 1.0),
        ({"x": [1, 2], "y": None}, {"y": None, "x": [1.0, 2]}),
        ("text", "text"),
        (None, None),
        (True, True),
        ([], []),
        ({}, {}),
    ],
)
def test_attribute_equality_equal_values(left: Any, right: Any) -> None:
    output = {"left": left, "right": right}
    definition = {"type": "attribute-equality", "left_path": "/left", "right_path": "/right"}
    assert_pass(score(definition, output))


@pytest.mark.parametrize(
    ("left", "right"),
    [
        (True, 1),
        (False, 0),
        (1, "1"),
        ([1, 2], [2, 1]),
        ({"x": 1}, {"x": 1, "y": 2}),
        (None, 0),
        (None, False),
        ("", None),
        ({"x": True}, {"x": 1}),
        ([1], 1),
    ],
)
def test_attribute_equality_unequal_values(left: Any, right: Any) -> None:
    output = {"left": left, "right": right}
    definition = {"type": "attribute-equality", "left_path": "/left", "right_path": "/right"}
    assert_fail(score(definition, output))


def test_attribute_equality_camel_case_keys() -> None:
    output = {"a": {"id": 7}, "b": {"id": 7.0}, "c": {"id": 8}}
    assert_pass(
        score({"type": "attribute-equality", "leftPath": "/a/id", "rightPath": "/b/id"}, output)
    )
    assert_fail(
        score({"type": "attribute-equality", "leftPath": "/a/id", "rightPath": "/c/id"}, output)
    )


@pytest.mark.parametrize(
    ("left_path", "right_path", "missing"),
    [("/nope", "/b", "/nope"), ("/a", "/gone", "/gone")],
)
def test_attribute_equality_missing_pointer(left_path: str, right_path: str, missing: str) -> None:
    definition = {"type": "attribute-equality", "left_path": left_path, "right_path": right_path}
    evidence = assert_fail(score(definition, {"a": 1, "b": 1}))
    assert evidence["reason"] == "missing_pointer"
    assert evidence["path"] == missing


# --------------------------------------------------------------------------- json-schema

PERSON = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"type": "integer", "minimum": 0}},
    "required": ["name"],
    "additionalProperties": False,
}


def test_json_schema_pass() -> None:
    assert_pass(score({"type": "json-schema", "schema": PERSON}, {"name": "Ada", "age": 36}))


def test_json_schema_required_names_the_missing_property() -> None:
    issues = schema_issues(score({"type": "json-schema", "schema": PERSON}, {"age": 3}))
    assert pairs(issues) == [("/name", "required")]


def test_json_schema_additional_properties_names_the_extra_property() -> None:
    output = {"name": "Ada", "extra": 1}
    issues = schema_issues(score({"type": "json-schema", "schema": PERSON}, output))
    assert pairs(issues) == [("/extra", "additionalProperties")]


def test_json_schema_one_issue_per_violation() -> None:
    output = {"age": "old", "extra": 1, "more": 2}
    issues = schema_issues(score({"type": "json-schema", "schema": PERSON}, output))
    assert pairs(issues) == [
        ("/age", "type"),
        ("/extra", "additionalProperties"),
        ("/more", "additionalProperties"),
        ("/name", "required"),
    ]


def test_json_schema_each_missing_required_property_is_an_issue() -> None:
    schema = {"type": "object", "required": ["a", "b", "c"]}
    issues = schema_issues(score({"type": "json-schema", "schema": schema}, {"b": 1}))
    assert pairs(issues) == [("/a", "required"), ("/c", "required")]


def test_json_schema_nested_paths_are_json_pointers() -> None:
    schema = {
        "type": "object",
        "properties": {
            "rows": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"n": {"type": "integer"}},
                    "required": ["id"],
                },
            }
        },
    }
    output = {"rows": [{"id": 1, "n": 1}, {"id": 2, "n": "x"}, {"n": 3}]}
    issues = schema_issues(score({"type": "json-schema", "schema": schema}, output))
    assert pairs(issues) == [("/rows/1/n", "type"), ("/rows/2/id", "required")]


def test_json_schema_property_names_are_escaped_in_paths() -> None:
    schema = {"type": "object", "required": ["a/b", "c~d"], "additionalProperties": False}
    schema["properties"] = {"a/b": {}, "c~d": {}}
    issues = schema_issues(score({"type": "json-schema", "schema": schema}, {"x/y": 1}))
    assert pairs(issues) == [
        ("/a~1b", "required"),
        ("/c~0d", "required"),
        ("/x~1y", "additionalProperties"),
    ]


@pytest.mark.parametrize(
    ("schema", "output", "keyword"),
    [
        ({"type": "integer", "minimum": 5}, 3, "minimum"),
        ({"type": "string", "pattern": "^a+$"}, "ab", "pattern"),
        ({"type": "string", "maxLength": 2}, "abc", "maxLength"),
        ({"enum": ["a", "b"]}, "c", "enum"),
        ({"const": 1}, 2, "const"),
        ({"oneOf": [{"type": "string"}, {"type": "integer"}]}, 1.5, "oneOf"),
        ({"anyOf": [{"type": "string"}, {"type": "null"}]}, 1, "anyOf"),
        ({"type": "array", "uniqueItems": True}, [1, 1], "uniqueItems"),
        ({"type": "array", "minItems": 2}, [1], "minItems"),
    ],
)
def test_json_schema_is_a_full_validator(schema: Any, output: Any, keyword: str) -> None:
    issues = schema_issues(score({"type": "json-schema", "schema": schema}, output))
    assert pairs(issues) == [("", keyword)]


def test_json_schema_ref_to_defs() -> None:
    schema = {
        "$defs": {"pos": {"type": "integer", "exclusiveMinimum": 0}},
        "type": "object",
        "properties": {"n": {"$ref": "#/$defs/pos"}},
    }
    assert_pass(score({"type": "json-schema", "schema": schema}, {"n": 2}))
    issues = schema_issues(score({"type": "json-schema", "schema": schema}, {"n": 0}))
    assert pairs(issues) == [("/n", "exclusiveMinimum")]


def test_json_schema_defaults_to_draft_2020_12() -> None:
    # prefixItems exists only in 2020-12.
    schema = {"type": "array", "prefixItems": [{"type": "integer"}]}
    issues = schema_issues(score({"type": "json-schema", "schema": schema}, ["x"]))
    assert pairs(issues) == [("/0", "type")]
    assert_pass(score({"type": "json-schema", "schema": schema}, [1, "x"]))


def test_json_schema_honours_dollar_schema() -> None:
    draft7 = "http://json-schema.org/draft-07/schema#"
    # Under draft-07, prefixItems is an unknown keyword (ignored) ...
    ignored = {"$schema": draft7, "type": "array", "prefixItems": [{"type": "integer"}]}
    assert_pass(score({"type": "json-schema", "schema": ignored}, ["x"]))
    # ... and array-form items is tuple validation.
    tuple_items = {"$schema": draft7, "type": "array", "items": [{"type": "integer"}]}
    issues = schema_issues(score({"type": "json-schema", "schema": tuple_items}, ["x"]))
    assert pairs(issues) == [("/0", "type")]
    assert_pass(score({"type": "json-schema", "schema": tuple_items}, [1, "x"]))


def test_json_schema_at_a_path() -> None:
    schema = {"type": "object", "required": ["id"]}
    assert_pass(
        score({"type": "json-schema", "path": "/data", "schema": schema}, {"data": {"id": 1}})
    )
    result = score({"type": "json-schema", "path": "/data", "schema": schema}, {"data": {}})
    issues = schema_issues(result)
    assert [i["reason"] for i in issues] == ["required"]


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "nonsense"},
        {"minimum": "five"},
        {"$schema": "https://example.invalid/unknown-draft", "type": "object"},
    ],
)
def test_invalid_schema_is_a_failed_score_never_an_exception(schema: Any) -> None:
    assert_fail(score({"type": "json-schema", "schema": schema}, {"a": 1}))


# --------------------------------------------------------------------------- pointers


def missing_pointer(path: str, output: Any) -> None:
    evidence = assert_fail(score({"type": "contains", "path": path, "value": ""}, output))
    assert evidence["reason"] == "missing_pointer"
    assert evidence["path"] == path


def test_missing_pointer_is_a_failed_score() -> None:
    missing_pointer("/nope", {"answer": "x"})
    missing_pointer("/answer/deeper", {"answer": "x"})
    missing_pointer("/a/b/c", {"a": {"b": None}})


ARRAY_DOC = {"items": ["zero", "one", "two"]}


def test_array_index_resolves() -> None:
    assert_pass(score({"type": "contains", "path": "/items/0", "value": "zero"}, ARRAY_DOC))
    assert_pass(score({"type": "contains", "path": "/items/2", "value": "two"}, ARRAY_DOC))
    assert_fail(score({"type": "contains", "path": "/items/1", "value": "two"}, ARRAY_DOC))


@pytest.mark.parametrize(
    "path",
    ["/items/01", "/items/00", "/items/-", "/items/1e0", "/items/3", "/items/-1", "/items/ 1"],
)
def test_bad_array_indices_are_missing(path: str) -> None:
    missing_pointer(path, ARRAY_DOC)


def test_non_ascii_digit_index_is_missing() -> None:
    missing_pointer("/items/\u0661", ARRAY_DOC)  # ARABIC-INDIC DIGIT ONE


def test_leading_zero_is_fine_as_an_object_key() -> None:
    assert_pass(
        score({"type": "contains", "path": "/01", "value": "lead"}, {"01": "lead", "1": "x"})
    )
    assert_pass(score({"type": "contains", "path": "/-", "value": "dash"}, {"-": "dash"}))


def test_tilde_escapes_decode_one_before_zero() -> None:
    output = {"~1": "tilde-one", "/": "slash", "~": "tilde", "a/b": "ab"}
    assert_pass(score({"type": "contains", "path": "/~01", "value": "tilde-one"}, output))
    assert_pass(score({"type": "contains", "path": "/~1", "value": "slash"}, output))
    assert_pass(score({"type": "contains", "path": "/~0", "value": "tilde"}, output))
    assert_pass(score({"type": "contains", "path": "/a~1b", "value": "ab"}, output))


def test_empty_pointer_is_the_whole_document() -> None:
    assert_pass(score({"type": "contains", "path": "", "value": "hello"}, "hello world"))


def test_empty_key_token() -> None:
    assert_pass(score({"type": "contains", "path": "/", "value": "empty"}, {"": "empty"}))


@pytest.mark.parametrize(
    ("path", "output"),
    [
        ("/keys", {"a": 1}),
        ("/__class__", {"a": 1}),
        ("/__len__", [1, 2]),
        ("/append", [1, 2]),
        ("/length", [1, 2]),
        ("/0", "string"),
        ("/real", 5),
        ("/a/0", {"a": "text"}),
    ],
)
def test_only_own_keys_are_followed(path: str, output: Any) -> None:
    missing_pointer(path, output)


@pytest.mark.parametrize("path", ["answer", "a/b", "/a~2", "/a~", "#/%zz"])
def test_invalid_pointer_is_a_failed_score(path: str) -> None:
    result = score({"type": "contains", "path": path, "value": "x"}, {"answer": "x"})
    evidence = assert_fail(result)
    assert evidence["reason"] == "invalid_pointer"


def test_invalid_pointer_in_attribute_equality_is_a_failed_score() -> None:
    definition = {"type": "attribute-equality", "left_path": "a", "right_path": "/a"}
    evidence = assert_fail(score(definition, {"a": 1}))
    assert evidence["reason"] == "invalid_pointer"


# --------------------------------------------------------------------------- definitions


@pytest.mark.parametrize("kind", ["nope", "Contains", "fuzzy-match", ""])
def test_unknown_type_raises_validation_error(kind: str) -> None:
    with pytest.raises(ValidationError):
        score({"type": kind, "value": "x"}, "x")


def test_definition_without_type_raises_validation_error() -> None:
    with pytest.raises(ValidationError):
        score({"path": "/a", "value": "x"}, {"a": "x"})


def test_non_mapping_definition_raises_validation_error() -> None:
    with pytest.raises(ValidationError):
        evaluate_deterministic_scorer("contains:x", {"input": None, "output": "x"})  # type: ignore[arg-type]


def test_scorer_does_not_mutate_definition_or_target() -> None:
    definition = {"type": "contains", "path": "/answer", "value": "x", "caseInsensitive": True}
    target = {"input": {"q": 1}, "output": {"answer": "X"}, "expected": "x"}
    before = (json.dumps(definition), json.dumps(target))
    assert_pass(evaluate_deterministic_scorer(definition, target))
    assert (json.dumps(definition), json.dumps(target)) == before


def test_results_are_fresh_dicts() -> None:
    first = score({"type": "contains", "value": "a"}, "a")
    first["score"] = 99
    assert score({"type": "contains", "value": "a"}, "a") == PASS


# --------------------------------------------------------------------------- the seed example


async def _run_seed(items: list[dict[str, Any]], answers: dict[tuple[str, str], str] | None):
    controller = AbortController()

    async def run_your_agent_or_model(prompt: str, input_: Any) -> dict[str, str]:
        return {"answer": f"{prompt} {json.dumps(input_)} change freeze"}

    async def run_candidate(candidate: Any, item: Any, signal: Any) -> Any:
        signal.throw_if_aborted()
        if answers is not None:
            return {"answer": answers[candidate["id"], item["id"]]}
        return await run_your_agent_or_model(candidate["prompt"], item["input"])

    async def scorer(target: dict[str, Any], signal: Any) -> dict[str, Any]:
        return evaluate_deterministic_scorer(
            {
                "type": "contains",
                "path": "/answer",
                "value": str(target["expected"]),
                "caseInsensitive": True,
            },
            target,
        )

    return await evaluate_prompt_candidates(
        candidates=[
            {"id": "brief", "prompt": "Answer in one short paragraph."},
            {"id": "detailed", "prompt": "Answer with details and citations."},
        ],
        items=items,
        run_candidate=run_candidate,
        scorer=scorer,
        signal=controller.signal,
    )


POLICY_1 = {
    "id": "policy-1",
    "input": {"question": "Can I deploy on Friday?"},
    "expected": "change freeze",
}


def test_seed_example_end_to_end() -> None:
    import asyncio

    scores = asyncio.run(_run_seed([POLICY_1], None))
    counts = {"pass": 1, "fail": 0, "needs-judge": 0, "no-output": 0, "error": 0}

    def passed(candidate: str) -> tuple[Result, ...]:
        check = CheckResult("scorer", "scorer", True, None, None)
        return (Result("policy-1", None, candidate, "pass", True, 1.0, "scorer", (check,)),)

    assert scores == [
        CandidateSummary("brief", 1, counts, 1.0, 1.0, passed("brief")),
        CandidateSummary("detailed", 1, counts, 1.0, 1.0, passed("detailed")),
    ]


def test_seed_example_ranking_follows_the_scores() -> None:
    import asyncio

    policy_2 = {"id": "policy-2", "input": {"question": "Hotfix?"}, "expected": "Change Freeze"}
    answers = {
        ("brief", "policy-1"): "Deploys pause during the CHANGE FREEZE.",
        ("brief", "policy-2"): "Yes, go ahead.",
        ("detailed", "policy-1"): "No: change freeze until Monday [1].",
        ("detailed", "policy-2"): "Only with approval; the change freeze still applies [2].",
    }
    scores = asyncio.run(_run_seed([POLICY_1, policy_2], answers))
    assert [s.candidate for s in scores] == ["detailed", "brief"]
    detailed, brief = scores
    assert (detailed.mean_score, detailed.pass_rate, detailed.total) == (1.0, 1.0, 2)
    assert (brief.mean_score, brief.pass_rate, brief.total) == (0.5, 0.5, 2)
    assert [(r.id, r.status, r.score, r.passed) for r in brief.results] == [
        ("policy-1", "pass", 1.0, True),
        ("policy-2", "fail", 0.0, False),
    ]
    # The scorer's evidence is carried by the one scorer check of each result.
    assert brief.results[0].checks[0].evidence is None
    evidence = brief.results[1].checks[0].evidence
    assert isinstance(evidence, dict) and evidence["reason"]
    assert [(c.text, c.op, c.passed) for c in brief.results[1].checks] == [
        ("scorer", "scorer", False)
    ]
