"""Per-(candidate, golden) results and their aggregates."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from assay.asserts import CheckResult

Status = Literal["pass", "fail", "needs-judge", "no-output", "error"]
STATUSES: Final[tuple[Status, ...]] = ("pass", "fail", "needs-judge", "no-output", "error")
DEFAULT_CANDIDATE: Final[str] = "default"


@dataclass(frozen=True, slots=True)
class Result:
    """The verdict on one candidate's output for one golden."""

    id: str
    tier: str
    candidate: str
    status: Status
    passed: bool | None
    score: float | None
    decided_by: str | None
    checks: tuple[CheckResult, ...] = ()
    notes: tuple[str, ...] = ()
    repeats: tuple[int, int] | None = None  # (passed, k) when the golden ran k > 1 times

    def failed_checks(self) -> list[CheckResult]:
        return [c for c in self.checks if not c.passed]

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "tier": self.tier,
            "candidate": self.candidate,
            "status": self.status,
            "passed": self.passed,
            "score": self.score,
            "decided_by": self.decided_by,
            "checks": [c.to_dict() for c in self.checks],
        }
        if self.notes:
            out["notes"] = list(self.notes)
        if self.repeats is not None:
            passed, k = self.repeats
            out["repeats"] = {
                "k": k,
                "passed": passed,
                "pass_fraction": passed / k,
                "pass_at_k": passed > 0,
                "pass_hat_k": passed == k,
                "flaky": 0 < passed < k,
            }
        return out


@dataclass(frozen=True, slots=True)
class CandidateSummary:
    """Aggregates of one candidate over the goldens."""

    candidate: str
    total: int
    counts: dict[str, int] = field(default_factory=dict)
    pass_rate: float = 0.0
    mean_score: float | None = None

    @property
    def decided(self) -> int:
        return self.counts.get("pass", 0) + self.counts.get("fail", 0)

    def to_dict(self) -> dict[str, Any]:
        return {
            "candidate": self.candidate,
            "total": self.total,
            "counts": dict(self.counts),
            "pass_rate": self.pass_rate,
            "mean_score": self.mean_score,
        }


def summarize(candidate: str, results: Iterable[Result]) -> CandidateSummary:
    counts: dict[str, int] = dict.fromkeys(STATUSES, 0)
    scores: list[float] = []
    total = 0
    for r in results:
        total += 1
        counts[r.status] += 1
        if r.score is not None:
            scores.append(r.score)
    pass_rate = counts["pass"] / total if total else 0.0
    mean = sum(scores) / len(scores) if scores else None
    return CandidateSummary(candidate, total, counts, pass_rate, mean)


def rank_key(summary: CandidateSummary) -> tuple[float, float, str]:
    """mean score desc, pass rate desc, candidate id asc (code-point order)."""
    mean = summary.mean_score if summary.mean_score is not None else -1.0
    return (-mean, -summary.pass_rate, summary.candidate)


def rank(summaries: Sequence[CandidateSummary]) -> list[CandidateSummary]:
    return sorted(summaries, key=rank_key)
