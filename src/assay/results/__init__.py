"""The one result shape, and the aggregates computed from results (in this module only).

A :class:`Result` is the verdict on one candidate for one golden: a gate pair, an agent task or
an item of the prompt-comparison API. Each job adds what only it has (repeats for live outputs;
title, telemetry, failure and safety for agent tasks) on the same record. Counts, pass rate, mean
score and the ranking are computed here, once, from results; renderers only read them.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Final

from assay.asserts import CheckResult
from assay.results._records import SCHEMA_VERSION, RecordType
from assay.vocabulary import STATUSES, Status

if TYPE_CHECKING:
    from assay.goldens import Golden

DEFAULT_CANDIDATE: Final[str] = "default"

__all__ = [
    "DEFAULT_CANDIDATE",
    "SCHEMA_VERSION",
    "STATUSES",
    "CallFailed",
    "CandidateSummary",
    "RecordType",
    "ReportContent",
    "Result",
    "Status",
    "Totals",
    "rank",
    "results_document",
    "summarize",
    "summarize_by_candidate",
    "totals",
]


@dataclass(frozen=True, slots=True)
class CallFailed:
    """An output that never came: the model call failed after its retries (the message names
    no content). Scored as ``error``, never a pass."""

    message: str


@dataclass(frozen=True, slots=True)
class Result:
    """The verdict on one candidate's output for one golden (or agent task, or API item).

    Attributes:
        id: the golden, task or item id.
        tier: the golden's tier (None for prompt-comparison items, which have none).
        candidate: the candidate (prompt variant, outputs column, or ``agent``).
        status: ``pass``, ``fail``, ``needs-judge``, ``no-output`` or ``error``.
        passed: True / False, or None when nothing decided (needs-judge).
        score: 0..1, or None when nothing scored it (needs-judge, and every error: a failed
            call or a judge error).
        decided_by: which tier or scorer decided (``tier1-asserts``, ``tier2-<backend>``,
            ``tier3-judge``, ``agent-telemetry``, ``scorer``), or None.
        checks: one record per assert (the same record everywhere).
        notes: why a tier was skipped, what the judge said, etc. (no output content).
        repeats: (passed, k) when the golden ran k > 1 times.
        title: an agent task's title.
        telemetry: an agent task's measured figures (cost, duration, tests, signals, files,
            orphans, ...) and its attestation's id (None: no telemetry); never its output.
        failure: an agent task's failure category and details.
        safety: why an agent task's attestation zeroed Safety, if it did.
        finish_reason: why a live model stopped (``stop``, ``length``, ...), when it said.
    """

    id: str
    tier: str | None
    candidate: str
    status: Status
    passed: bool | None
    score: float | None
    decided_by: str | None
    checks: tuple[CheckResult, ...] = ()
    notes: tuple[str, ...] = ()
    repeats: tuple[int, int] | None = None
    title: str | None = None
    telemetry: Mapping[str, Any] | None = None
    failure: tuple[str, str] | None = None
    safety: str | None = None
    finish_reason: str | None = None

    def __reduce__(self) -> tuple[type[Result], tuple[Any, ...]]:
        # Pickled as its fields, as Golden is (the parallel loader sends thousands).
        return Result, (
            self.id,
            self.tier,
            self.candidate,
            self.status,
            self.passed,
            self.score,
            self.decided_by,
            self.checks,
            self.notes,
            self.repeats,
            self.title,
            self.telemetry,
            self.failure,
            self.safety,
            self.finish_reason,
        )

    def failed_checks(self) -> list[CheckResult]:
        return [c for c in self.checks if not c.passed]

    def to_dict(self, *, redact: bool = False) -> dict[str, Any]:
        """The result as JSON; ``redact`` drops assert arguments (run records hold no truth)."""
        return self._to_dict(redact, None)

    def _to_dict(self, redact: bool, shared: dict[int, dict[str, Any]] | None) -> dict[str, Any]:
        """:meth:`to_dict`; with ``shared``, the record of a passing check is made once per
        check object and shared by every result holding it (one document's results share the
        passing checks of their asserts: 300,000 records for 100,000 goldens, 3 objects)."""
        if shared is None:
            checks = [c.to_redacted_dict() if redact else c.to_dict() for c in self.checks]
        else:
            checks = []
            for c in self.checks:
                record = shared.get(id(c)) if c.passed else None
                if record is None:
                    record = c.to_redacted_dict() if redact else c.to_dict()
                    if c.passed:
                        shared[id(c)] = record
                checks.append(record)
        out: dict[str, Any] = {
            "id": self.id,
            "tier": self.tier,
            "candidate": self.candidate,
            "status": self.status,
            "passed": self.passed,
            "score": self.score,
            "decided_by": self.decided_by,
            "checks": checks,
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
        if self.title is not None:
            out["title"] = self.title
        if self.telemetry is not None:
            out["telemetry"] = dict(self.telemetry)
        if self.failure is not None:
            out["failure"] = {"category": self.failure[0], "details": self.failure[1]}
        if self.safety is not None:
            out["safety"] = self.safety
        if self.finish_reason is not None:
            out["finish_reason"] = self.finish_reason
        return out


@dataclass(frozen=True, slots=True)
class Totals:
    """Counts, pass rate and mean score of a group of results."""

    total: int
    counts: dict[str, int]
    pass_rate: float
    mean_score: float | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)  # the fields in their order, counts copied


def totals(results: Iterable[Result]) -> Totals:
    """Counts per status; pass rate = passes / results; mean score over the results that have a
    score (a needs-judge or error result has none and does not count)."""
    counts: dict[str, int] = dict.fromkeys(STATUSES, 0)
    scores: list[float] = []
    total = 0
    for r in results:
        total += 1
        counts[r.status] += 1
        if r.score is not None:
            scores.append(r.score)
    pass_rate = counts["pass"] / total if total else 0.0
    mean = math.fsum(scores) / len(scores) if scores else None
    return Totals(total, counts, pass_rate, mean)


@dataclass(frozen=True, slots=True)
class CandidateSummary:
    """Aggregates of one candidate over its results (kept in input order)."""

    candidate: str
    total: int
    counts: dict[str, int] = field(default_factory=dict)
    pass_rate: float = 0.0
    mean_score: float | None = None
    results: tuple[Result, ...] = ()

    def to_dict(self, *, with_results: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {
            "candidate": self.candidate,
            "total": self.total,
            "counts": dict(self.counts),
            "pass_rate": self.pass_rate,
            "mean_score": self.mean_score,
        }
        if with_results:
            out["results"] = [r.to_dict() for r in self.results]
        return out


def summarize(candidate: str, results: Iterable[Result]) -> CandidateSummary:
    """One candidate's aggregates (see :func:`totals`)."""
    kept = tuple(results)
    t = totals(kept)
    return CandidateSummary(candidate, t.total, t.counts, t.pass_rate, t.mean_score, kept)


