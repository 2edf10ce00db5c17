"""The assertion cascade: tier 1 asserts → tier 2 similarity → tier 3 judge.

Cheap tiers short-circuit. When a golden declares asserts, tier 1 alone decides. Tier 2 runs only
for goldens without asserts, with an expected value, and only when a similarity backend is set;
otherwise it is skipped and the skip is noted. Whatever is left reaches tier 3, which in
deterministic mode is reported ``needs-judge`` and never calls the judge.

A golden's ``transform`` rewrites the output before anything reads it, and an assert's own
``transform`` the output that assert reads (promptfoo's order: :mod:`assay.asserts._transform`);
a transform that fails makes the golden's result an error naming it, with no score: it says
nothing of the model's answer.

Within a golden's asserts the same economy holds: the model-graded ops (``similar``, then
``judge``) run after the cheap ones and are skipped once those decided the outcome; a judge
assert left makes the golden ``needs-judge``, finished by the gate with the run's judge batch.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, Final

from assay.asserts import (
    DEFAULT_CONTEXT,
    JUDGE_OP,
    TRANSFORM_FAILED,
    TRUNCATED,
    AssertSpec,
    CheckContext,
    CheckResult,
    OutputView,
    SimilarityFn,
    TransformFailed,
    aggregate,
    apply_transform,
    as_text,
    check_score,
    run_assert,
)
from assay.goldens import Golden
from assay.results import Result
from assay.vocabulary import TIER1, TIER3, Status, tier2

NO_OUTPUT: Final[Any] = object()


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
    if golden.transform is not None and output is not NO_OUTPUT:
        try:
            output = _golden_transformed(golden, output, ctx)
        except TransformFailed as failed:
            return error_result(golden, candidate, failed.message)
    view = OutputView(
        output,
        finish_reason=finish_reason,
        golden=golden,
        latency_ms=latency_ms,
        cost_usd=cost_usd,
    )
    result = _evaluate(golden, view, candidate, similarity, similarity_name, ctx)
    if result.status != "pass" and result.checks:
        broken = _failed_transform(result.checks)
        if broken is not None:
            result = error_result(golden, candidate, broken)
    if finish_reason is None:
        return result
    notes = result.notes
    if finish_reason in TRUNCATED:
        notes = (*notes, f"truncated: the model stopped at its length limit ({finish_reason})")
    return replace(result, finish_reason=finish_reason, notes=notes)


def _golden_transformed(golden: Golden, output: Any, ctx: CheckContext) -> Any:
    """The output as the golden's transform makes it (promptfoo's ``options.transform``)."""
    from assay.asserts import function_context

    assert golden.transform is not None
    return apply_transform(golden.transform, output, function_context(golden), ctx.root)


def _failed_transform(checks: Sequence[CheckResult]) -> str | None:
    """The message of the first check whose own transform failed (None: none did)."""
    for check in checks:
        evidence = check.evidence
        if isinstance(evidence, dict) and evidence.get("reason") == TRANSFORM_FAILED:
            return f"{check.text}: {check.reason}"
    return None


def _evaluate(
    golden: Golden,
    view: OutputView,
    candidate: str,
    similarity: SimilarityFn | None,
    similarity_name: str,
    ctx: CheckContext,
) -> Result:
    if view.raw is NO_OUTPUT:
        return _decided(
            golden, candidate, "no-output", 0.0, None, (), ("no output for this golden",)
        )
    if golden.asserts:
        weighted = golden.threshold_given or not all([spec.plain for spec in golden.asserts])
        # Model-graded ops are never plain, so the all-plain common case skips this test.
        if weighted and any([spec.rank for spec in golden.asserts]):
            return _graded(golden, candidate, view, ctx)
        checks = tuple([run_assert(spec, view, ctx) for spec in golden.asserts])
        if weighted:
            return _weighted(golden, candidate, checks)
        # Only plain checks (weight 1, scored 0 or 1): the weighted rule is this count.
        passed_count = sum([c.passed for c in checks])
        if passed_count == len(checks):  # the common case, built directly (100,000 of them)
            return Result(golden.id, golden.tier, candidate, "pass", True, 1.0, TIER1, checks)
        return _decided(golden, candidate, "fail", passed_count / len(checks), TIER1, checks)
    if not golden.has_expected:
        skipped = "tier 2 skipped: the golden has no expected value"
    elif similarity is None:
        skipped = "tier 2 skipped: no similarity backend configured"
    else:
        score = max(0.0, min(1.0, similarity(as_text(view.raw), as_text(golden.expected))))
        if score >= golden.threshold:
            return _decided(golden, candidate, "pass", score, tier2(similarity_name))
        below = f"similarity {score:.3f} below threshold {golden.threshold:g}"
        return _decided(golden, candidate, "fail", score, tier2(similarity_name), (), (below,))
    notes = (skipped, "tier 3: needs a judge (not called in deterministic mode)")
    return _decided(golden, candidate, "needs-judge", None, TIER3, (), notes)


SKIPPED_REASON: Final = "skipped: the golden's outcome was already decided by cheaper asserts"
PENDING_REASON: Final = "needs a judge (not called in deterministic mode)"
# A judge assert's verdict default, when neither the assert nor the golden sets a threshold.
JUDGE_THRESHOLD: Final = 0.8


def _skipped_note(count: int) -> str:
    return f"{count} model-graded assert(s) skipped: the outcome was decided by cheaper asserts"


def is_skipped(check: CheckResult) -> bool:
    """Whether ``check`` is a model-graded check that was skipped (it counts for nothing)."""
    evidence = check.evidence
    # The reason too: a python assert's own evidence may hold any key, "skipped" among them.
    return (
        check.reason == SKIPPED_REASON
        and isinstance(evidence, dict)
        and evidence.get("skipped") is True
    )


def is_pending_judge(check: CheckResult) -> bool:
    """Whether ``check`` is a judge assert waiting for the judge's verdict."""
    evidence = check.evidence
    return (
        check.op == JUDGE_OP
        and isinstance(evidence, dict)
        and evidence.get("reason") == "needs_judge"
    )


