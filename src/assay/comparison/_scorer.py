"""``evaluate_deterministic_scorer``: the tier 1 checks, called as a scorer.

One implementation per check: a definition is parsed by the same ``parse_assert`` and run by the
same ``run_assert`` the goldens gate uses, reading ``target['output']`` as a JSON value through
a strict RFC 6901 ``path``.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any, Final

from assay.asserts import AssertSpec, CheckContext, OutputView, find_op, parse_assert, run_assert
from assay.errors import GoldenError, ValidationError

_PASS: Final = {"score": 1, "passed": True}

# Scorer definitions are small JSON dicts, usually rebuilt for every call: parse each distinct
# one once. repr() is an exact key for JSON data (1, 1.0 and True differ).
_SPECS: dict[str, AssertSpec] = {}
_SPECS_LIMIT: Final = 4096


def _spec_for(definition: Mapping[str, Any]) -> AssertSpec:
    key = repr(definition)
    spec = _SPECS.get(key)
    if spec is None:
        try:
            # A private copy: the cached spec must not change if the caller mutates its dict.
            spec = parse_assert(copy.deepcopy(dict(definition)), field="definition")
        except GoldenError as exc:
            raise ValidationError(exc.message, field="type") from None
        if len(_SPECS) >= _SPECS_LIMIT:
            _SPECS.clear()
        _SPECS[key] = spec
    return spec


def evaluate_deterministic_scorer(
    definition: Mapping[str, Any], target: Mapping[str, Any], *, ctx: CheckContext | None = None
) -> dict[str, Any]:
    """Score ``target['output']`` with one deterministic check.

    Args:
        definition: ``{"type": "contains" | "regex" | "attribute-equality" | "json-schema" | any
            tier 1 op, "path"?: JSON Pointer, ...}``; camelCase keys (``caseInsensitive``,
            ``leftPath``, ``rightPath``) are accepted.
        target: ``{input, output, expected?, context?}``.

    Returns:
        ``{"score": 1, "passed": True}`` or ``{"score": 0, "passed": False, "evidence": {...}}``
        (``evidence.reason`` is e.g. ``missing_pointer`` or ``schema_validation_failed``).

    Raises:
        ValidationError: the definition is not a mapping with a known ``type``, or the target
            has no ``output``.
        PluginError: ``type`` names an installed plugin op that cannot load.
    """
    if not isinstance(definition, Mapping):
        raise ValidationError("a scorer definition must be a mapping", field="definition")
    if not isinstance(target, Mapping) or "output" not in target:
        raise ValidationError("the target must be a mapping with an 'output'", field="output")
    spec = _spec_for(definition)
    if find_op(spec.op) is None:  # plugin and registered ops are scorer types too
        raise ValidationError(f"unknown scorer type {spec.full_op!r}", field="type")
    check = run_assert(spec, OutputView(target["output"], text=False), ctx or _CONTEXT)
    if check.passed:
        return dict(_PASS)
    # Every failed check carries evidence with its reason (run_assert's contract).
    evidence = dict(check.evidence) if check.evidence else {"reason": "check_failed"}
    if check.reason and "message" not in evidence:
        evidence["message"] = check.reason
    return {"score": 0, "passed": False, "evidence": evidence}


_CONTEXT: Final = CheckContext()
