"""``assay gate``: score the outputs you give (a file, or the packaged example) against goldens,
and gate them against the baseline."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from assay.cli import _options as opt
from assay.cli._flows import gate_options, run_gate_flow
from assay.cli._help import SectionedCommand


@click.command(
    "gate",
    cls=SectionedCommand,
    sections=[
        ("What to score", ("outputs", "example")),
        ("Which goldens", opt.SELECTION_SECTION),
        ("Scoring", ("similarity", "use_judge", "no_cache", "self_test")),
        ("Saved runs", ("no_save",)),
        *opt.JOB_SECTIONS,
    ],
    examples=[
        ("assay gate goldens/ --outputs outputs.json", "score the outputs, report every golden"),
        ("assay gate goldens/ --outputs outputs.json -w", "write assay-baseline.json to commit"),
        ("assay gate goldens/ --outputs outputs.json -c", "CI: exit 2 when a golden got worse"),
        ("assay gate goldens/ --outputs outputs.json -k 'sql-*' -q", "some goldens, briefly"),
        ("assay gate --example", "the packaged example"),
        ("assay gate goldens/ --self-test", "each golden's asserts against its own expected"),
    ],
)
@click.argument("path", required=False, type=click.Path(path_type=Path))
@opt.path_option(
    "--outputs",
    help="The outputs file (JSON or JSONL: golden id -> output, or candidate -> id -> output).",
)
@click.option("--example", is_flag=True, help="The packaged example's goldens and outputs.")
@opt.selection_options()
@opt.similarity_option()
@click.option(
    "--judge", "use_judge", is_flag=True, help="Let the [judge] model decide goldens that reach it."
)
@click.option("--no-cache", is_flag=True, help="Do not read or write the judge's cache.")
@click.option("--no-save", is_flag=True, help="Do not save the run's record (assay runs list).")
@click.option(
    "--self-test",
    is_flag=True,
    help="Run each golden's asserts on its own expected answer (no outputs needed).",
)
@opt.baseline_options()
@opt.report_options()
def gate_command(
    path: Path | None,
    outputs: Path | None,
    example: bool,
    self_test: bool,
    **flags: Any,  # those gate shares with eval: see gate_options
) -> int:
    """Score the outputs you give against goldens; with -c, exit 2 when a golden got worse.

    PATH is the goldens folder or file (default: the project's goldens, from assay.toml).
    """
    from assay.config import load_config

    if example and (path is not None or outputs is not None):
        raise click.UsageError("--example brings its own goldens and outputs: no PATH or --outputs")
    if self_test and (outputs is not None or flags["write_baseline"] or flags["check"]):
        raise click.UsageError("--self-test checks the goldens: no --outputs or baseline flag")
    if outputs is None and not example and not self_test:
        raise click.UsageError("say what to score: --outputs FILE (or --example)")
    report, options = gate_options(flags, path=path, outputs=outputs, example=example)
    return run_gate_flow(options, load_config(), report, self_test, save=not flags["no_save"])