def _outcome_decided(
    specs: Sequence[AssertSpec],
    checks: Sequence[CheckResult | None],
    skipped: set[int],
    pending: set[int],
    threshold: float | None,
) -> bool:
    """Whether no check still to run (``None`` in ``checks``, or a judge in ``pending``) can
    change the golden's outcome, given the checks already run.

    Without a threshold: a failed check of weight above 0 decides ``fail``, and with no
    weighted check left the outcome is decided too. With one: decided when even a perfect
    score on the checks left cannot reach the threshold, or even zero on them cannot fall
    below it (the same weighted mean as :func:`assay.asserts._groups.aggregate`).
    """
    done_weight = done_score = left_weight = 0.0
    failed = False
    for i, spec in enumerate(specs):
        if i in skipped or spec.weight <= 0:
            continue
        check = checks[i]
        if check is None or i in pending:
            left_weight += spec.weight
            continue
        done_weight += spec.weight
        done_score += spec.weight * check_score(check)
        failed = failed or not check.passed
    if left_weight == 0:
        return True
    if threshold is None:
        return failed
    total = done_weight + left_weight
    return (done_score + left_weight) / total < threshold or done_score / total >= threshold


def _failed_check(spec: AssertSpec, reason: str, evidence: dict[str, Any]) -> CheckResult:
    return CheckResult(spec.text, spec.full_op, False, reason, evidence)


def _graded(golden: Golden, candidate: str, view: OutputView, ctx: CheckContext) -> Result:
    """Asserts with model-graded ops: cheap ones first, then ``similar``, then ``judge``
    (stable within a rank; the checks keep the written order). A model-graded check whose
    golden is already decided is skipped; a judge check left leaves the golden ``needs-judge``
    for the gate to finish (:func:`finish_judged`), batched with the run's other judge calls.
    """
    specs = golden.asserts
    threshold = golden.threshold if golden.threshold_given else None
    checks: list[CheckResult | None] = [None] * len(specs)
    skipped: set[int] = set()
    pending: set[int] = set()
    for i in sorted(range(len(specs)), key=lambda i: specs[i].rank):
        spec = specs[i]
        if spec.rank and _outcome_decided(specs, checks, skipped, pending, threshold):
            checks[i] = _failed_check(spec, SKIPPED_REASON, {"skipped": True})
            skipped.add(i)
        elif spec.op == JUDGE_OP:
            checks[i] = _failed_check(spec, PENDING_REASON, {"reason": "needs_judge"})
            pending.add(i)
        else:
            checks[i] = run_assert(spec, view, ctx)
    done = tuple([c for c in checks if c is not None])
    if not pending:
        return _weighted(golden, candidate, done, frozenset(skipped))
    notes = [f"tier 3: {len(pending)} judge assert(s) left: {PENDING_REASON}"]
    if skipped:
        notes.append(_skipped_note(len(skipped)))
    return _decided(golden, candidate, "needs-judge", None, TIER3, done, tuple(notes))


