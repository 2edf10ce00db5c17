"""Text ops: equals, contains, icontains, starts-with, contains-any, contains-all, regex,
levenshtein."""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from assay.asserts._context import (
    CheckContext,
    OutputView,
    as_text,
    is_nan,
    json_equal,
    json_value_problem,
    strict_json_loads,
)
from assay.asserts._result import ArgumentProblem, Outcome, clip

_REGEX_FLAGS = {"i": "IGNORECASE", "m": "MULTILINE", "s": "DOTALL"}


def need(args: Mapping[str, Any], name: str = "value") -> Any:
    if name not in args or args[name] is None:
        raise ArgumentProblem(f"missing argument '{name}'")
    return args[name]


def _number_text(value: Any, name: str) -> str:
    """A number argument as the text a JSON output would hold: ``Infinity`` for inf (str()
    would give Python's ``inf``, which no JSON output contains). NaN is a bad argument."""
    if is_nan(value):
        raise ArgumentProblem(f"argument '{name}' is NaN, which matches nothing")
    return as_text(value)


def need_text(args: Mapping[str, Any], name: str = "value") -> str:
    """A non-empty string argument; a number is read as its JSON text (``42``, ``Infinity``)."""
    value = need(args, name)
    if isinstance(value, str):
        if not value:
            raise ArgumentProblem(f"argument '{name}' is empty (it would match any output)")
        return value
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ArgumentProblem(f"argument '{name}' must be a string")
    return _number_text(value, name)


def _item_text(item: Any) -> str:
    """One contains-any / contains-all list item, by the rules of a contains value; an empty
    string is returned as is (it is dropped)."""
    if isinstance(item, str):
        return item
    if isinstance(item, bool) or not isinstance(item, int | float):
        try:
            shown = as_text(item)
        except (TypeError, ValueError, RecursionError):
            shown = f"a {type(item).__name__}"
        message = f"argument 'value' lists {clip(shown, 40)}, not a string or a number"
        raise ArgumentProblem(message)
    return _number_text(item, "value")


# ------------------------------------------------------------------ promptfoo's quoted CSV form


class _CsvProblem(ValueError):
    """A quoted-CSV value that promptfoo rejects (so assay does too)."""


def _skip_space(text: str, i: int) -> int:
    while i < len(text) and text[i].isspace():
        i += 1
    return i


def _quoted_field(text: str, i: int) -> tuple[str, int]:
    """The field that opens with the quote at ``i``, and the index after its closing quote.

    Inside quotes ``\\"`` and ``""`` are a quote and ``\\\\`` a backslash; any other
    character, a comma or another backslash included, is kept as written.
    """
    out: list[str] = []
    i += 1
    while i < len(text):
        char = text[i]
        nxt = text[i + 1] if i + 1 < len(text) else ""
        if char == "\\" and nxt in ('"', "\\"):
            out.append(nxt)
            i += 2
        elif char == '"' and nxt == '"':
            out.append('"')
            i += 2
        elif char == '"':
            return "".join(out), i + 1
        else:
            out.append(char)
            i += 1
    raise _CsvProblem("an unterminated quoted item")


@lru_cache(maxsize=4096)
def split_values(text: str) -> tuple[str, ...]:
    """Split ``'"hello, world", universe'`` into its items as promptfoo's
    ``parseCommaSeparatedValues`` does.

    Whitespace around commas is dropped and repeated commas are ignored. An item that opens
    with ``"`` runs to its closing quote (commas and spaces inside are kept) and must be
    followed by a comma or the end; any other item runs to the next comma, quotes and all.
    Unlike promptfoo, empty items (``""`` too) are dropped, since an empty needle matches any
    output. Cached: the same few values are split for every output of a suite. An unterminated
    quote, or text after a closing quote before the comma, is a _CsvProblem.
    """
    if '"' not in text:  # the common case: a plain comma list
        return tuple(item for part in text.split(",") if (item := part.strip()))
    items: list[str] = []
    i = 0
    while True:
        while (i := _skip_space(text, i)) < len(text) and text[i] == ",":
            i += 1
        if i >= len(text):
            return tuple(item for item in items if item)
        if text[i] == '"':
            item, i = _quoted_field(text, i)
            i = _skip_space(text, i)
            if i < len(text) and text[i] != ",":
                raise _CsvProblem(f"text after the closing quote of {item!r}")
        else:
            end = text.find(",", i)
            end = len(text) if end == -1 else end
            item, i = text[i:end].strip(), end
        items.append(item)


def _text_list(args: Mapping[str, Any]) -> list[str]:
    value = need(args)
    if isinstance(value, str):
        # String form 'contains-any:a,b,"c, d"'.
        try:
            items = list(split_values(value))
        except _CsvProblem as exc:
            raise ArgumentProblem(f"argument 'value' has {exc}: {value!r}") from None
    elif isinstance(value, list):
        items = [text for text in map(_item_text, value) if text]
    else:
        raise ArgumentProblem("argument 'value' must be a list or a comma-separated string")
    if not items:
        raise ArgumentProblem("argument 'value' lists no strings")
    return items


# ------------------------------------------------------------------------------------ equals


