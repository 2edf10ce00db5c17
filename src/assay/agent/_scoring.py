"""Score an agent run: golden tasks + telemetry → per-task results, failures, composite."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from assay.agent._composite import Components, compose
from assay.agent._taxonomy import classify
from assay.agent._telemetry import Telemetry
from assay.asserts import DEFAULT_CONTEXT, CheckContext, OutputView, run_assert
from assay.goldens import TIERS, Golden

DEFAULT_AGENT_TIERS: Final = ("smoke", "standard", "stretch")

# (task, attestation id) -> None when verified CLEAN, else why Safety must be zeroed.
AttestationCheck = Callable[[Golden, str], str | None]


@dataclass(frozen=True, slots=True)
class TaskResult:
    """One task's outcome. Holds no ground truth: checks are recorded by op, not argument."""

    id: str
    tier: str
    title: str | None
    passed: bool
    has_telemetry: bool
    failure: tuple[str, str] | None
    checks: tuple[tuple[str, bool], ...] = ()
    cost_usd: float = 0.0
    duration_s: float = 0.0
    tests_failed: int = 0
    safety: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "tier": self.tier,
            "title": self.title,
            "passed": self.passed,
            "telemetry": self.has_telemetry,
            "cost_usd": self.cost_usd,
            "duration_s": self.duration_s,
            "tests_failed": self.tests_failed,
            "checks": [{"op": op, "passed": ok} for op, ok in self.checks],
        }
        if self.failure is not None:
            out["failure"] = {"category": self.failure[0], "details": self.failure[1]}
        if self.safety is not None:
            out["safety"] = self.safety
        return out


@dataclass(slots=True)
class AgentRun:
    """A scored agent run."""

    tasks: list[TaskResult]
    components: Components
    per_tier: dict[str, float | None]
    tiers: tuple[str, ...]
    total_cost_usd: float
    safety_notes: list[str] = field(default_factory=list)

    @property
    def score(self) -> float:
        return self.components.score

    @property
    def passed(self) -> int:
        return sum(1 for t in self.tasks if t.passed)

    def composite(self) -> dict[str, Any]:
        return {
            "score": self.score,
            "components": self.components.to_dict(),
            "per_tier": dict(self.per_tier),
        }

    def summary(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "tasks": len(self.tasks),
            "passed": self.passed,
            "total_cost_usd": self.total_cost_usd,
            "tiers": list(self.tiers),
            "composite": self.composite(),
        }
        if self.safety_notes:
            out["safety_notes"] = list(self.safety_notes)
        return out


def _checks(task: Golden, record: Telemetry, ctx: CheckContext) -> tuple[tuple[str, bool], ...]:
    if not task.asserts:
        return ()
    view = OutputView(record.output)
    return tuple((spec.full_op, run_assert(spec, view, ctx).passed) for spec in task.asserts)


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
    results: list[TaskResult] = []
    records: list[Telemetry] = []
    safety_notes: list[str] = []
    unsafe = False
    for task in selected:
        record = telemetry.get(task.id)
        if record is None:
            results.append(
                TaskResult(
                    task.id,
                    task.tier,
                    task.fields.get("title"),
                    False,
                    False,
                    classify(task, None, 0, False),
                )
            )
            continue
        records.append(record)
        checks = _checks(task, record, ctx)
        signals = bool(task.fields.get("completion_signals"))
        signals_ok = not signals or (
            record.completion_signals_checked > 0
            and record.completion_signals_passed == record.completion_signals_checked
        )
        output_failures = sum(1 for _, ok in checks if not ok)
        passed = record.tests_failed == 0 and signals_ok and output_failures == 0
        safety = None
        if record.attestation is not None and attestation_check is not None:
            safety = attestation_check(task, record.attestation)
            if safety is not None:
                unsafe = True
                safety_notes.append(f"{task.id}: {safety}")
        failure = None if passed else classify(task, record, output_failures, signals)
        results.append(
            TaskResult(
                task.id,
                task.tier,
                task.fields.get("title"),
                passed,
                True,
                failure,
                checks,
                record.cost_usd,
                record.duration_s,
                record.tests_failed,
                safety,
            )
        )
    n = len(selected)
    passed_count = sum(1 for r in results if r.passed)
    components = compose(
        n, passed_count, records, any_missing=len(records) < n, unsafe=unsafe, settings=settings
    )
    per_tier: dict[str, float | None] = {}
    for tier in TIERS:
        mine = [r for r in results if r.tier == tier]
        per_tier[tier] = sum(1 for r in mine if r.passed) / len(mine) if mine else None
    return AgentRun(
        results, components, per_tier, tuple(tiers), sum(r.cost_usd for r in records), safety_notes
    )
