"""The assertion cascade: tier 1 asserts → tier 2 similarity → tier 3 judge.

Cheap tiers short-circuit. When a golden declares asserts, tier 1 alone decides. Tier 2 runs only
for goldens without asserts, with an expected value, and only when a similarity backend is set;
otherwise it is skipped and the skip is noted. Whatever is left reaches tier 3, which in
deterministic mode is reported ``needs-judge`` and never calls the judge.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Final

from assay.asserts import (
    DEFAULT_CONTEXT,
    TRUNCATED,
    CheckContext,
    CheckResult,
    OutputView,
    as_text,
    run_assert,
)
from assay.asserts._groups import aggregate
from assay.goldens import Golden
from assay.results import Result
from assay.similarity import SimilarityFn
from assay.vocabulary import TIER1, TIER3, Status, tier2

NO_OUTPUT: Final[Any] = object()


@dataclass(frozen=True, slots=True)
class CallFailed:
    """An output that never came: the model call failed after its retries (the message names
    no content). Scored as ``error``, never a pass."""

    message: str


def _decided(
    golden: Golden,
    candidate: str,
    status: Status,
    score: float | None,
    decided_by: str | None,
    checks: tuple[CheckResult, ...] = (),
    notes: tuple[str, ...] = (),
) -> Result:
    passed = True if status == "pass" else None if status == "needs-judge" else False
    return Result(
        golden.id, golden.tier, candidate, status, passed, score, decided_by, checks, notes
    )


def evaluate(
    golden: Golden,
    output: Any,
    candidate: str,
    *,
    similarity: SimilarityFn | None = None,
    similarity_name: str = "none",
    ctx: CheckContext = DEFAULT_CONTEXT,
    finish_reason: str | None = None,
    latency_ms: float | None = None,
    cost_usd: float | None = None,
) -> Result:
    """Decide one (candidate, golden) pair. Never raises for a bad assert or output.

    ``finish_reason``, why a live model stopped, is kept on the result; a stop at the length
    limit adds a ``truncated`` note (and fails ``natural-stop``). ``latency_ms`` and
    ``cost_usd``, what a live call took, are for the ``latency`` and ``cost`` asserts."""
    result = _evaluate(
        golden,
        output,
        candidate,
        similarity,
        similarity_name,
        ctx,
        finish_reason,
        latency_ms,
        cost_usd,
    )
    if finish_reason is None:
        return result
    notes = result.notes
    if finish_reason in TRUNCATED:
        notes = (*notes, f"truncated: the model stopped at its length limit ({finish_reason})")
    return replace(result, finish_reason=finish_reason, notes=notes)


def _evaluate(
    golden: Golden,
    output: Any,
    candidate: str,
    similarity: SimilarityFn | None,
    similarity_name: str,
    ctx: CheckContext,
    finish_reason: str | None,
    latency_ms: float | None = None,
    cost_usd: float | None = None,
) -> Result:
    if output is NO_OUTPUT:
        return _decided(
            golden, candidate, "no-output", 0.0, None, (), ("no output for this golden",)
        )
    status: Status
    if golden.asserts:
        view = OutputView(
            output,
            finish_reason=finish_reason,
            golden=golden,
            latency_ms=latency_ms,
            cost_usd=cost_usd,
        )
        checks = tuple([run_assert(spec, view, ctx) for spec in golden.asserts])
        if golden.threshold_given or not all([spec.plain for spec in golden.asserts]):
            return _weighted(golden, candidate, checks)
        # Only plain checks (weight 1, scored 0 or 1): the weighted rule is this count.
        passed_count = sum([c.passed for c in checks])
        if passed_count == len(checks):  # the common case, built directly (100,000 of them)
            return Result(golden.id, golden.tier, candidate, "pass", True, 1.0, TIER1, checks)
        return _decided(golden, candidate, "fail", passed_count / len(checks), TIER1, checks)
    notes: list[str] = []
    if not golden.has_expected:
        notes.append("tier 2 skipped: the golden has no expected value")
    elif similarity is None:
        notes.append("tier 2 skipped: no similarity backend configured")
    else:
        score = max(0.0, min(1.0, similarity(as_text(output), as_text(golden.expected))))
        status = "pass" if score >= golden.threshold else "fail"
        if status == "fail":
            notes.append(f"similarity {score:.3f} below threshold {golden.threshold:g}")
        return _decided(golden, candidate, status, score, tier2(similarity_name), (), tuple(notes))
    notes.append("tier 3: needs a judge (not called in deterministic mode)")
    return _decided(golden, candidate, "needs-judge", None, TIER3, (), tuple(notes))


def _weighted(golden: Golden, candidate: str, checks: tuple[CheckResult, ...]) -> Result:
    """Tier 1 with weights, scored checks or a golden threshold (see assay.asserts._groups):
    with ``threshold`` set on the golden its weighted score decides, else every check of
    weight above 0 must pass. A check of weight 0 is run and reported, never counted."""
    threshold = golden.threshold if golden.threshold_given else None
    passed, score = aggregate(golden.asserts, checks, threshold)
    notes = [
        f"informational (weight 0): {check.text} {'passed' if check.passed else 'failed'}"
        for spec, check in zip(golden.asserts, checks, strict=True)
        if spec.weight == 0
    ]
    if threshold is not None:
        failed = sum(
            1
            for spec, c in zip(golden.asserts, checks, strict=True)
            if spec.weight > 0 and not c.passed
        )
        if not passed:
            notes.append(f"assert score {score:.3f} below threshold {threshold:g}")
        elif failed:
            notes.append(
                f"assert score {score:.3f} meets threshold {threshold:g}"
                f" ({failed} failed assert(s) rescued)"
            )
    status: Status = "pass" if passed else "fail"
    return _decided(golden, candidate, status, score, TIER1, checks, tuple(notes))


def error_result(golden: Golden, candidate: str, message: str) -> Result:
    """A pair that could not be scored (e.g. the model call failed): never a pass."""
    return _decided(golden, candidate, "error", 0.0, None, (), (message,))


def combine_repeats(results: Sequence[Result]) -> Result:
    """One result for k repeats of a golden: pass only when every repeat passed (pass^k).

    The score is the mean of the repeats' scores; the checks and notes are those of the first
    repeat that did not pass; ``repeats`` records (passed, k) for pass@k, pass^k and flakiness.
    """
    k = len(results)
    passed = sum(1 for r in results if r.status == "pass")
    first_bad = next((r for r in results if r.status != "pass"), results[0])
    scores = [r.score for r in results if r.score is not None]
    notes = list(first_bad.notes)
    if 0 < passed < k:
        notes.append(f"flaky: passed {passed} of {k} repeats")
    status = "pass" if passed == k else first_bad.status
    return replace(
        first_bad,
        status=status,
        passed=True if passed == k else first_bad.passed,
        score=sum(scores) / len(scores) if scores else None,
        notes=tuple(notes),
        repeats=(passed, k),
    )