def op_equals(view: OutputView, args: Mapping[str, Any], ctx: CheckContext) -> Outcome:
    if "value" not in args:
        raise ArgumentProblem("missing argument 'value'")
    expected = args["value"]  # null is a legitimate expected JSON value here
    problem = json_value_problem(expected)
    if problem is not None:
        raise ArgumentProblem(f"argument 'value' is not a JSON value: {problem}")
    exact = args.get("exact", False)
    if not isinstance(exact, bool):
        raise ArgumentProblem("argument 'exact' must be true or false")
    if exact:
        return _equals_exactly(view, expected)
    if view.is_text:
        if isinstance(expected, str):
            # Surrounding whitespace is not part of the answer (WikiEval compares stripped
            # text): a model's trailing newline must not fail 'equals: done'.
            if view.text().strip() == expected.strip():
                return True, None, None
            return False, "output does not equal the expected text", {"reason": "not_equal"}
        # A number, boolean, null, list or mapping is compared with the output read as JSON.
        ok, actual = view.as_json()
        if not ok:
            reason = "output does not equal the expected value: it is not valid JSON"
            return False, reason, {"reason": "not_json"}
    else:
        # A JSON value (the value at a pointer, or a JSON output): type-strict, as JSON Patch's
        # test op: "10" is not 10, "true" is not true, "null" is not null.
        actual = view.raw
    if json_equal(actual, expected):
        return True, None, None
    return False, "output does not equal the expected value", {"reason": "not_equal"}


def _equals_exactly(view: OutputView, expected: Any) -> Outcome:
    """promptfoo's ``equals`` (its ``src/assertions/equals.ts``): a list, a mapping or null is
    deep-equal to the output text parsed as JSON; anything else, as text (``String(value)``),
    is identical to the output text: nothing stripped, ``10`` is not ``10.0``."""
    actual = view.text()
    if expected is None or isinstance(expected, list | dict):
        try:
            parsed = strict_json_loads(actual)
        except (ValueError, RecursionError):
            return (
                False,
                "output does not equal the expected value: it is not valid JSON",
                {"reason": "not_json"},
            )
        if json_equal(parsed, expected):
            return True, None, None
        return False, "output does not equal the expected value", {"reason": "not_equal"}
    if actual == js_string(expected):
        return True, None, None
    return False, "output does not equal the expected text exactly", {"reason": "not_equal"}


def js_string(value: Any) -> str:
    """JavaScript's ``String(value)`` of a string, boolean or number."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    number = float(value)
    if number != number:
        return "NaN"
    if number in (float("inf"), float("-inf")):
        return "Infinity" if number > 0 else "-Infinity"
    if number.is_integer() and abs(number) < 1e21:
        return str(int(number))
    text = repr(number)
    if "e" in text:  # Python's 1e-07 is JavaScript's 1e-7
        mantissa, _, exponent = text.partition("e")
        power = int(exponent)
        text = f"{mantissa}e{'+' if power > 0 else '-'}{abs(power)}"
    return text


# ------------------------------------------------------------------------- contains family


def op_contains(view: OutputView, args: Mapping[str, Any], ctx: CheckContext) -> Outcome:
    needle = need_text(args)
    fold = args.get("case_insensitive")
    if is_nan(fold):  # truthy, but no more a yes than a no
        raise ArgumentProblem("argument 'case_insensitive' is NaN, not a boolean")
    text = view.text()
    ok = needle.casefold() in text.casefold() if fold else needle in text
    if ok:
        return True, None, None
    return False, f"output does not contain {needle!r}", {"reason": "substring_not_found"}


def op_icontains(view: OutputView, args: Mapping[str, Any], ctx: CheckContext) -> Outcome:
    needle = need_text(args)
    if needle.casefold() in view.text().casefold():
        return True, None, None
    reason = f"output does not contain {needle!r} (any case)"
    return False, reason, {"reason": "substring_not_found"}


def op_starts_with(view: OutputView, args: Mapping[str, Any], ctx: CheckContext) -> Outcome:
    prefix = need_text(args)
    if view.text().startswith(prefix):
        return True, None, None
    return False, f"output does not start with {prefix!r}", {"reason": "prefix_not_found"}


def op_contains_any(view: OutputView, args: Mapping[str, Any], ctx: CheckContext) -> Outcome:
    needles = _text_list(args)
    text = view.text()
    if any(n in text for n in needles):
        return True, None, None
    return False, f"output contains none of {needles!r}", {"reason": "no_substring_found"}


def op_contains_all(view: OutputView, args: Mapping[str, Any], ctx: CheckContext) -> Outcome:
    needles = _text_list(args)
    text = view.text()
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


def op_regex(view: OutputView, args: Mapping[str, Any], ctx: CheckContext) -> Outcome:
    pattern = need_text(args, "pattern" if "pattern" in args else "value")
    flags = args.get("flags")
    if flags is None:
        flags = ""
    elif not isinstance(flags, str):
        raise ArgumentProblem("argument 'flags' must be a string of i, m, s")
    compiled = compile_regex(pattern, flags)
    try:
        found = compiled.search(view.text(), timeout=ctx.regex_timeout)
    except TimeoutError:
        raise ArgumentProblem(
            f"regex {pattern!r} exceeded its {ctx.regex_timeout:g} s time budget",
            {"reason": "regex_timeout"},
        ) from None
    if found is not None:
        return True, None, None
    reason = f"output does not match /{pattern}/{flags}"
    return False, reason, {"reason": "pattern_not_matched"}


def op_levenshtein(view: OutputView, args: Mapping[str, Any], ctx: CheckContext) -> Outcome:
    from rapidfuzz.distance import Levenshtein

    target = need(args)
    # The target is text: a number has no one spelling to measure edits against.
    if not isinstance(target, str) or not target:
        raise ArgumentProblem("argument 'value' (the target) must be a non-empty string")
    limit = args.get("threshold", 5)
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
        raise ArgumentProblem("argument 'threshold' (max edit distance) must be an integer >= 0")
    # score_cutoff stops the computation early once the distance exceeds the limit.
    distance = Levenshtein.distance(view.text(), target, score_cutoff=limit)
    if distance <= limit:
        return True, None, None
    return False, f"edit distance exceeds {limit}", {"reason": "edit_distance", "threshold": limit}
