"""JSON ops: is-json, contains-json, json-schema, attribute-equality.

Arguments are validated before the output is looked at, so a broken assert fails whatever the
output (and whatever the negation).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from functools import lru_cache
from typing import Any

from assay.asserts._context import STRICT_DECODER, CheckContext, OutputView, json_equal
from assay.asserts._pointer import MISSING, PointerSyntaxError, parse_pointer, resolve
from assay.asserts._result import ArgumentProblem, Outcome
from assay.asserts._schema import compile_schema, validator_issues
from assay.asserts._text import need
from assay.errors import AssayError

# contains-json tries a decode at each '{' or '['; this caps the work on huge outputs.
_MAX_JSON_STARTS = 2000
_JSON_START = re.compile(r"[{\[]")


@lru_cache(maxsize=1024)
def _parse_schema_text(text: str) -> Any:
    """A schema written as JSON text or, as promptfoo allows, YAML text. Cached: the same
    schema text is read for every output of a suite (the result is only ever read)."""
    try:
        return STRICT_DECODER.decode(text)  # JSON first: YAML 1.1 would read 1e3 as a string
    except (ValueError, RecursionError):
        pass
    from assay._yaml import yaml_load  # only a schema written as YAML needs the YAML loader

    try:
        schema = yaml_load(text, "the schema", error=AssayError)
    except AssayError as exc:
        raise ArgumentProblem(f"the schema is neither JSON nor YAML: {exc.message}") from None
    if not isinstance(schema, dict | bool):
        raise ArgumentProblem(
            f"the schema text reads as a {type(schema).__name__}, not a mapping or a boolean"
        )
    return schema


def _schema_arg(args: Mapping[str, Any], ctx: CheckContext) -> Any:
    """The validator for the schema argument (parsed if written as JSON or YAML text)."""
    schema = args.get("schema", args.get("value"))
    if schema is None:
        raise ArgumentProblem("missing argument 'value' (the schema)")
    if isinstance(schema, str):
        schema = _parse_schema_text(schema)
    return compile_schema(schema, ctx.schema_registry)


def op_is_json(view: OutputView, args: Mapping[str, Any], ctx: CheckContext) -> Outcome:
    ok, _ = view.as_json()
    if ok:
        return True, None, None
    return False, "output is not valid JSON", {"reason": "not_json"}


def _embedded_json(text: str) -> Iterator[Any]:
    """Every JSON object or array embedded in ``text``, left to right (bounded work)."""
    i = 0
    for _ in range(_MAX_JSON_STARTS):
        start = _JSON_START.search(text, i)
        if start is None:
            return
        try:
            found, i = STRICT_DECODER.raw_decode(text, start.start())
        except (ValueError, RecursionError):
            i = start.start() + 1
            continue
        yield found


def op_contains_json(view: OutputView, args: Mapping[str, Any], ctx: CheckContext) -> Outcome:
    has_schema = args.get("schema", args.get("value")) is not None
    validator = _schema_arg(args, ctx) if has_schema else None
    value = view.raw
    if isinstance(value, str):
        found: Iterable[Any] = _embedded_json(value)
    else:
        found = [value] if isinstance(value, dict | list) else []
    first_issues: list[dict[str, Any]] | None = None
    for candidate in found:
        if validator is None:
            return True, None, None
        issues = validator_issues(validator, candidate)
        if not issues:
            return True, None, None  # any embedded JSON that satisfies the schema will do
        if first_issues is None:
            first_issues = issues
    if first_issues is None:
        return False, "output contains no JSON object or array", {"reason": "no_json_found"}
    evidence = {"reason": "schema_validation_failed", "issues": first_issues}
    return False, "no embedded JSON satisfies the schema", evidence


def op_json_schema(view: OutputView, args: Mapping[str, Any], ctx: CheckContext) -> Outcome:
    validator = _schema_arg(args, ctx)
    ok, parsed = view.as_json()
    if not ok:
        return False, "output is not valid JSON", {"reason": "not_json"}
    issues = validator_issues(validator, parsed)
    if issues:
        first = issues[0]
        reason = f"schema violation at '{first['path']}' ({first['reason']})"
        if len(issues) > 1:
            reason += f" and {len(issues) - 1} more"
        return False, reason, {"reason": "schema_validation_failed", "issues": issues}
    return True, None, None


def _pointer_arg(args: Mapping[str, Any], name: str) -> str:
    pointer = need(args, name)
    if not isinstance(pointer, str):
        raise ArgumentProblem(
            f"argument '{name}' must be a JSON Pointer string",
            {"reason": "invalid_pointer", "path": str(pointer)},
        )
    try:
        parse_pointer(pointer)
    except PointerSyntaxError as exc:
        raise ArgumentProblem(str(exc), {"reason": "invalid_pointer", "path": pointer}) from None
    return pointer


def op_attribute_equality(view: OutputView, args: Mapping[str, Any], ctx: CheckContext) -> Outcome:
    left_path, right_path = _pointer_arg(args, "left_path"), _pointer_arg(args, "right_path")
    ok, doc = view.as_json()
    if not ok:
        raise ArgumentProblem(
            "output is not valid JSON, so its attributes cannot be compared", {"reason": "not_json"}
        )
    left, right = resolve(doc, left_path), resolve(doc, right_path)
    for path, found in ((left_path, left), (right_path, right)):
        if found is MISSING:
            # A missing attribute is not "unequal": it fails closed, negated or not.
            raise ArgumentProblem(
                f"no value at {path}", {"reason": "missing_pointer", "path": path}
            )
    if json_equal(left, right):
        return True, None, None
    # Both values, as the TypeScript helper reports them (run records drop evidence).
    evidence = {
        "reason": "attribute_mismatch",
        "left_path": left_path,
        "right_path": right_path,
        "left": left,
        "right": right,
    }
    return False, f"{left_path} differs from {right_path}", evidence
