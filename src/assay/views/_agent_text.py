"""Text views of agent runs: the run itself, the report, the failures table, the compare."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def _rate(value: float | None) -> str:
    return "n/a" if value is None else f"{value * 100:.1f}%"


def _signed(value: float | None) -> str:
    return "n/a" if value is None else f"{value:+.3f}"


def summary_lines(document: Mapping[str, Any]) -> list[str]:
    summary = document["summary"]
    comp = summary["composite"]
    lines = [
        f"score {comp['score']:.3f}  ({summary['passed']}/{summary['tasks']} tasks passed, "
        f"cost ${summary['total_cost_usd']:.2f}, tiers {', '.join(summary['tiers'])})"
    ]
    lines.append("  " + "  ".join(f"{k} {v:.3f}" for k, v in comp["components"].items()))
    lines.append("  per tier: " + "  ".join(f"{k} {_rate(v)}" for k, v in comp["per_tier"].items()))
    for note in summary.get("safety_notes", []):
        lines.append(f"  safety: {note}")
    return lines


def render_run(
    document: Mapping[str, Any],
    comparison: Mapping[str, Any] | None = None,
    compare_note: str | None = None,
) -> str:
    results = document["results"]
    width = min(60, max([10, *(len(t["id"]) for t in results)]))
    run_id = document.get("run_id")
    lines = [f"agent run {run_id}" if run_id else "agent run (not saved)"]
    for task in results:
        label = "PASS" if task["passed"] else "FAIL"
        line = f"  {label:<5} {task['id']:<{width}}  {task['tier']:<11}"
        failure = task.get("failure")
        if failure:
            line += f"  {failure['category']}: {failure['details']}"
        lines.append(line.rstrip())
    lines.extend(summary_lines(document))
    if comparison is not None:
        lines.extend(render_compare(comparison))
    elif compare_note:
        lines.append(f"compare: {compare_note}")
    return "\n".join(lines) + "\n"


def render_compare(comparison: Mapping[str, Any]) -> list[str]:
    score = comparison["score"]
    lines = [
        f"compare with {comparison['previous_run']}: score {score['before']:.3f} → "
        f"{score['after']:.3f} ({_signed(score['delta'])})"
    ]
    lines.append(
        "  " + "  ".join(f"{k} {_signed(v['delta'])}" for k, v in comparison["components"].items())
    )
    lines.append(
        "  per tier: "
        + "  ".join(f"{k} {_signed(v['delta'])}" for k, v in comparison["per_tier"].items())
    )
    for flip in comparison["flipped"]:
        lines.append(f"  flipped {flip['id']}: {flip['before']} → {flip['after']}")
    if not comparison["flipped"]:
        lines.append("  no task flipped")
    return lines


def render_report(document: Mapping[str, Any]) -> str:
    lines = [f"run {document.get('run_id')} ({document.get('created_at')})"]
    lines.extend(summary_lines(document))
    return "\n".join(lines) + "\n"


def render_failures(table: Mapping[str, Any]) -> str:
    rows = table["failures"]
    lines = [f"failures in run {table['run_id']}: {len(rows)}"]
    if rows:
        width = min(60, max([4, *(len(r["id"]) for r in rows)]))
        lines.append(f"  {'task':<{width}}  {'category':<17} details")
        for row in rows:
            lines.append(f"  {row['id']:<{width}}  {row['category']:<17} {row['details']}")
    lines.append("counts: " + ", ".join(f"{k} {v}" for k, v in table["counts"].items()))
    return "\n".join(lines) + "\n"
