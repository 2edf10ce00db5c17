"""What a code check's return value means: promptfoo's reading, for JavaScript and Python.

JavaScript (promptfoo's ``src/assertions/javascript.ts``, ``validateResult`` and
``scriptResultNormalization.ts``): a boolean; a finite number, a score that passes when it is
``>= threshold``, else when ``> 0``; or a GradingResult (``isGradingResult``: ``pass`` a
boolean, ``score`` a number, ``reason`` a string), whose ``pass`` decides (no threshold).
Anything else is an error: a failed check, negated or not.

Python in promptfoo's forms (``file://x.py``, inline code; promptfoo's
``src/assertions/python.ts``): the same, and also the text ``true`` / ``false`` (any case), a
JSON object as text, or a number as text (``parseFloat``); a mapping's snake_case keys are read
as camelCase, and its score below the assert's ``threshold`` fails it.

Negated (``not-javascript``, ``not-python``), promptfoo keeps the check's own score for a
number or a GradingResult, and 1 / 0 for a boolean; the reason of a negated failure is the
check's own reason when it gave one: :func:`negated`.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any, Final

from assay.asserts._result import ArgumentProblem, CheckResult, Outcome, clip

# The evidence key holding a check's own reason on a pass (for its negation), and its kind.
OWN_REASON: Final = "own_reason"
KIND: Final = "kind"


def label(code: str) -> str:
    """How a message names a piece of code: a file reference as written, inline code on one
    line, shortened (promptfoo's ``getTransformLabel``)."""
    if code.startswith("file://"):
        return code
    return clip(" ".join(code.split()), 60)


def bad_result(name: str, shown: str, op: str) -> ArgumentProblem:
    return ArgumentProblem(
        f"{name} returned {clip(shown)}, not a boolean, a finite number or {{pass, score, reason}}",
        {"reason": f"{op}_bad_result", "code": name},
    )


def _decided(
    name: str,
    op: str,
    passed: bool,
    score: float,
    kind: str,
    reason: str | None,
) -> Outcome:
    evidence: dict[str, Any] = {"score": score, "code": name, KIND: kind}
    if passed:
        if reason:
            evidence[OWN_REASON] = reason
        return True, None, evidence
    evidence["reason"] = f"{op}_failed"
    return False, reason, evidence


def _number(name: str, op: str, value: float, threshold: float | None) -> Outcome:
    passed = value >= threshold if threshold is not None else value > 0
    reason = None
    if not passed:
        reason = (
            f"{name} scored {value:g}, below the threshold {threshold:g}"
            if threshold is not None
            else f"{name} scored {value:g} (a score passes when above 0)"
        )
    return _decided(name, op, passed, value, "number", reason)


def _grading_result(value: Any) -> tuple[bool, float, str] | None:
    """promptfoo's ``isGradingResult``: pass a boolean, score a finite number, reason text."""
    if not isinstance(value, Mapping):
        return None
    passed, score, reason = value.get("pass"), value.get("score"), value.get("reason")
    if not isinstance(passed, bool) or not isinstance(reason, str):
        return None
    if isinstance(score, bool) or not isinstance(score, int | float) or not math.isfinite(score):
        return None
    return passed, float(score), reason


def js_outcome(name: str, described: Mapping[str, Any], threshold: float | None) -> Outcome:
    """The verdict of a JavaScript check from what it returned (see the module)."""
    kind = described["k"]
    if kind == "boolean":
        passed = bool(described["v"])
        reason = None if passed else f"{name} returned false"
        return _decided(name, "javascript", passed, 1.0 if passed else 0.0, "boolean", reason)
    if kind == "number" and described["v"] is not None:
        return _number(name, "javascript", float(described["v"]), threshold)
    if kind == "object":
        value = json.loads(described["j"])
        graded = _grading_result(value)
        if graded is not None:
            passed, score, reason = graded
            return _decided(name, "javascript", passed, score, "result", reason or None)
        raise bad_result(name, described["j"], "javascript")
    raise bad_result(name, str(described.get("s", described.get("v"))), "javascript")


_CAMEL = re.compile(r"_([a-z])")
# parseFloat's reading: the longest leading decimal number of the text (after spaces).
_LEADING_NUMBER = re.compile(r"\s*([+-]?(?:Infinity|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?))")


def _camel_keys(value: Any) -> Any:
    """promptfoo's ``mapSnakeCaseToCamelCase`` (keys of mappings, recursively)."""
    if isinstance(value, Mapping):
        return {
            _CAMEL.sub(lambda m: m.group(1).upper(), str(k)): _camel_keys(v)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_camel_keys(v) for v in value]
    return value


def python_outcome(name: str, verdict: Any, threshold: float | None) -> Outcome:
    """The verdict of a Python check written in promptfoo's forms (see the module)."""
    text = verdict.lower() if isinstance(verdict, str) else None
    if verdict is True or text == "true":
        return _decided(name, "python", True, 1.0, "boolean", None)
    if verdict is False or text == "false":
        return _decided(name, "python", False, 0.0, "boolean", f"{name} returned false")
    if isinstance(verdict, str) and verdict.startswith("{"):
        try:
            verdict = json.loads(verdict)
        except ValueError:
            raise bad_result(name, verdict, "python") from None
    if isinstance(verdict, Mapping | list | tuple):
        graded = _grading_result(_camel_keys(verdict))
        if graded is None:
            raise bad_result(name, repr(verdict), "python")
        passed, score, reason = graded
        if threshold is not None and score < threshold:
            below = f"Python score {score:g} is less than threshold {threshold:g}"
            passed, reason = False, f"{below}: {reason}" if reason else below
        return _decided(name, "python", passed, score, "result", reason or None)
    if isinstance(verdict, int | float):
        number = float(verdict)
    else:
        found = _LEADING_NUMBER.match(str(verdict))
        if found is None:
            raise bad_result(name, repr(verdict), "python")
        number = float(found.group(1).replace("Infinity", "inf"))
    if not math.isfinite(number):
        raise bad_result(name, repr(verdict), "python")
    return _number(name, "python", number, threshold)


def negated(text: str, full_op: str, op: str, evidence: Any) -> CheckResult:
    """A negated code check whose check passed (so the assert fails): promptfoo's score (the
    check's own for a number or a GradingResult, 0 for a boolean) and reason (the check's own,
    else that it passed)."""
    found = evidence if isinstance(evidence, dict) else {}
    name = found.get("code") or found.get("function") or op
    reason = found.get(OWN_REASON) or f"output satisfies '{op}' ({name}), which this assert forbids"
    score = found.get("score", 1.0) if found.get(KIND) in ("number", "result") else 0.0
    return CheckResult(text, full_op, False, reason, {"reason": "negated", "score": score})


def negated_pass(text: str, full_op: str, evidence: Any) -> CheckResult:
    """A negated code check whose check failed (so the assert passes): the check's own score
    for a number or a GradingResult, 1 for a boolean."""
    found = evidence if isinstance(evidence, dict) else {}
    score = found.get("score", 0.0) if found.get(KIND) in ("number", "result") else 1.0
    return CheckResult(text, full_op, True, None, {"score": score})
