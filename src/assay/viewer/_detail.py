"""A golden of a run in detail, and two runs compared golden by golden.

The expected answer and the input come only from the project's own goldens, read when asked
for: a run record never holds them (docs/contract.md), and one a hand-edited record claims is
not shown. An agent task's journal is shown as its timeline (kind, path, command, endpoint),
never the file contents it holds.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Final

from assay.errors import AssayError
from assay.viewer._recheck import RECORDED, recheck, shown
from assay.viewer._runs import BASELINE_ID, NoRun, RunStore, rows_of, summary_of

_JOURNAL_EVENTS: Final = 5000  # a timeline longer than this is cut (the count says so)
_JOURNAL_KEYS: Final = ("index", "kind", "path", "command", "argv", "endpoint", "host", "port")


def _find_row(rows: list[dict[str, Any]], golden_id: str, candidate: str | None) -> dict[str, Any]:
    for row in rows:
        if row["id"] == golden_id and (candidate is None or row["candidate"] == candidate):
            return row
    raise NoRun(golden_id)


def project_golden(root: Path, golden_id: str) -> tuple[Any, dict[str, Any]]:
    """The project's own golden of that id (None when it has none), and where its expected
    answer came from (``expected_from``: the golden's source) or why none could be read."""
    from assay.config import load_config
    from assay.goldens import iter_goldens

    found: dict[str, Any] = {"expected_from": None, "goldens_error": None}
    try:
        config = load_config(root)
        if config.goldens.exists():
            for golden in iter_goldens(config.goldens, strict=config.strict):
                if golden.id == golden_id:
                    return golden, {**found, "expected_from": golden.source}
    except AssayError as exc:  # a broken golden elsewhere: say so, show the rest of the page
        found["goldens_error"] = str(exc)
    return None, found


def golden_detail(
    store: RunStore, run_id: str, golden_id: str, candidate: str | None
) -> dict[str, Any]:
    """The Row of ``golden_id`` (of ``candidate``, else its first) in run ``run_id``, with the
    expected answer and input of the project's golden, the journal and the attestation, and
    (a gate run's golden) its checks recomputed from the kept output (assay.viewer._recheck)."""
    record = store.record(run_id)
    row = dict(_find_row(rows_of(record), golden_id, candidate))
    golden, source = project_golden(store.root, golden_id)
    has_expected = golden is not None and golden.has_expected
    row["expected"] = shown(golden.expected) if has_expected else None
    row["input"] = shown(golden.input) if golden is not None else None
    row["rubric"] = golden.rubric if golden is not None else None
    row.update(source)
    result: dict[str, Any] = next(
        (
            r
            for r in record["results"]
            if r.get("id") == golden_id and r.get("candidate") == row["candidate"]
        ),
        {},
    )
    row["journal"] = _journal(store.root, record, golden_id)
    row["attestation"] = _attestation(result)
    if record.get("kind") == "gate":
        row.update(recheck(row, record, golden, store.root))
    else:  # an agent task's checks are its tests, not asserts: the record's, as they are
        row.update({"checks_source": RECORDED, "checks_note": None, "recomputed": None})
    return row


def _journal(root: Path, record: dict[str, Any], task_id: str) -> dict[str, Any] | None:
    """The task's journal as a timeline, when the run's telemetry folder (inside the project)
    holds one."""
    telemetry = (record.get("selection") or {}).get("telemetry")
    if record.get("kind", "agent") != "agent" or not isinstance(telemetry, str):
        return None
    from assay.viewer._runs import is_safe_name

    if not is_safe_name(task_id):
        return None
    project = root.resolve()
    path = (Path(telemetry) / f"{task_id}.journal.jsonl").resolve()
    if not path.is_relative_to(project) or not path.is_file():
        return None
    events: list[dict[str, Any]] = []
    total = 0
    try:
        with path.open("rb") as handle:
            for line in handle:
                total += 1
                if len(events) >= _JOURNAL_EVENTS:
                    continue
                try:
                    event = json.loads(line.removeprefix(b"\xef\xbb\xbf"))
                except ValueError:
                    continue
                if isinstance(event, dict):
                    events.append({k: event[k] for k in _JOURNAL_KEYS if k in event})
    except OSError:
        return None
    return {"events": events, "total": total}


def _attestation(result: dict[str, Any]) -> dict[str, Any] | None:
    """The task's attestation as scored: its id, and a DIRTY verdict with the reason when it
    zeroed Safety."""
    telemetry = result.get("telemetry") or {}
    attestation = telemetry.get("attestation") if isinstance(telemetry, dict) else None
    safety = result.get("safety")
    if attestation is None and safety is None:
        return None
    return {
        "id": attestation,
        "verdict": "dirty" if safety else "clean",
        "reasons": [str(safety)] if safety else [],
    }


# ------------------------------------------------------------------------- compare

_RANK: Final = {"pass": 3, "needs-judge": 2, "fail": 1, "no-output": 0, "error": 0}


def baseline_side(root: Path) -> tuple[dict[str, Any], dict[tuple[str, str], dict[str, Any]]]:
    """The project's committed baseline as a compare side: its summary and results."""
    from assay.config import load_config
    from assay.gate import load_baseline

    config = load_config(root)
    try:
        document = load_baseline(config.baseline)
    except AssayError as exc:
        raise NoRun(str(exc)) from None
    summaries = [s for s in (document.get("summary") or {}).values() if isinstance(s, dict)]
    results = {}
    for candidate, goldens in (document.get("goldens") or {}).items():
        for golden_id, entry in (goldens or {}).items():
            results[(candidate, golden_id)] = {
                "status": entry.get("status"),
                "score": entry.get("score"),
                "output": None,
            }
    total = {"total": sum(int(s.get("total", 0)) for s in summaries), "counts": _summed(summaries)}
    first = summaries[0] if len(summaries) == 1 else {}
    record = {
        "kind": document.get("kind", "gate"),
        "command": "gate",
        "suite": document.get("suite"),
        "summary": {
            **total,
            "candidates": summaries,
            "mode": "write-baseline",
            "pass_rate": first.get("pass_rate"),
            "mean_score": first.get("mean_score"),
        },
    }
    summary = summary_of(BASELINE_ID, record)
    summary["kind"] = "bench" if document.get("kind") == "agent" else "gate"
    return summary, results


def _summed(summaries: list[dict[str, Any]]) -> dict[str, int]:
    out: dict[str, int] = {}
    for s in summaries:
        for status, n in (s.get("counts") or {}).items():
            out[status] = out.get(status, 0) + int(n)
    return out


def _side(
    store: RunStore, run_id: str
) -> tuple[dict[str, Any], dict[tuple[str, str], Any], dict[str, Any]]:
    record = store.record(run_id)
    rows = {
        (r["candidate"], r["id"]): {
            "status": r["status"],
            "score": r["score"],
            "output": r["output"],
        }
        for r in rows_of(record)
    }
    return summary_of(run_id, record), rows, record


def compare(store: RunStore, a: str, b: str) -> dict[str, Any]:
    """Runs ``a`` (before) and ``b`` (after) golden by golden; with ``b`` the baseline, the
    baseline is before and ``a`` after. Rows: regressions first, then the biggest change."""
    if b == BASELINE_ID:
        before_summary, before = baseline_side(store.root)
        after_summary, after, after_record = _side(store, a)
        a_summary, b_summary = after_summary, before_summary
    else:
        before_summary, before, _ = _side(store, a)
        after_summary, after, after_record = _side(store, b)
        a_summary, b_summary = before_summary, after_summary
    rows = [
        _compared(key, before.get(key), after.get(key))
        for key in [*before, *(k for k in after if k not in before)]
    ]
    order = {"regressed": 0, "improved": 1, "added": 2, "removed": 2, "same": 3}
    rows.sort(key=lambda r: (order[r["change"]], -abs(r["delta"] or 0.0)))
    return {
        "a": a_summary,
        "b": b_summary,
        "before": before_summary["run_id"],
        "after": after_summary["run_id"],
        "rows": rows,
        "conclusion": _conclusion(after_summary, after_record),
    }


def _compared(key: tuple[str, str], before: Any, after: Any) -> dict[str, Any]:
    if before is None:
        change = "added"
    elif after is None:
        change = "removed"
    else:
        was, now = _RANK.get(before["status"], 0), _RANK.get(after["status"], 0)
        change = "regressed" if now < was else "improved" if now > was else "same"
    numbers = before is not None and after is not None
    numbers = numbers and all(isinstance(s["score"], int | float) for s in (before, after))
    delta = after["score"] - before["score"] if numbers else None
    return {
        "id": key[1],
        "candidate": key[0],
        "before": before,
        "after": after,
        "change": change,
        "delta": delta,
    }


def _conclusion(summary: dict[str, Any], record: dict[str, Any]) -> dict[str, Any] | None:
    """What the gate concluded, when the later run was a check against the baseline."""
    if summary["mode"] != "check":
        return None
    return {
        "gate": summary.get("gate"),
        "regressions": [
            {"id": r.get("id"), "candidate": r.get("candidate"), "why": r.get("why")}
            for r in record.get("regressions") or ()
            if isinstance(r, dict)
        ],
        "gate_failures": list((record.get("summary") or {}).get("gate_failures") or ()),
    }
