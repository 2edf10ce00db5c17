"""Text ops: equals, contains, icontains, starts-with, contains-any, contains-all, regex,
levenshtein; regex safety and large outputs."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from assay.asserts import DEFAULT_CONTEXT, CheckContext, CheckResult, OutputView, parse_assert
from assay.asserts import run_assert as _run


def check(raw: Any, output: Any, *, text: bool = True, ctx: CheckContext | None = None):
    return _run(parse_assert(raw), OutputView(output, text=text), ctx or DEFAULT_CONTEXT)


def assert_failed(result: CheckResult) -> None:
    assert result.passed is False
    assert isinstance(result.reason, str)
    assert result.reason


# --------------------------------------------------------------------------- equals


def test_equals_string_is_exact_but_for_surrounding_whitespace() -> None:
    assert check("equals:Paris", "Paris").passed is True
    assert_failed(check("equals:Paris", "paris"))
    assert check("equals:Paris", "Paris\n").passed is True  # WikiEval strips both sides
    assert check("equals:Paris", " Paris").passed is True
    assert_failed(check("equals:Paris", "Paris."))
    assert_failed(check("equals:Paris", "Par is"))


def test_equals_empty_string() -> None:
    assert check({"op": "equals", "value": ""}, "").passed is True
    assert check({"op": "equals", "value": ""}, " ").passed is True
    assert_failed(check({"op": "equals", "value": ""}, " x"))


def test_equals_json_text_against_json_value() -> None:
    value = {"a": 1, "b": [1, 2, {"c": None}]}
    assert check({"op": "equals", "value": value}, '{"b": [1, 2.0, {"c": null}], "a": 1}').passed
    assert_failed(check({"op": "equals", "value": value}, '{"a": 1, "b": [2, 1, {"c": null}]}'))
    assert_failed(check({"op": "equals", "value": value}, '{"a": 1}'))


def test_equals_json_value_output() -> None:
    out = {"x": [1, 2], "y": "z"}
    assert check({"op": "equals", "value": {"y": "z", "x": [1.0, 2]}}, out, text=False).passed
    assert_failed(check({"op": "equals", "value": {"y": "z"}}, out, text=False))


def test_equals_numbers_and_booleans() -> None:
    assert check({"op": "equals", "value": 1}, "1.0").passed is True
    assert check({"op": "equals", "value": 1.0}, 1, text=False).passed is True
    assert_failed(check({"op": "equals", "value": True}, "1"))
    assert_failed(check({"op": "equals", "value": 1}, "true"))
    assert_failed(check({"op": "equals", "value": False}, 0, text=False))
    assert check({"op": "equals", "value": True}, "true").passed is True


def test_equals_list_value() -> None:
    assert check({"op": "equals", "value": [1, "a"]}, '[1, "a"]').passed is True
    assert_failed(check({"op": "equals", "value": [1, "a"]}, '["a", 1]'))


def test_equals_negated() -> None:
    assert check("not-equals:Paris", "London").passed is True
    result = check("not-equals:Paris", "Paris")
    assert_failed(result)
    assert result.evidence == {"reason": "negated"}


# --------------------------------------------------------------------------- contains family


def test_contains_is_case_sensitive() -> None:
    assert check("contains:Paris", "I think Paris.").passed is True
    assert_failed(check("contains:Paris", "i think paris."))


def test_contains_case_insensitive_argument() -> None:
    raw = {"op": "contains", "value": "PARIS", "caseInsensitive": True}
    assert check(raw, "i think paris.").passed is True
    raw = {"op": "contains", "value": "PARIS", "case_insensitive": True}
    assert check(raw, "i think paris.").passed is True
    raw = {"op": "contains", "value": "PARIS", "case_insensitive": False}
    assert_failed(check(raw, "i think paris."))


def test_contains_on_json_value_output_uses_compact_json() -> None:
    out = {"a": [1, 2]}
    assert check('contains:"a":[1,2]', out, text=False).passed is True
    assert check({"op": "contains", "value": 2}, out, text=False).passed is True


def test_contains_number_value() -> None:
    assert check({"op": "contains", "value": 42}, "the answer is 42").passed is True
    assert_failed(check({"op": "contains", "value": 42}, "the answer is 43"))


def test_contains_reason_names_the_needle() -> None:
    result = check("contains:needle", "haystack")
    assert_failed(result)
    assert "needle" in (result.reason or "")


def test_icontains() -> None:
    assert check("icontains:HeLLo", "say hello").passed is True
    assert check("icontains:straße", "STRASSE").passed is True  # casefold, not lower
    assert_failed(check("icontains:bye", "say hello"))
    assert check("not-icontains:bye", "say hello").passed is True
    assert_failed(check("not-icontains:HELLO", "say hello"))


def test_starts_with() -> None:
    assert check("starts-with:Dear", "Dear Sir").passed is True
    assert_failed(check("starts-with:Dear", " Dear Sir"))
    assert_failed(check("starts-with:Dear", "dear Sir"))
    assert check("not-starts-with:Dear", "Hi").passed is True
    assert_failed(check("not-starts-with:Dear", "Dear Sir"))


def test_contains_any_string_and_list_forms() -> None:
    assert check("contains-any:red, green,blue", "I like green").passed is True
    assert check({"op": "contains-any", "value": ["red", "green"]}, "green").passed is True
    result = check("contains-any:red,blue", "I like green")
    assert_failed(result)
    assert check("not-contains-any:red,blue", "I like green").passed is True
    assert_failed(check("not-contains-any:red,green", "I like green"))


def test_contains_any_list_of_numbers() -> None:
    assert check({"op": "contains-any", "value": [41, 42]}, "answer: 42").passed is True


def test_contains_all() -> None:
    assert check("contains-all:a,b,c", "c b a").passed is True
    assert check({"op": "contains-all", "value": ["x", "y"]}, "x and y").passed is True
    result = check({"op": "contains-all", "value": ["x", "y", "z"]}, "just x")
    assert_failed(result)
    assert result.evidence == {"reason": "missing_substrings"}
    assert "y" in (result.reason or "")
    assert "z" in (result.reason or "")
    assert check({"op": "not-contains-all", "value": ["x", "y"]}, "just x").passed is True
    assert_failed(check({"op": "not-contains-all", "value": ["x", "y"]}, "x y"))


# --------------------------------------------------------------------------- regex


def test_regex_search_semantics() -> None:
    assert check("regex:\\d{3}", "call 555 now").passed is True
    assert check("regex:^call", "call 555 now").passed is True
    assert_failed(check("regex:^now", "call 555 now"))


def test_regex_anchors_and_colons() -> None:
    assert check("regex:^a:b$", "a:b").passed is True
    assert_failed(check("regex:^a:b$", "a:bc"))


def test_regex_pattern_argument() -> None:
    assert check({"op": "regex", "pattern": "^x+$"}, "xxx").passed is True
    assert_failed(check({"op": "regex", "pattern": "^x+$"}, "xyx"))


@pytest.mark.parametrize(
    ("flags", "pattern", "output", "passed"),
    [
        ("", "hello", "HELLO", False),
        ("i", "hello", "HELLO", True),
        ("", "^b$", "a\nb", False),
        ("m", "^b$", "a\nb", True),
        ("", "a.b", "a\nb", False),
        ("s", "a.b", "a\nb", True),
        ("ims", "^A.B$", "x\na\nb", True),
    ],
)
def test_regex_flags(flags: str, pattern: str, output: str, passed: bool) -> None:
    result = check({"op": "regex", "value": pattern, "flags": flags}, output)
    assert result.passed is passed


def test_regex_negated() -> None:
    assert check("not-regex:^\\d+$", "abc").passed is True
    result = check("not-regex:^\\d+$", "123")
    assert_failed(result)
    assert result.evidence == {"reason": "negated"}


@pytest.mark.parametrize("pattern", ["(", "a[", "*a", "a{2,1}", "(?P<1x>a)"])
@pytest.mark.parametrize("op", ["regex", "not-regex"])
def test_invalid_regex_fails_with_reason(op: str, pattern: str) -> None:
    for output in ("", "a", "(", "aa"):
        result = check({"op": op, "value": pattern}, output)
        assert_failed(result)
        assert "regex" in (result.reason or "").lower()


@pytest.mark.parametrize("op", ["regex", "not-regex"])
def test_unknown_regex_flag_fails(op: str) -> None:
    result = check({"op": op, "value": "a", "flags": "g"}, "a")
    assert_failed(result)
    assert "'g'" in (result.reason or "")
    result = check({"op": op, "value": "a", "flags": "g"}, "b")
    assert_failed(result)


@pytest.mark.parametrize("op", ["regex", "not-regex"])
def test_catastrophic_regex_is_time_bounded(op: str) -> None:
    text = "a" * 50_000 + "b"
    started = time.monotonic()
    result = check({"op": op, "value": "(a+)+$"}, text)
    elapsed = time.monotonic() - started
    assert_failed(result)
    assert "time budget" in (result.reason or "")
    assert result.evidence == {"reason": "regex_timeout"}
    # Generous sanity bound only: this is not a speed test.
    assert elapsed < 5


def test_regex_timeout_comes_from_the_context() -> None:
    ctx = CheckContext(regex_timeout=0.05)
    result = check({"op": "regex", "value": "(a|aa)+$"}, "a" * 50_000 + "b", ctx=ctx)
    assert_failed(result)
    assert "0.05" in (result.reason or "")


def test_regex_on_json_value_output() -> None:
    assert check('regex:^\\{"a":1\\}$', {"a": 1}, text=False).passed is True


# --------------------------------------------------------------------------- levenshtein


def test_levenshtein_threshold_is_max_edit_distance() -> None:
    # kitten -> sitting is 3 edits.
    assert check({"op": "levenshtein", "value": "kitten", "threshold": 3}, "sitting").passed
    assert check({"op": "levenshtein", "value": "kitten", "threshold": 4}, "sitting").passed
    result = check({"op": "levenshtein", "value": "kitten", "threshold": 2}, "sitting")
    assert_failed(result)
    assert result.evidence == {"reason": "edit_distance", "threshold": 2}


def test_levenshtein_threshold_zero_means_exact() -> None:
    assert check({"op": "levenshtein", "value": "abc", "threshold": 0}, "abc").passed is True
    assert_failed(check({"op": "levenshtein", "value": "abc", "threshold": 0}, "abd"))


def test_levenshtein_default_threshold_is_five() -> None:
    assert check("levenshtein:hello", "hello").passed is True
    assert check("levenshtein:hello", "hello!!").passed is True  # distance 2
    assert_failed(check("levenshtein:hello", "hello world"))  # distance 6


def test_levenshtein_default_threshold_boundary() -> None:
    assert check("levenshtein:abc", "abc12345").passed is True  # distance 5
    assert_failed(check("levenshtein:abc", "abc123456"))  # distance 6


def test_levenshtein_negated() -> None:
    raw = {"op": "not-levenshtein", "value": "kitten", "threshold": 1}
    assert check(raw, "sitting").passed is True
    assert_failed(check(raw, "kitten"))


@pytest.mark.parametrize("threshold", [-1, 1.5, "3", True, None, [1]])
@pytest.mark.parametrize("op", ["levenshtein", "not-levenshtein"])
def test_levenshtein_bad_threshold(op: str, threshold: Any) -> None:
    for output in ("kitten", "sitting", "something else entirely"):
        result = check({"op": op, "value": "kitten", "threshold": threshold}, output)
        assert_failed(result)
        assert "threshold" in (result.reason or "")


# --------------------------------------------------------------------------- large outputs

BIG = 10 * 1024 * 1024
# A generous regex budget so the large-output tests never depend on machine speed.
SLOW_OK = CheckContext(regex_timeout=60.0)


def test_ten_megabyte_contains() -> None:
    text = "x" * BIG + "NEEDLE"
    assert check("contains:NEEDLE", text).passed is True
    assert check("not-contains:HAY", text).passed is True
    assert check("icontains:needle", text).passed is True
    assert_failed(check("contains:HAY", text))


def test_ten_megabyte_regex() -> None:
    text = "x" * BIG + "NEEDLE 42"
    assert check("regex:NEEDLE \\d+$", text, ctx=SLOW_OK).passed is True
    assert_failed(check("regex:^y", text, ctx=SLOW_OK))


def test_ten_megabyte_is_json() -> None:
    text = json.dumps({"items": ["y" * 1000] * (BIG // 1000)})
    assert len(text) > BIG
    assert check("is-json", text).passed is True
    assert_failed(check("is-json", text[:-1]))
