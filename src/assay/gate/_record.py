"""A gate run's saved record (``.assay/runs/``, beside the agent runs'): what it came to, with
nothing of the suite's content in it.

Run records stay on disk and may be shared, so they hold no ground truth and no model content:
each check by its op only (``contains``, never ``contains:Paris``, which is the expected
answer), no reasons, evidence, notes or outputs (the run's report, which the user asked for,
shows those), and each regression by its kind only (``passed in the baseline, now fail``).
What remains is enough to list the run, show its summary and verdict, and tell which goldens
failed by which checks.

The results are kept as rows, ``[id, candidate, tier, status, score, decided_by, [failed check
ops]]``, so that saving a 10,000-golden run costs a few milliseconds, not the tens a full result
record per golden would; :func:`expand_rows` gives them back as result records for the views.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final

from assay.gate._verdict import QUOTED_ERRORS
from assay.vocabulary import STATUSES

if TYPE_CHECKING:
    from assay.gate._run import GateRun

# The summary keys a record keeps (the baseline path is the project-relative one).
_SUMMARY_KEYS: Final = tuple(
    "goldens mode gate shard filter gate_failures model_calls judge_calls_saved baseline".split()
)


def _redacted_why(why: str) -> str:
    """A regression's reason without what it quotes: the exact rule's reason names the failed
    checks with their arguments after a colon; the statistical one names only numbers."""
    head, sep, _ = why.partition(": ")
    return head if sep and head.startswith("passed in the baseline") else why


def gate_record(run: GateRun, document: dict[str, Any]) -> dict[str, Any]:
    """The record to save of ``run`` (``document`` is its ``--json`` document)."""
    rows = [
        [
            r.id,
            r.candidate,
            r.tier,
            r.status,
            r.score,
            r.decided_by,
            [c.recorded_op() for c in r.checks if not c.passed] if r.status != "pass" else [],
        ]
        for r in run.results
    ]
    given = document["summary"]  # the document's totals are the run's results' (the one source)
    summary = {
        "total": given["total"],
        "counts": dict(given["counts"]),
        "pass_rate": given["pass_rate"],
        "mean_score": given["mean_score"],
        "candidates": [s.to_dict() for s in run.summaries],
    }
    summary.update({key: given[key] for key in _SUMMARY_KEYS if key in given})
    if "undecided" in given:
        # Why the gate could not decide, without the first errors it quotes: a provider's or
        # judge's error message may hold the prompt, the output or the rubric.
        summary["undecided"] = [r.split(QUOTED_ERRORS, 1)[0] for r in given["undecided"]]
    record: dict[str, Any] = {"kind": "gate", "rows": rows, "summary": summary}
    if "regressions" in document:
        record["regressions"] = [
            {"id": r["id"], "candidate": r["candidate"], "why": _redacted_why(r["why"])}
            for r in document["regressions"]
        ]
    record["created_at"] = datetime.now(UTC).isoformat(timespec="microseconds")
    return record


def expand_rows(rows: list[Any]) -> list[dict[str, Any]]:
    """A gate record's rows as result records (each failed check by its op, as saved).

    Raises:
        ValueError: a row that is not of the shape :func:`gate_record` writes.
    """
    out = []
    for row in rows:
        golden_id, candidate, tier, status, score, decided_by, failed = row
        number = score is None or (isinstance(score, (int, float)) and not isinstance(score, bool))
        if not (
            isinstance(golden_id, str)
            and isinstance(candidate, str)
            and (tier is None or isinstance(tier, str))
            and status in STATUSES
            and number
            and (decided_by is None or isinstance(decided_by, str))
            and isinstance(failed, list)
            and all(isinstance(op, str) for op in failed)
        ):
            raise ValueError("not a gate record row")
        passed = True if status == "pass" else None if status == "needs-judge" else False
        checks = [
            {"text": op, "op": op, "passed": False, "reason": None, "evidence": None}
            for op in failed
        ]
        out.append(
            {
                "id": golden_id,
                "tier": tier,
                "candidate": candidate,
                "status": status,
                "passed": passed,
                "score": score,
                "decided_by": decided_by,
                "checks": checks,
            }
        )
    return out
