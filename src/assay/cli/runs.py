"""``assay runs list``: the saved runs, gate, live and agent alike, oldest first."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click


@click.group("runs")
def runs_group() -> None:
    """The runs saved under .assay/runs/ (every gate, eval and bench run, unless --no-save)."""


@runs_group.command("list")
@click.option("-n", "--last", type=click.IntRange(min=1), help="Only the last N runs.")
@click.option("--json", "as_json", is_flag=True, help="The same as --format json.")
@click.option(
    "-f",
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "html"]),
    help="text (default), json, or html: the history as a page, with the pass rate over time.",
)
@click.option("-o", "--output", type=click.Path(path_type=Path), help="Write it to FILE.")
def list_command(last: int | None, as_json: bool, fmt: str | None, output: Path | None) -> int:
    """One line per saved run: id, kind, what it ran (mode, -k, shard), when, results, pass
    rate, verdict or score."""
    from assay.agent import load_run
    from assay.cli._common import chosen_format, emit
    from assay.errors import RunStoreError
    from assay.gate import list_runs
    from assay.views import dump_json

    chosen = chosen_format(as_json, fmt)
    root = Path.cwd()
    ids = list_runs(root)
    if last is not None:
        ids = ids[-last:]
    rows = []
    for run_id in ids:
        try:
            rows.append(_row(run_id, load_run(root, run_id)))
        except RunStoreError as exc:  # one damaged record does not hide the others
            click.echo(f"assay: warning: skipped {run_id}: {exc}", err=True)
    if chosen == "json":
        emit(dump_json({"runs": rows}), output)
    elif chosen == "html":
        from assay.views import render_history

        emit(render_history(rows), output)
    elif not rows:
        emit("no saved run yet: assay gate, eval and bench save one each\n", output)
    else:
        width = max(len(r["run_id"]) for r in rows)
        from assay.views import run_label

        labels = [run_label(r) for r in rows]
        label_width = max(len(label) for label in labels)
        lines = []
        for r, label in zip(rows, labels, strict=True):
            rate = "n/a" if r["pass_rate"] is None else f"{r['pass_rate'] * 100:.1f}%"
            lines.append(
                f"{r['run_id']:<{width}}  {r['kind']:<5}  {label:<{label_width}}  "
                f"{r['created_at'] or '-':<32}  "
                f"{r['total']:>6} results  pass {rate:>6}  {r['outcome']}"
            )
        emit("\n".join(lines) + "\n", output)
    return 0


def _row(run_id: str, document: dict[str, Any]) -> dict[str, Any]:
    summary = document.get("summary", {})
    kind = str(document.get("kind", "agent"))
    composite = summary.get("composite")
    if kind == "agent" and isinstance(composite, dict):
        outcome = f"score {composite.get('score', 0):.3f}"
    else:
        outcome = f"gate {summary.get('gate', 'n/a')}"
    return {
        "run_id": run_id,
        "kind": kind,
        "mode": _mode(document),
        "selection": _selection(document),
        "created_at": document.get("created_at"),
        "total": summary.get("total", 0),
        "pass_rate": summary.get("pass_rate"),
        "outcome": outcome,
    }


def _mode(document: dict[str, Any]) -> str | None:
    """report, check or write-baseline, as the record says (a gate record in its summary; an
    agent record in its selection, when it holds one)."""
    mode = document.get("summary", {}).get("mode") or document.get("selection", {}).get("mode")
    return str(mode) if mode else None


def _selection(document: dict[str, Any]) -> dict[str, Any]:
    """The part of the suite a run scored: its ``--filter`` patterns and ``--shard``, where the
    record holds them (an agent record's selection; a gate record's summary)."""
    summary, selection = document.get("summary", {}), document.get("selection") or {}
    patterns = selection.get("filter") or summary.get("filter")
    shard = selection.get("shard") or summary.get("shard")
    return {
        **({"filter": [str(p) for p in patterns]} if patterns else {}),
        **({"shard": str(shard)} if shard else {}),
    }
