"""``assay report`` and ``assay failures``: views of saved agent runs (nothing is re-run)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from ._common import emit


@click.command("report")
@click.option("--run", "run_id", help="A saved run id (default: the latest).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
@click.option("--output", type=click.Path(path_type=Path), help="Write the report to FILE.")
def report_command(run_id: str | None, as_json: bool, output: Path | None) -> int:
    """Score, components, per-tier rates, cost and task count of a saved run."""
    from ..runs import load_run

    document = load_run(Path.cwd(), run_id)
    if as_json:
        view = {
            "run_id": document.get("run_id"),
            "created_at": document.get("created_at"),
            "selection": document.get("selection"),
            "summary": document["summary"],
        }
        emit(json.dumps(view, indent=2, ensure_ascii=False) + "\n", output)
    else:
        from ..report.agent import render_report

        emit(render_report(document), output)
    return 0


@click.command("failures")
@click.option("--run", "run_id", help="A saved run id (default: the latest).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
@click.option("--output", type=click.Path(path_type=Path), help="Write the table to FILE.")
def failures_command(run_id: str | None, as_json: bool, output: Path | None) -> int:
    """The failure taxonomy of a saved run: task, category, details, and counts."""
    from ..bench import failures_table
    from ..runs import load_run

    table = failures_table(load_run(Path.cwd(), run_id))
    if as_json:
        emit(json.dumps(table, indent=2, ensure_ascii=False) + "\n", output)
    else:
        from ..report.agent import render_failures

        emit(render_failures(table), output)
    return 0
