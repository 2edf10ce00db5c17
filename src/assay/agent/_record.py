"""The run record of an agent run, and the delta between two records."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from assay._version import __version__
from assay.agent._scoring import AgentRun
from assay.agent._taxonomy import CATEGORIES


def run_document(run: AgentRun, selection: Mapping[str, Any]) -> dict[str, Any]:
    """Everything report / failures / compare need later, without re-running anything; the
    schema version leads, as in every document assay writes."""
    document = run.to_dict()
    return {
        "schema_version": document.pop("schema_version"),
        "kind": document.pop("kind"),
        "assay_version": __version__,
        "created_at": datetime.now(UTC).isoformat(timespec="microseconds"),
        "selection": dict(selection),
        **document,
    }


def saved_record(
    document: Mapping[str, Any], root: Path, outputs: Mapping[str, Any] | None
) -> dict[str, Any]:
    """What a saved agent run holds: its document, the git branch and commit the project is
    at, and with ``keep_outputs`` each task's output (the agent's final text: ``outputs``),
    which ``assay view`` shows beside the task."""
    from assay.gate import git_state

    record = {**document, "git": git_state(root)}
    if outputs is not None:
        record["outputs"] = {"agent": dict(outputs)}
    return record


def _delta(before: Any, after: Any) -> dict[str, Any]:
    numbers = isinstance(before, int | float) and isinstance(after, int | float)
    return {"before": before, "after": after, "delta": after - before if numbers else None}


def compare_runs(previous: Mapping[str, Any], current: Mapping[str, Any]) -> dict[str, Any]:
    """Score, component, tier and per-task changes from ``previous`` to ``current``."""
    old = previous["summary"]["composite"]
    new = current["summary"]["composite"]
    before = {t["id"]: t["passed"] for t in previous.get("results", [])}
    flipped = []
    for task in current.get("results", []):
        was = before.get(task["id"])
        if was is not None and was != task["passed"]:
            flipped.append(
                {
                    "id": task["id"],
                    "before": "pass" if was else "fail",
                    "after": "pass" if task["passed"] else "fail",
                }
            )
    return {
        "previous_run": previous.get("run_id"),
        "score": _delta(old["score"], new["score"]),
        "components": {
            k: _delta(old["components"].get(k), v) for k, v in new["components"].items()
        },
        "per_tier": {k: _delta(old["per_tier"].get(k), v) for k, v in new["per_tier"].items()},
        "flipped": flipped,
    }


def failures_table(document: Mapping[str, Any]) -> dict[str, Any]:
    """Every failed task with its category and details, the count per category, and every task
    whose attestation zeroed Safety (``unsafe``: why, passed or not); of a gate
    run, every result that did not pass, its status as the category and its failed checks (by
    op: a record holds no arguments) as the details."""
    if document.get("kind") == "gate":
        return _gate_failures(document)
    rows = [
        {"id": t["id"], "tier": t["tier"], **t["failure"]}
        for t in document["results"]
        if t.get("failure")
    ]
    counts = dict.fromkeys(CATEGORIES, 0) | Counter(row["category"] for row in rows)
    # A task whose attestation zeroed Safety, passed or failed: the whole run's score is 0.
    unsafe = [
        {"id": t["id"], "tier": t["tier"], "safety": t["safety"]}
        for t in document["results"]
        if t.get("safety")
    ]
    return {"run_id": document.get("run_id"), "failures": rows, "counts": counts, "unsafe": unsafe}


def _gate_failures(document: Mapping[str, Any]) -> dict[str, Any]:
    rows = []
    for r in document["results"]:
        if r["status"] in ("pass", "needs-judge"):  # needs-judge is undecided, not failed
            continue
        failed = [c["op"] for c in r.get("checks", ()) if not c.get("passed")]
        where = f"{r['candidate']}: " if r.get("candidate") not in (None, "default") else ""
        details = f"{where}failed {', '.join(failed)}" if failed else f"{where}{r['status']}"
        rows.append(
            {"id": r["id"], "tier": r.get("tier"), "category": r["status"], "details": details}
        )
    counts = dict(Counter(row["category"] for row in rows))
    return {"run_id": document.get("run_id"), "failures": rows, "counts": counts}
