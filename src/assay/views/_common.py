"""What every renderer reads the same way from a results document (they only read)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

Document = Mapping[str, Any]

LABEL: dict[str, str] = {
    "pass": "PASS",
    "fail": "FAIL",
    "needs-judge": "NEEDS-JUDGE",
    "no-output": "NO-OUTPUT",
    "error": "ERROR",
}


def pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value * 100:.1f}%"


def score(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def signed(value: float | None) -> str:
    return "n/a" if value is None else f"{value:+.3f}"


def failed_checks(result: Mapping[str, Any]) -> list[str]:
    """``text: reason`` of every failed check (only the op in a redacted run record)."""
    return [
        f"{c['text']}: {c.get('reason') or 'failed'}"
        for c in result.get("checks", ())
        if not c["passed"]
    ]


def why(result: Mapping[str, Any]) -> list[str]:
    """Why a result is not a pass, most specific first: an agent task's failure category, the
    failed checks, else the notes."""
    failure = result.get("failure")
    lines = [f"{failure['category']}: {failure['details']}"] if failure else []
    lines += failed_checks(result)
    return lines or [str(n) for n in result.get("notes", ())]


def by_candidate(document: Document) -> dict[str, list[Mapping[str, Any]]]:
    """Results per candidate, in the ranked candidate order of the summary."""
    grouped: dict[str, list[Mapping[str, Any]]] = {c["candidate"]: [] for c in candidates(document)}
    for r in document["results"]:
        grouped.setdefault(r["candidate"], []).append(r)
    return grouped


def candidates(document: Document) -> Sequence[Mapping[str, Any]]:
    return list(document["summary"].get("candidates", ()))


def golden_ids(document: Document) -> list[str]:
    """Result ids in first-seen order (one matrix row each)."""
    return list(dict.fromkeys(r["id"] for r in document["results"]))


def title(document: Document) -> str:
    """``agent run <id>`` for an agent run, ``assay: N goldens`` for a gate run."""
    if document.get("kind") == "agent":
        run_id = document.get("run_id")
        return f"agent run {run_id}" if run_id else "agent run (not saved)"
    goldens = document["summary"].get("goldens", len(golden_ids(document)))
    return f"assay: {goldens} goldens"


def gate_state(document: Document) -> str:
    """``undecided`` (exit 1: too many errors to decide), ``failed`` (exit 2), ``passed``
    (checked against a baseline) or ``report`` (no gate)."""
    summary = document["summary"]
    if summary.get("undecided"):
        return "undecided"
    if summary.get("gate_failures"):
        return "failed"
    return "passed" if "regressions" in document else "report"
