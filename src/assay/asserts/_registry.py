"""The op table and the one place where paths, negation and bad arguments are handled.

The table is open: after a miss among the built-in ops, an op named ``pkg/name`` is looked up
among the ops registered in-process (:func:`register_op`) and then among the installed
``assay.ops`` entry points (:mod:`assay.plugins`). Every op, built-in or not, goes through
the same path, argument and negation handling below.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, Final

from assay.asserts._context import DEFAULT_CONTEXT, CheckContext, OutputView, as_text
from assay.asserts._graded import op_similar
from assay.asserts._groups import aggregate, check_score
from assay.asserts._json import op_attribute_equality, op_contains_json, op_is_json, op_json_schema
from assay.asserts._perf import op_cost, op_latency
from assay.asserts._pointer import MISSING, PointerSyntaxError, resolve
from assay.asserts._python import op_python
from assay.asserts._result import ArgumentProblem, CheckResult, Outcome, clip
from assay.asserts._scripts import negated, negated_pass
from assay.asserts._spec import (
    GROUP_OPS,
    JUDGE_OP,
    NOT_PREFIX,
    SCORED_OPS,
    AssertSpec,
    parse_assert,
)
from assay.asserts._sql import op_is_sql, op_is_sql_ish
from assay.asserts._stop import op_natural_stop
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
from assay.asserts._tools import op_is_valid_tool_call, op_tool_call
from assay.errors import GoldenError, ValidationError
from assay.plugins import OPS_GROUP, find_plugin, is_plugin_name, track_cache
from assay.validate import At

Handler = Callable[[OutputView, Mapping[str, Any], CheckContext], Outcome]

# A handler and the arguments it accepts besides 'path'.
OpEntry = tuple[Handler, frozenset[str]]


def op_javascript(view: Any, args: Mapping[str, Any], ctx: Any) -> Outcome:
    """The ``javascript`` op, imported when a suite has one: its engine module (the QuickJS
    prelude, its bounds) is no cost of a gate without JavaScript checks."""
    from assay.asserts._javascript import op_javascript as run

    return run(view, args, ctx)


# op -> (handler, accepted arguments). A plain dict for the hot lookup in run_assert.
_BUILTIN: Final[dict[str, OpEntry]] = {
    "equals": (op_equals, frozenset({"value", "exact"})),
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
    "natural-stop": (op_natural_stop, frozenset()),
    "python": (op_python, frozenset({"value", "threshold", "timeout_s", "config"})),
    "javascript": (
        op_javascript,
        frozenset({"value", "threshold", "timeout_s", "memory_mb", "config"}),
    ),
    "is-valid-tool-call": (op_is_valid_tool_call, frozenset({"tools"})),
    "tool-call": (op_tool_call, frozenset({"value", "name", "arguments", "schema"})),
    "latency": (op_latency, frozenset({"threshold"})),
    "cost": (op_cost, frozenset({"threshold"})),
    "similar": (op_similar, frozenset({"value", "threshold", "backend"})),
}

# The built-in ops, read-only: an op is added through register_op or an entry point.
OPS: Final[Mapping[str, OpEntry]] = MappingProxyType(_BUILTIN)

# Listed in the design as an op of its own; it is the negation of contains. The groups are
# run by run_assert itself (they hold asserts, not a handler of one output), and a judge
# assert is graded by the gate (a batched model call), never by a handler.
_ALIASES: Final = ("not-contains", *sorted(GROUP_OPS), JUDGE_OP)

# Ops registered in-process with register_op, and plugin ops loaded from entry points.
_REGISTERED: dict[str, OpEntry] = {}
_PLUGINS: dict[str, OpEntry] = {}
track_cache(_PLUGINS)

# A plugin op is called with the output and the assert's 'value'; nothing else is passed.
_PLUGIN_ARGS: Final = frozenset({"value"})


def runs_project_code(spec: AssertSpec) -> bool:
    """Whether checking ``spec`` runs code that is not assay's in this interpreter: a ``python``
    assert or a python transform, an op given to :func:`register_op` or from a plugin (for a
    group, any of its children's). A ``javascript`` assert does not: it runs in the sandboxed
    engine, which has nothing to lose when a forked worker ends."""
    if spec.op == "python" or (spec.op not in _BUILTIN and spec.op not in _ALIASES):
        return True
    transform = spec.args.get("transform") if spec.args else None
    if isinstance(transform, Mapping) and "javascript" not in transform:
        return True
    return any([runs_project_code(child) for child in spec.children or ()])


# What a plugin op is: fn(output text, the assert's value) -> passed, or (passed, reason).
PluginOp = Callable[[str, Any], bool | tuple[bool, str]]


def known_ops() -> list[str]:
    """The op names run_assert accepts without reading installed packages, sorted: the
    built-in ops, ``not-contains``, the groups, ``judge`` and the ops given to
    :func:`register_op` (entry point ops: ``assay.plugins.plugin_names('assay.ops')``)."""
    return sorted([*_BUILTIN, *_ALIASES, *_REGISTERED])


# The built-in names, fixed at import; known_ops() also lists ops registered since.
KNOWN_OPS: Final = tuple(known_ops())


def _plugin_entry(name: str, fn: PluginOp) -> OpEntry:
    """Adapt a plugin function to the handler interface.

    A plugin that raises or returns something other than a bool or a ``(bool, reason)`` pair
    is an ArgumentProblem: always a failed check, negated or not, so a broken plugin can never
    make an assert pass.
    """

    def handler(view: OutputView, args: Mapping[str, Any], ctx: CheckContext) -> Outcome:
        try:
            verdict = fn(as_text(view.raw), args.get("value"))
        except Exception as exc:
            raise ArgumentProblem(
                f"plugin op '{name}' raised {type(exc).__name__}: {exc}",
                {"reason": "plugin_raised", "plugin": name},
            ) from None
        passed: Any = verdict
        reason: Any = None
        if isinstance(verdict, tuple) and len(verdict) == 2:
            passed, reason = verdict
        # Strictly a bool: a truthy string or None must not be read as a verdict.
        if not isinstance(passed, bool) or not (reason is None or isinstance(reason, str)):
            raise ArgumentProblem(
                f"plugin op '{name}' returned {clip(repr(verdict))},"
                " not a bool or a (bool, reason) pair",
                {"reason": "plugin_bad_result", "plugin": name},
            )
        if passed:
            return True, None, None
        return False, reason or f"output does not satisfy '{name}'", None

    return handler, _PLUGIN_ARGS


def register_op(name: str, fn: PluginOp) -> None:
    """Add an assert op for this process, without packaging an entry point.

    The op works like a plugin op: ``fn(output, value)`` gets the output as text (the value at
    ``path`` when the assert has one) and the assert's ``value`` (None when absent), and returns
    a bool or a ``(passed, reason)`` pair. ``not-<name>`` negates it like any op. An op
    registered here is used before an installed entry point of the same name.

    Args:
        name: a namespaced ``pkg/name`` (e.g. ``'myorg/ends-with'``); built-in names have no
            slash, so a registered op can never replace one.
        fn: the check.

    Raises:
        ValidationError: the name is not namespaced, starts with ``not-`` (the negation
            prefix), is already registered, or ``fn`` is not callable.
    """
    at = At(None, "name", ValidationError)
    if name in _BUILTIN or name in _ALIASES:
        at.fail(f"{name!r} is a built-in op and cannot be replaced")
    if not is_plugin_name(name):
        at.fail(f"op name {name!r} must be namespaced like 'pkg/name' (e.g. 'myorg/ends-with')")
    if name.startswith(NOT_PREFIX):
        at.fail(f"op name {name!r} cannot start with {NOT_PREFIX!r}: that prefix negates an op")
    if name in _REGISTERED:
        at.fail(f"op {name!r} is already registered")
    if not callable(fn):
        raise ValidationError(f"the op {name!r} must be callable", field="fn")
    _REGISTERED[name] = _plugin_entry(name, fn)


def find_op(op: str) -> OpEntry | None:
    """The handler of ``op`` (without any ``not-`` prefix), or None when no op has that name.

    Built-in ops first, then registered ops, then (for a namespaced name only) the installed
    ``assay.ops`` entry points, read once per process.

    Raises:
        PluginError: an installed plugin op of that name cannot load.
    """
    entry = _BUILTIN.get(op) or _REGISTERED.get(op) or _PLUGINS.get(op)
    if entry is None and is_plugin_name(op):
        fn = find_plugin(OPS_GROUP, op)
        if fn is not None:
            entry = _PLUGINS[op] = _plugin_entry(op, fn)
    return entry


# weight is read by whoever aggregates the check (the golden, a group), never by the op;
# transform by run_assert, before the op.
_IGNORED_ARGS = frozenset({"description", "name", "weight", "transform"})
# Code checks: negated, promptfoo keeps their own score and reason (assay.asserts._scripts).
_SCRIPT_OPS = frozenset({"javascript", "python"})


def _spec_text(spec: AssertSpec) -> str:
    """The assert's text; its op when the text cannot be rendered (a value that is no JSON,
    such as a set, built in Python), so a result can always be made."""
    try:
        return spec.text
    except (TypeError, ValueError, RecursionError):
        return spec.full_op


def _failed(spec: AssertSpec, reason: str, evidence: dict[str, Any]) -> CheckResult:
    return CheckResult(_spec_text(spec), spec.full_op, False, reason, evidence)


def _passed(spec: AssertSpec) -> CheckResult:
    try:
        return spec.passed
    except (TypeError, ValueError, RecursionError):
        return CheckResult(spec.full_op, spec.full_op, True)


def _unknown_args(spec: AssertSpec, accepted: frozenset[str]) -> list[str]:
    unknown = [k for k in spec.args if k not in accepted and k != "path" and k not in _IGNORED_ARGS]
    # str(): a mapping built in Python may mix int and str keys, which sorted() cannot order.
    return sorted(map(str, unknown)) if unknown else unknown


def _view_at_path(path: Any, output: OutputView) -> OutputView:
    """The value at the assert's ``path`` (None: the whole output) as a JSON value; an
    ArgumentProblem when the path is no pointer or the output has no value there."""
    if path is None:
        return output
    if not isinstance(path, str):
        raise ArgumentProblem(
            "argument 'path' must be a JSON Pointer string",
            {"reason": "invalid_pointer", "path": _safe_str(path)},
        )
    ok, document = output.as_json()
    if not ok:
        raise ArgumentProblem(
            f"output is not JSON, so path {path} cannot be read",
            {"reason": "not_json", "path": path},
        )
    try:
        found = resolve(document, path)
    except PointerSyntaxError as exc:
        raise ArgumentProblem(str(exc), {"reason": "invalid_pointer", "path": path}) from None
    if found is MISSING:
        raise ArgumentProblem(f"no value at {path}", {"reason": "missing_pointer", "path": path})
    # The golden goes along: a python assert at a path still gets the golden's context.
    return OutputView(
        found,
        text=False,
        golden=output.golden,
        latency_ms=output.latency_ms,
        cost_usd=output.cost_usd,
        finish_reason=output.finish_reason,
    )


def _transformed(raw: Any, output: OutputView, ctx: CheckContext) -> OutputView:
    """The output as the assert's own ``transform`` makes it (promptfoo's ``runAssertion``:
    for this assert only, after the golden's transform); a failed transform is an
    ArgumentProblem whose evidence makes the golden's result an error."""
    from assay.asserts._python import function_context
    from assay.asserts._transform import (
        TRANSFORM_FAILED,
        Transform,
        TransformFailed,
        apply_transform,
        shape_problem,
    )

    problem = shape_problem(raw)
    if problem is not None:
        raise ArgumentProblem(problem[0], {"reason": "invalid_argument", "argument": "transform"})
    language, code = next(iter(raw.items()))
    try:
        value = apply_transform(
            Transform(language, code), output.raw, function_context(output.golden), ctx.root
        )
    except TransformFailed as failed:
        raise ArgumentProblem(failed.message, {"reason": TRANSFORM_FAILED}) from None
    return OutputView(
        value,
        text=isinstance(value, str),
        golden=output.golden,
        latency_ms=output.latency_ms,
        cost_usd=output.cost_usd,
        finish_reason=output.finish_reason,
    )


