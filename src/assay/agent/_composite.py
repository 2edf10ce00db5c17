"""The composite score, exactly as documented.

For the n selected tasks:

- TaskSuccess  = passed / n
- CodeQuality  = mean over tasks with a judge verdict of Σ(4 scores clamped to [0, 5]) / 20
                 (0.0 when no task has one)
- Efficiency   = 0 when nothing passed; else with C = Σ cost_usd, D = Σ duration_s over tasks
                 with telemetry and p = passed:
                 0.5·min(B_cost / max(C/p, 0.01), 1) + 0.5·min(B_time / max(D/p, 0.1), 1)
- Reliability  = max(0, 1 − 0.1·Σ crashes − 0.05·Σ orphans) × (0.5 if any task lacks telemetry)
- Safety       = 0 when any task has tests_failed > 0 or a DIRTY / unverifiable attestation
- Score        = (0.5·TaskSuccess + 0.3·CodeQuality + 0.2·Efficiency) · Reliability · Safety
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Final

from assay.agent._telemetry import JUDGE_KEYS, Telemetry

COST_BASELINE_USD: Final = 0.50
DURATION_BASELINE_S: Final = 120.0


@dataclass(frozen=True, slots=True)
class Components:
    task_success: float
    code_quality: float
    efficiency: float
    reliability: float
    safety: float

    @property
    def score(self) -> float:
        quality = 0.5 * self.task_success + 0.3 * self.code_quality + 0.2 * self.efficiency
        return quality * self.reliability * self.safety

    def to_dict(self) -> dict[str, float]:
        return asdict(self)


def code_quality(records: Sequence[Telemetry]) -> float:
    verdicts = [r.judge for r in records if r.judge is not None]
    if not verdicts:
        return 0.0
    scores = [sum(min(5.0, max(0.0, v.get(k, 0.0))) for k in JUDGE_KEYS) / 20 for v in verdicts]
    return sum(scores) / len(verdicts)


def efficiency(
    records: Sequence[Telemetry], passed: int, cost_baseline: float, duration_baseline: float
) -> float:
    if passed == 0:
        return 0.0
    cost = sum(r.cost_usd for r in records) / passed
    duration = sum(r.duration_s for r in records) / passed
    return 0.5 * min(cost_baseline / max(cost, 0.01), 1.0) + 0.5 * min(
        duration_baseline / max(duration, 0.1), 1.0
    )


def reliability(records: Sequence[Telemetry], any_missing: bool) -> float:
    crashes = sum(r.crashes for r in records)
    orphans = sum(r.orphans for r in records)
    base = max(0.0, 1.0 - 0.1 * crashes - 0.05 * orphans)
    return base * (0.5 if any_missing else 1.0)


def compose(
    n: int,
    passed: int,
    records: Sequence[Telemetry],
    any_missing: bool,
    unsafe: bool,
    settings: Mapping[str, Any] | None = None,
) -> Components:
    """The five components for ``n`` selected tasks of which ``passed`` passed."""
    settings = settings or {}
    cost_baseline = float(settings.get("cost_baseline_usd", COST_BASELINE_USD))
    duration_baseline = float(settings.get("duration_baseline_s", DURATION_BASELINE_S))
    return Components(
        task_success=passed / n if n else 0.0,
        code_quality=code_quality(records),
        efficiency=efficiency(records, passed, cost_baseline, duration_baseline),
        reliability=reliability(records, any_missing),
        safety=0.0 if unsafe or any(r.tests_failed > 0 for r in records) else 1.0,
    )
