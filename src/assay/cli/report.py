"""``assay report`` and ``assay failures``: views of saved runs, gate, live and agent alike
(nothing is re-run)."""

from __future__ import annotations

from pathlib import Path

import click

from assay.cli._common import chosen_format, emit
from assay.cli._options import format_option
from assay.views import dump_json, render


@click.command("report")
@click.option("--run", "run_id", help="A saved run id (default: the latest).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
@format_option()
@click.option("-o", "--output", type=click.Path(path_type=Path), help="Write the report to FILE.")
def report_command(run_id: str | None, as_json: bool, fmt: str | None, output: Path | None) -> int:
    """Score, components, per-tier rates, cost and task count of a saved run."""
    from assay.agent import load_run

    fmt = chosen_format(as_json, fmt)
    if fmt == "outputs":
        raise click.UsageError("a saved run holds no outputs: --format outputs needs a live run")
    document = load_run(Path.cwd(), run_id)
    if fmt == "json":
        head = ("schema_version", "run_id", "created_at", "selection")
        view = {key: document.get(key) for key in head} | {"summary": document["summary"]}
        emit(dump_json(view), output)
    elif fmt == "text":
        from assay.views import render_summary

        emit(render_summary(document), output)
    else:
        emit(render(fmt, document), output)
    return 0


@click.command("failures")
@click.option("--run", "run_id", help="A saved run id (default: the latest).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
@format_option()
@click.option("-o", "--output", type=click.Path(path_type=Path), help="Write the table to FILE.")
def failures_command(
    run_id: str | None, as_json: bool, fmt: str | None, output: Path | None
) -> int:
    """The failure taxonomy of a saved run: task, category, details, and counts."""
    from assay.agent import failures_table, load_run

    fmt = chosen_format(as_json, fmt)
    document = load_run(Path.cwd(), run_id)
    if fmt == "json":
        emit(dump_json(failures_table(document)), output)
    elif fmt == "text":
        from assay.views import render_failures

        gate = document.get("kind") == "gate"
        emit(render_failures(failures_table(document), gate=gate), output)
    else:
        # Markdown, JUnit and HTML views of a run already lead with its failures.
        emit(render(fmt, document), output)
    return 0