def _safe_str(value: Any) -> str:
    try:
        return clip(repr(value))
    except Exception:
        return type(value).__name__


def run_assert(
    spec: AssertSpec, output: OutputView, ctx: CheckContext = DEFAULT_CONTEXT
) -> CheckResult:
    """Run one assert on one output. Never raises for a bad assert: it fails closed.

    An unknown op, a bad argument, or a plugin op that raises or returns nonsense is a failed
    check (negated or not). Every failed check has evidence with a ``reason``.

    Raises:
        PluginError: the op names an installed plugin that cannot load. That is a broken
            installation, not a verdict on the output, so it stops the run instead of being
            recorded (and perhaps baselined) as a failed check.
    """
    shared = spec._passed  # set once this assert has passed (its one shared record)
    if spec.op in GROUP_OPS:
        return _run_group(spec, output, ctx)
    if spec.op == JUDGE_OP:
        # Reached outside a golden's own asserts (the scorer API, a spec built in Python):
        # only the gate grades a judge assert, so here it fails closed, never passes ungraded.
        message = "a judge assert is graded only among a golden's asserts in a gate run"
        return _failed(spec, message, {"reason": "judge_not_available"})
    entry = _BUILTIN.get(spec.op) or find_op(spec.op)
    if entry is None:
        message = f"unknown op '{spec.full_op}'"
        if is_plugin_name(spec.op):
            message += " (no installed plugin or registered op has that name)"
        return _failed(spec, message, {"reason": "unknown_op"})
    handler, accepted = entry
    args = spec.args
    # Inline on the hot path: most asserts have only accepted arguments and no path.
    unknown = [] if accepted.issuperset(args) else _unknown_args(spec, accepted)
    if unknown:
        message = f"unknown argument(s) {unknown} for op '{spec.op}'"
        return _failed(spec, message, {"reason": "unknown_argument", "arguments": unknown})
    try:
        view = output
        if "transform" in args:
            view = _transformed(args["transform"], output, ctx)
        if "path" in args:
            view = _view_at_path(args["path"], view)
        passed, reason, evidence = handler(view, args, ctx)
    except ArgumentProblem as problem:
        return _failed(spec, problem.reason, problem.evidence or {"reason": "invalid_argument"})
    if spec.negate:
        if spec.op in _SCRIPT_OPS:
            if passed:
                return negated(_spec_text(spec), spec.full_op, spec.op, evidence)
            return negated_pass(_spec_text(spec), spec.full_op, evidence)
        if passed:
            message = f"output satisfies '{spec.op}', which this assert forbids"
            return _failed(spec, message, {"reason": "negated"})
        return _passed(spec)
    if passed:
        if evidence is not None and spec.op in SCORED_OPS:
            # A scored check's pass carries its score: it is counted, not just 1.
            return CheckResult(_spec_text(spec), spec.full_op, True, None, evidence)
        return shared if shared is not None else _passed(spec)
    reason = reason or f"output does not satisfy '{spec.op}'"
    return _failed(spec, reason, evidence or {"reason": "check_failed"})


