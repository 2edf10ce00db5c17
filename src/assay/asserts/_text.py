"""Text ops: equals, contains, icontains, starts-with, contains-any, contains-all, regex,
levenshtein."""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from assay.asserts._context import CheckContext, OutputView, as_text, json_equal
from assay.asserts._result import ArgumentProblem, Outcome

_REGEX_FLAGS = {"i": "IGNORECASE", "m": "MULTILINE", "s": "DOTALL"}


def need(args: Mapping[str, Any], name: str = "value") -> Any:
    if name not in args or args[name] is None:
        raise ArgumentProblem(f"missing argument '{name}'")
    return args[name]


_SCALAR = (str, int, float)


def need_text(args: Mapping[str, Any], name: str = "value") -> str:
    value = need(args, name)
    if isinstance(value, str):
        if not value:
            raise ArgumentProblem(f"argument '{name}' is empty (it would match any output)")
        return value
    if isinstance(value, bool) or not isinstance(value, _SCALAR):
        raise ArgumentProblem(f"argument '{name}' must be a string")
    return str(value)


def _text_list(args: Mapping[str, Any]) -> list[str]:
    value = need(args)
    if isinstance(value, str):
        # String form 'contains-any:a,b,c'.
        items = [part.strip() for part in value.split(",")]
    elif isinstance(value, list):
        items = [as_text(v) for v in value]
    else:
        raise ArgumentProblem("argument 'value' must be a list or a comma-separated string")
    items = [item for item in items if item]
    if not items:
        raise ArgumentProblem("argument 'value' lists no strings")
    return items


def _as_json_value(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def op_equals(view: OutputView, args: Mapping[str, Any], ctx: CheckContext) -> Outcome:
    value = view.raw
    if "value" not in args:
        raise ArgumentProblem("missing argument 'value'")
    expected = args["value"]  # null is a legitimate expected JSON value here
    if isinstance(value, str) and isinstance(expected, str):
        ok = value == expected
    else:
        ok = json_equal(_as_json_value(value), _as_json_value(expected))
    return ok, None if ok else "output does not equal the expected value", None


def op_contains(view: OutputView, args: Mapping[str, Any], ctx: CheckContext) -> Outcome:
    value = view.raw
    needle = need_text(args)
    text = as_text(value)
    ok = needle.casefold() in text.casefold() if args.get("case_insensitive") else needle in text
    return ok, None if ok else f"output does not contain {needle!r}", None


def op_icontains(view: OutputView, args: Mapping[str, Any], ctx: CheckContext) -> Outcome:
    value = view.raw
    needle = need_text(args)
    ok = needle.casefold() in as_text(value).casefold()
    return ok, None if ok else f"output does not contain {needle!r} (any case)", None


def op_starts_with(view: OutputView, args: Mapping[str, Any], ctx: CheckContext) -> Outcome:
    value = view.raw
    prefix = need_text(args)
    ok = as_text(value).startswith(prefix)
    return ok, None if ok else f"output does not start with {prefix!r}", None


def op_contains_any(view: OutputView, args: Mapping[str, Any], ctx: CheckContext) -> Outcome:
    value = view.raw
    needles = _text_list(args)
    text = as_text(value)
    ok = any(n in text for n in needles)
    return ok, None if ok else f"output contains none of {needles!r}", None


def op_contains_all(view: OutputView, args: Mapping[str, Any], ctx: CheckContext) -> Outcome:
    value = view.raw
    needles = _text_list(args)
    text = as_text(value)
    missing = [n for n in needles if n not in text]
    if missing:
        return False, f"output lacks {missing!r}", {"reason": "missing_substrings"}
    return True, None, None


@lru_cache(maxsize=1024)
def compile_regex(pattern: str, flags: str) -> Any:
    """Compile with the ``regex`` engine, which supports a per-search timeout."""
    import regex

    bits = 0
    for flag in flags:
        if flag not in _REGEX_FLAGS:
            raise ArgumentProblem(f"unknown regex flag {flag!r} (use i, m, s)")
        bits |= getattr(regex, _REGEX_FLAGS[flag])
    try:
        return regex.compile(pattern, bits | regex.VERSION0)
    except (regex.error, OverflowError, RecursionError, ValueError) as exc:
        raise ArgumentProblem(f"invalid regex {pattern!r}: {exc}") from None


def regex_search(pattern: str, flags: str, text: str, timeout: float) -> bool:
    """Search semantics, bounded in time; a timeout is an :class:`ArgumentProblem`."""
    compiled = compile_regex(pattern, flags)
    try:
        return compiled.search(text, timeout=timeout) is not None
    except TimeoutError:
        raise ArgumentProblem(
            f"regex {pattern!r} exceeded its {timeout:g} s time budget", {"reason": "regex_timeout"}
        ) from None


def op_regex(view: OutputView, args: Mapping[str, Any], ctx: CheckContext) -> Outcome:
    value = view.raw
    pattern = need_text(args, "pattern" if "pattern" in args else "value")
    flags = args.get("flags") or ""
    if not isinstance(flags, str):
        raise ArgumentProblem("argument 'flags' must be a string of i, m, s")
    ok = regex_search(pattern, flags, as_text(value), ctx.regex_timeout)
    return ok, None if ok else f"output does not match /{pattern}/{flags}", None


def op_levenshtein(view: OutputView, args: Mapping[str, Any], ctx: CheckContext) -> Outcome:
    value = view.raw
    from rapidfuzz.distance import Levenshtein

    target = need_text(args)
    limit = args.get("threshold", 5)
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
        raise ArgumentProblem("argument 'threshold' (max edit distance) must be an integer >= 0")
    # score_cutoff stops the computation early once the distance exceeds the limit.
    distance = Levenshtein.distance(as_text(value), target, score_cutoff=limit)
    ok = distance <= limit
    reason = None if ok else f"edit distance exceeds {limit}"
    return ok, reason, None if ok else {"reason": "edit_distance", "threshold": limit}