def judge_error(
    result: Result, notes: Sequence[str], checks: tuple[CheckResult, ...] | None = None
) -> Result:
    """``result`` as the judge left it when it could not grade (a failed call, no verdict):
    ``error``, never a pass, no score; ``notes`` say why (and ``checks``, when given, replace
    its checks)."""
    return replace(
        result,
        status="error",
        passed=False,
        score=None,
        decided_by=TIER3,
        checks=result.checks if checks is None else checks,
        notes=tuple(notes),
    )


def judge_note(score: float, reason: str) -> str:
    return f"judge: {score:.2f} ({reason})" if reason else f"judge: {score:.2f}"


def finish_judged(
    golden: Golden, result: Result, verdicts: Mapping[int, tuple[float, str] | str]
) -> Result:
    """The ``needs-judge`` result of a golden with judge asserts, decided with the judge's
    verdicts (assert index -> (score, reason), or the error text of an unusable verdict).

    Decided by the judge (``tier3-judge``, so the gate treats the outcome as random); a judge
    error makes the result ``error`` (judge-error), never a pass, as for tier 3.
    """
    specs = golden.asserts
    golden_mark = golden.threshold if golden.threshold_given else JUDGE_THRESHOLD
    checks = list(result.checks)
    errors: list[str] = []
    judged: list[str] = []
    for i, verdict in verdicts.items():
        spec = specs[i]
        if isinstance(verdict, str):
            errors.append(f"judge-error: {verdict}")
            checks[i] = _failed_check(spec, errors[-1], {"reason": "judge_error"})
            continue
        score, why = verdict
        own = spec.args.get("threshold")
        mark = float(own) if own is not None else golden_mark
        evidence: dict[str, Any] = {"score": score, "judge": why}
        judged.append(judge_note(score, why))
        if score >= mark:
            checks[i] = CheckResult(spec.text, spec.full_op, True, None, evidence)
        else:
            below = f"judge score {score:.2f} below threshold {mark:g}"
            checks[i] = _failed_check(spec, below, {**evidence, "reason": "below_threshold"})
    if errors:
        return judge_error(result, errors, tuple(checks))
    skipped = frozenset(i for i, c in enumerate(checks) if is_skipped(c))
    return _weighted(golden, result.candidate, tuple(checks), skipped, TIER3, tuple(judged))


def _weighted(
    golden: Golden,
    candidate: str,
    checks: tuple[CheckResult, ...],
    skipped: frozenset[int] = frozenset(),
    decided_by: str = TIER1,
    extra_notes: tuple[str, ...] = (),
) -> Result:
    """Tier 1 with weights, scored checks or a golden threshold (see assay.asserts._groups):
    with ``threshold`` set on the golden its weighted score decides, else every check of
    weight above 0 must pass. A check of weight 0 is run and reported, never counted; nor is
    a skipped model-graded check (the indexes in ``skipped``)."""
    threshold = golden.threshold if golden.threshold_given else None
    specs: Sequence[AssertSpec] = golden.asserts
    all_checks = checks
    if skipped:
        kept = [i for i in range(len(checks)) if i not in skipped]
        specs = [specs[i] for i in kept]
        checks = tuple([checks[i] for i in kept])
    passed, score = aggregate(specs, checks, threshold)
    notes = [
        f"informational (weight 0): {check.text} {'passed' if check.passed else 'failed'}"
        for spec, check in zip(specs, checks, strict=True)
        if spec.weight == 0
    ]
    if skipped:
        notes.append(_skipped_note(len(skipped)))
    notes.extend(extra_notes)
    if threshold is not None:
        failed = sum(
            1 for spec, c in zip(specs, checks, strict=True) if spec.weight > 0 and not c.passed
        )
        if not passed:
            notes.append(f"assert score {score:.3f} below threshold {threshold:g}")
        elif failed:
            notes.append(
                f"assert score {score:.3f} meets threshold {threshold:g}"
                f" ({failed} failed assert(s) rescued)"
            )
    status: Status = "pass" if passed else "fail"
    return _decided(golden, candidate, status, score, decided_by, all_checks, tuple(notes))


def error_result(golden: Golden, candidate: str, message: str) -> Result:
    """A pair that could not be scored (e.g. the model call failed): never a pass, and no
    score (an error says nothing of the answer, so it must not count as a wrong one in a
    mean score or the ranking)."""
    return _decided(golden, candidate, "error", None, None, (), (message,))


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
    # first_bad keeps its status: when every repeat passed it is the first one, a pass.
    return replace(
        first_bad,
        passed=True if passed == k else first_bad.passed,
        score=sum(scores) / len(scores) if scores else None,
        notes=tuple(notes),
        repeats=(passed, k),
    )
