"""JSON ops: is-json, contains-json, json-schema, attribute-equality."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..pointer import MISSING, PointerSyntaxError, resolve
from ._context import CheckContext, OutputView, json_equal
from ._result import ArgumentProblem, Outcome
from ._schema import compile_schema, schema_issues
from ._text import need

# contains-json tries a decode at each '{' or '['; this caps the work on huge outputs.
_MAX_JSON_STARTS = 2000


def _schema_arg(args: Mapping[str, Any], name: str = "value") -> Any:
    schema = args.get("schema", args.get(name))
    if isinstance(schema, str):
        try:
            schema = json.loads(schema)
        except ValueError as exc:
            raise ArgumentProblem(f"the schema is not valid JSON: {exc}") from None
    return schema


def op_is_json(view: OutputView, args: Mapping[str, Any], ctx: CheckContext) -> Outcome:
    ok, _ = view.as_json()
    return ok, None if ok else "output is not valid JSON", None


def _find_json(text: str) -> tuple[bool, Any]:
    decoder = json.JSONDecoder()
    starts = 0
    i = 0
    while starts < _MAX_JSON_STARTS:
        brace, bracket = text.find("{", i), text.find("[", i)
        candidates = [p for p in (brace, bracket) if p != -1]
        if not candidates:
            break
        i = min(candidates)
        starts += 1
        try:
            found, _end = decoder.raw_decode(text, i)
            return True, found
        except (ValueError, RecursionError):
            i += 1
    return False, None


def op_contains_json(view: OutputView, args: Mapping[str, Any], ctx: CheckContext) -> Outcome:
    value = view.raw
    schema = _schema_arg(args) if args.get("schema", args.get("value")) is not None else None
    if schema is not None:
        compile_schema(schema, ctx.schema_registry)  # a bad schema fails even when negated
    if isinstance(value, dict | list):
        found, parsed = True, value
    elif isinstance(value, str):
        found, parsed = _find_json(value)
    else:
        found, parsed = False, None
    if not found:
        return False, "output contains no JSON object or array", None
    if schema is not None:
        issues = schema_issues(schema, parsed, ctx.schema_registry)
        if issues:
            evidence = {"reason": "schema_validation_failed", "issues": issues}
            return False, f"embedded JSON violates the schema ({len(issues)} issues)", evidence
    return True, None, None


def op_json_schema(view: OutputView, args: Mapping[str, Any], ctx: CheckContext) -> Outcome:
    schema = _schema_arg(args)
    if schema is None:
        raise ArgumentProblem("missing argument 'value' (the schema)")
    ok, parsed = view.as_json()
    if not ok:
        return False, "output is not valid JSON", {"reason": "not_json"}
    issues = schema_issues(schema, parsed, ctx.schema_registry)
    if issues:
        first = issues[0]
        reason = f"schema violation at '{first['path']}' ({first['reason']})"
        if len(issues) > 1:
            reason += f" and {len(issues) - 1} more"
        return False, reason, {"reason": "schema_validation_failed", "issues": issues}
    return True, None, None


def op_attribute_equality(view: OutputView, args: Mapping[str, Any], ctx: CheckContext) -> Outcome:
    left_path, right_path = need(args, "left_path"), need(args, "right_path")
    ok, doc = view.as_json()
    if not ok:
        return False, "output is not valid JSON", {"reason": "not_json"}
    try:
        left, right = resolve(doc, left_path), resolve(doc, right_path)
    except PointerSyntaxError as exc:
        raise ArgumentProblem(str(exc), {"reason": "invalid_pointer"}) from None
    for path, found in ((left_path, left), (right_path, right)):
        if found is MISSING:
            return False, f"no value at {path}", {"reason": "missing_pointer", "path": path}
    if json_equal(left, right):
        return True, None, None
    evidence = {"reason": "attribute_mismatch", "left_path": left_path, "right_path": right_path}
    return False, f"{left_path} differs from {right_path}", evidence
