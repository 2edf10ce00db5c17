"""How weighted checks make one verdict: a golden's asserts, or an ``assert-set``'s.

The rule (promptfoo's): the score is the weighted mean ``Σ wᵢ·sᵢ / Σ wᵢ`` of the checks, where
``sᵢ`` is 1 for a pass and 0 for a failure, or the check's own score (``evidence["score"]``,
clamped to [0, 1]) for a check that has one; a check of weight 0 counts for nothing. With a
threshold the verdict is ``score >= threshold`` (failing checks may be rescued); without one,
every check of weight above 0 must pass. No weight at all (Σ w = 0) scores 1.0.
"""

from __future__ import annotations

from collections.abc import Sequence

from assay.asserts._result import CheckResult
from assay.asserts._spec import AssertSpec
from assay.validate import is_number


def check_score(check: CheckResult) -> float:
    """One check's contribution in [0, 1]: its own score when it has one, else pass = 1."""
    evidence = check.evidence
    if isinstance(evidence, dict):
        score = evidence.get("score")
        if is_number(score):
            return min(1.0, max(0.0, float(score)))
    return 1.0 if check.passed else 0.0


def aggregate(
    specs: Sequence[AssertSpec], checks: Sequence[CheckResult], threshold: float | None
) -> tuple[bool, float]:
    """``(passed, score)`` of ``checks`` (one per spec, in order) under the rule above."""
    total = weighted = 0.0
    passed = True
    for spec, check in zip(specs, checks, strict=True):
        weight = spec.weight
        if weight <= 0:
            continue  # informational: run and reported, never counted
        total += weight
        weighted += weight * check_score(check)
        passed = passed and check.passed
    score = weighted / total if total > 0 else 1.0
    if threshold is not None:
        passed = score >= threshold
    return passed, score
