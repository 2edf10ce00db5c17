"""The op table and the one place where paths, negation and bad arguments are handled."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from assay.asserts._context import DEFAULT_CONTEXT, CheckContext, OutputView
from assay.asserts._json import op_attribute_equality, op_contains_json, op_is_json, op_json_schema
from assay.asserts._pointer import MISSING, PointerSyntaxError, resolve
from assay.asserts._result import ArgumentProblem, CheckResult, Outcome
from assay.asserts._spec import AssertSpec
from assay.asserts._sql import op_is_sql, op_is_sql_ish
from assay.asserts._text import (
    op_contains,
    op_contains_all,
    op_contains_any,
    op_equals,
    op_icontains,
    op_levenshtein,
    op_regex,
    op_starts_with,
)

Handler = Callable[[OutputView, Mapping[str, Any], CheckContext], Outcome]

# op -> (handler, the arguments it accepts besides 'path').
OPS: Final[dict[str, tuple[Handler, frozenset[str]]]] = {
    "equals": (op_equals, frozenset({"value"})),
    "contains": (op_contains, frozenset({"value", "case_insensitive"})),
    "icontains": (op_icontains, frozenset({"value"})),
    "starts-with": (op_starts_with, frozenset({"value"})),
    "contains-any": (op_contains_any, frozenset({"value"})),
    "contains-all": (op_contains_all, frozenset({"value"})),
    "regex": (op_regex, frozenset({"value", "pattern", "flags"})),
    "is-json": (op_is_json, frozenset()),
    "contains-json": (op_contains_json, frozenset({"value", "schema"})),
    "json-schema": (op_json_schema, frozenset({"value", "schema"})),
    "attribute-equality": (op_attribute_equality, frozenset({"left_path", "right_path"})),
    "is-sql": (op_is_sql, frozenset({"value", "dialect"})),
    "is-sql-ish": (op_is_sql_ish, frozenset()),
    "levenshtein": (op_levenshtein, frozenset({"value", "threshold"})),
}

# Listed in the design as an op of its own; it is the negation of contains.
KNOWN_OPS: Final[tuple[str, ...]] = tuple(sorted([*OPS, "not-contains"]))

_IGNORED_ARGS = frozenset({"description", "name"})


def _failed(spec: AssertSpec, reason: str, evidence: dict[str, Any] | None = None) -> CheckResult:
    return CheckResult(spec.text, spec.full_op, False, reason, evidence)


def run_assert(
    spec: AssertSpec, output: OutputView, ctx: CheckContext = DEFAULT_CONTEXT
) -> CheckResult:
    """Run one assert on one output. Never raises for a bad assert: it fails closed."""
    entry = OPS.get(spec.op)
    if entry is None:
        return _failed(spec, f"unknown op '{spec.full_op}'", {"reason": "unknown_op"})
    handler, accepted = entry
    unknown = [k for k in spec.args if k not in accepted and k != "path" and k not in _IGNORED_ARGS]
    if unknown:
        return _failed(spec, f"unknown argument(s) {sorted(unknown)} for op '{spec.op}'")
    view = output
    path = spec.args.get("path")
    if path is not None:
        if not isinstance(path, str):
            return _failed(spec, "argument 'path' must be a JSON Pointer string")
        ok, document = output.as_json()
        if not ok:
            return _failed(
                spec,
                f"output is not JSON, so path {path} cannot be read",
                {"reason": "not_json", "path": path},
            )
        try:
            found = resolve(document, path)
        except PointerSyntaxError as exc:
            return _failed(spec, str(exc), {"reason": "invalid_pointer", "path": path})
        if found is MISSING:
            return _failed(spec, f"no value at {path}", {"reason": "missing_pointer", "path": path})
        view = OutputView(found, text=False)
    try:
        passed, reason, evidence = handler(view, spec.args, ctx)
    except ArgumentProblem as problem:
        return _failed(spec, problem.reason, problem.evidence or {"reason": "invalid_argument"})
    if spec.negate:
        if passed:
            return _failed(
                spec,
                f"output satisfies '{spec.op}', which this assert forbids",
                {"reason": "negated"},
            )
        return spec.passed
    if passed:
        return spec.passed
    return CheckResult(spec.text, spec.full_op, False, reason, evidence)