def summarize_by_candidate(
    results: Iterable[Result], candidates: Sequence[str] = ()
) -> list[CandidateSummary]:
    """Ranked summaries of every candidate in ``candidates`` (even one with no result) and every
    candidate the results name."""
    grouped: dict[str, list[Result]] = {c: [] for c in candidates}
    for r in results:
        grouped.setdefault(r.candidate, []).append(r)
    return rank([summarize(c, rs) for c, rs in grouped.items()])


def rank_key(summary: CandidateSummary) -> tuple[float, float, str]:
    """mean score desc, pass rate desc, candidate id asc (code points).

    The mean is over the results that have a score: an error (a failed call, a judge that
    could not grade) has none, so it neither lowers a mean like a wrong answer nor raises it;
    it counts against the pass rate (it did not pass), the tie-break. A candidate with no
    score at all (every result an error or needs-judge) ranks after every candidate with one:
    nothing is known of it. Candidates equal on both numbers are in id order."""
    mean = summary.mean_score if summary.mean_score is not None else -math.inf
    return (-mean, -summary.pass_rate, summary.candidate)


def rank(summaries: Iterable[CandidateSummary]) -> list[CandidateSummary]:
    """The one ranking: mean score desc, pass rate desc, candidate id asc (locale-free)."""
    return sorted(summaries, key=rank_key)


def results_document(
    kind: str,
    results: Sequence[Result],
    summaries: Sequence[CandidateSummary],
    *,
    redact: bool = False,
) -> dict[str, Any]:
    """The document every view reads: ``schema_version``, ``kind``, ``results`` and a
    ``summary`` with the totals and the ranked candidates. Each job adds its own sections."""
    shared: dict[int, dict[str, Any]] = {}  # the results (and their checks) outlive it
    return {
        "schema_version": SCHEMA_VERSION,
        "kind": kind,
        "results": [r._to_dict(redact, shared) for r in results],
        "summary": {
            **totals(results).to_dict(),
            "candidates": [s.to_dict() for s in summaries],
        },
    }


@dataclass(frozen=True, slots=True)
class ReportContent:
    """Content a view may show besides the results document (the HTML report's detail panels):
    never part of the document, never written to run records.

    Attributes:
        goldens: golden id -> golden (input, expected, rubric).
        outputs: candidate -> golden id -> output.
        baseline: the baseline document, for the "before" of each regression.
    """

    goldens: Mapping[str, Golden] = field(default_factory=dict)
    outputs: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    baseline: Mapping[str, Any] | None = None
