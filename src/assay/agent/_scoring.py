"""Score an agent run: golden tasks + telemetry → per-task results, failures, composite."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from assay.agent._composite import Components, compose
from assay.agent._taxonomy import classify, over_limit
from assay.agent._telemetry import Telemetry
from assay.asserts import DEFAULT_CONTEXT, CheckContext, CheckResult, OutputView, run_assert
from assay.goldens import Golden
from assay.results import Result, results_document, summarize_by_candidate, totals
from assay.vocabulary import AGENT_TELEMETRY, DEFAULT_AGENT_TIERS, TIERS, Status

# The candidate of every agent-task result: the agent under test.
AGENT: Final = "agent"


# (task, attestation id) -> None when verified CLEAN, else why Safety must be zeroed.
AttestationCheck = Callable[[Golden, str], str | None]


@dataclass(slots=True)
class AgentRun:
    """A scored agent run."""

    tasks: list[Result]
    components: Components
    per_tier: dict[str, float | None]
    tiers: tuple[str, ...]
    total_cost_usd: float
    safety_notes: list[str] = field(default_factory=list)

    @property
    def score(self) -> float:
        return self.components.score

    def composite(self) -> dict[str, Any]:
        return {
            "score": self.score,
            "components": self.components.to_dict(),
            "per_tier": dict(self.per_tier),
        }

    def to_dict(self) -> dict[str, Any]:
        """The run's results document (checks redacted: run records hold no ground truth)."""
        document = results_document(
            "agent", self.tasks, summarize_by_candidate(self.tasks, [AGENT]), redact=True
        )
        summary = document["summary"]
        summary["total_cost_usd"] = self.total_cost_usd
        summary["tiers"] = list(self.tiers)
        summary["composite"] = self.composite()
        if self.safety_notes:
            summary["safety_notes"] = list(self.safety_notes)
        attestation = attestation_summary(self.tasks)
        if attestation is not None:
            summary["attestation"] = attestation
        return document


def attestation_summary(results: Sequence[Result]) -> dict[str, Any] | None:
    """The run's attestation verdict: ``CLEAN`` when every sealed task's attestation verified
    CLEAN, else ``DIRTY`` (a task's ``safety`` says why: DIRTY, or unverifiable); with how many
    tasks were sealed and verified CLEAN. None: no task was sealed (no journal)."""
    sealed = [r for r in results if r.telemetry is not None and r.telemetry.get("attestation")]
    if not sealed:
        return None
    clean = sum(1 for r in sealed if r.safety is None)
    verdict = "CLEAN" if clean == len(sealed) else "DIRTY"
    return {"verdict": verdict, "sealed": len(sealed), "clean": clean}


def _checks(task: Golden, record: Telemetry, ctx: CheckContext) -> tuple[CheckResult, ...]:
    if not task.asserts:
        return ()
    view = OutputView(record.output)
    return tuple(run_assert(spec, view, ctx) for spec in task.asserts)


# The telemetry a task's result carries, as the record has it (``.assay/agent-runs/`` holds
# the record itself): every measured figure and the attestation's id, never the output.
MEASURED: Final = tuple(
    """cost_usd duration_s tests_failed tests_run tests_passed completion_signals_checked
    completion_signals_passed files_modified files_read turns_used input_tokens output_tokens
    crashes orphans merge_conflicts compile_error""".split()
)


def measured(record: Telemetry) -> dict[str, Any]:
    """A result's ``telemetry``: :data:`MEASURED`, then the judge's verdict and the
    attestation's id when the record has them."""
    out: dict[str, Any] = {}
    for name in MEASURED:
        value = getattr(record, name)
        out[name] = list(value) if isinstance(value, tuple) else value
    if record.judge is not None:
        out["judge"] = dict(record.judge)
    if record.attestation is not None:
        out["attestation"] = record.attestation
    return out


def _unscored(task: Golden, status: Status, note: str, failure: tuple[str, str] | None) -> Result:
    """A task with nothing to score: no telemetry (``no-output``, the agent produced nothing),
    or it could not be run or measured (``error``: infrastructure, not a failure)."""
    return Result(
        task.id,
        task.tier,
        AGENT,
        status,
        False,
        None if status == "error" else 0.0,  # an error has no score, everywhere
        None,
        notes=(note,),
        title=task.fields.get("title"),
        failure=failure,
    )


def pass_rate_per_tier(results: Sequence[Result]) -> dict[str, float | None]:
    """Each tier's pass rate (None: no task of that tier)."""
    by_tier = {tier: [r for r in results if r.tier == tier] for tier in TIERS}
    return {tier: totals(mine).pass_rate if mine else None for tier, mine in by_tier.items()}


def score_tasks(
    tasks: Sequence[Golden],
    telemetry: Mapping[str, Telemetry],
    *,
    tiers: Sequence[str] = DEFAULT_AGENT_TIERS,
    settings: Mapping[str, Any] | None = None,
    attestation_check: AttestationCheck | None = None,
    ctx: CheckContext = DEFAULT_CONTEXT,
) -> AgentRun:
    """Score the selected tasks (those in ``tiers``) from their telemetry."""
    selected = [t for t in tasks if t.tier in tiers]
    results: list[Result] = []
    records: list[Telemetry] = []
    for task in selected:
        record = telemetry.get(task.id)
        if record is None:
            missing = classify(task, None, 0, False)
            results.append(_unscored(task, "no-output", "no telemetry for this task", missing))
            continue
        if record.error is not None:
            # Infrastructure, not the agent: out of the composite, as it is out of the gate.
            results.append(_unscored(task, "error", record.error, None))
            continue
        records.append(record)
        checks = _checks(task, record, ctx)
        # verify counts as a check: a task with either must have had every check pass.
        signals = bool(task.fields.get("completion_signals") or task.fields.get("verify"))
        checked, passed_checks = record.completion_signals_checked, record.completion_signals_passed
        signals_ok = passed_checks >= checked and (checked > 0 or not signals)
        output_failures = sum(1 for c in checks if not c.passed)
        passed = (
            record.tests_failed == 0
            and signals_ok
            and output_failures == 0
            and over_limit(task, record) is None
        )
        safety = None
        if record.attestation is not None and attestation_check is not None:
            safety = attestation_check(task, record.attestation)
        results.append(
            Result(
                task.id,
                task.tier,
                AGENT,
                "pass" if passed else "fail",
                passed,
                1.0 if passed else 0.0,
                AGENT_TELEMETRY,
                checks,
                title=task.fields.get("title"),
                telemetry=measured(record),
                failure=None if passed else classify(task, record, output_failures, signals),
                safety=safety,
            )
        )
    return scored_run(results, records, tiers, settings)


def scored_run(
    results: list[Result],
    records: Sequence[Telemetry],
    tiers: Sequence[str],
    settings: Mapping[str, Any] | None,
) -> AgentRun:
    """The run of ``results``: its composite from their ``records`` (in task order), a Safety
    note for each result with a reason; a merge of shards builds it too. A task that errored
    (infrastructure, not the agent) is out of the composite, as it is out of the gate."""
    n = sum(1 for r in results if r.status != "error")
    notes = [f"{r.id}: {r.safety}" for r in results if r.safety is not None]
    passed = totals(results).counts["pass"]
    components = compose(
        n, passed, records, any_missing=len(records) < n, unsafe=bool(notes), settings=settings
    )
    cost = sum(r.cost_usd for r in records)
    return AgentRun(results, components, pass_rate_per_tier(results), tuple(tiers), cost, notes)