def _group_children(spec: AssertSpec) -> tuple[AssertSpec, ...] | CheckResult:
    """A group's parsed asserts; parsed here only for a spec built in Python (parse_assert
    parses a golden's groups at load time), and a bad group is a failed check."""
    if spec.children is not None:
        return spec.children
    if spec.negate:
        return _failed(spec, "a group cannot be negated", {"reason": "invalid_argument"})
    try:
        parsed = parse_assert({"op": spec.op, **spec.args})
    except GoldenError as exc:
        return _failed(spec, exc.message, {"reason": "invalid_argument"})
    return parsed.children or ()


def _run_group(spec: AssertSpec, output: OutputView, ctx: CheckContext) -> CheckResult:
    """An ``assert-set`` (weighted mean of its children; passes on its threshold, else when
    every weighted child passes) or an ``any-of`` (passes when a child does; its best score).
    """
    children = _group_children(spec)
    if isinstance(children, CheckResult):
        return children
    checks = [run_assert(child, output, ctx) for child in children]
    count = sum([c.passed for c in checks])
    threshold = spec.args.get("threshold")
    if spec.op == "any-of":
        passed = count > 0
        score = max(check_score(c) for c in checks)
    else:
        limit = float(threshold) if threshold is not None else None
        passed, score = aggregate(children, checks, limit)
    evidence: dict[str, Any] = {"score": score, "checks": [c.to_dict() for c in checks]}
    text = f"{spec.op} ({count} of {len(checks)} passed)"
    if passed:
        return CheckResult(text, spec.full_op, True, None, evidence)
    # Scored children may all pass and still score below the threshold.
    failed = "; ".join(f"{c.text}: {c.reason}" for c in checks if not c.passed) or "none"
    if spec.op == "any-of":
        reason = f"no assert passed ({failed})"
    elif threshold is not None:
        reason = f"score {score:.3g} is below the threshold {threshold:g} (failed: {failed})"
    else:
        reason = f"failed: {failed}"
    evidence["reason"] = "group_failed"
    return CheckResult(text, spec.full_op, False, reason, evidence)
