"""``assay gate``: score the outputs you give (a file, or the packaged example) against goldens,
and gate them against the baseline."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import click

from assay.cli._flows import baseline_mode, report_settings, run_gate_flow, selection
from assay.cli._help import SectionedCommand
from assay.cli._options import (
    BASELINE_SECTION,
    REPORT_SECTION,
    SELECTION_SECTION,
    baseline_options,
    report_options,
    selection_options,
    similarity_option,
)


@click.command(
    "gate",
    cls=SectionedCommand,
    sections=[
        ("What to score", ("outputs", "example")),
        ("Which goldens", SELECTION_SECTION),
        ("Scoring", ("similarity", "use_judge", "no_cache", "self_test")),
        ("Saved runs", ("no_save",)),
        ("Baseline", BASELINE_SECTION),
        ("Report", REPORT_SECTION),
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
@click.option(
    "--outputs",
    type=click.Path(path_type=Path),
    help="The outputs file (JSON or JSONL: golden id -> output, or candidate -> id -> output).",
)
@click.option("--example", is_flag=True, help="The packaged example's goldens and outputs.")
@selection_options()
@similarity_option()
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
@baseline_options()
@report_options()
def gate_command(
    path: Path | None,
    outputs: Path | None,
    example: bool,
    tiers: tuple[str, ...],
    patterns: tuple[str, ...],
    shard_spec: str | None,
    similarity: str | None,
    use_judge: bool,
    no_cache: bool,
    no_save: bool,
    self_test: bool,
    baseline: Path | None,
    write_baseline: bool,
    check: bool,
    alpha: float | None,
    force: bool,
    fmt: str | None,
    as_json: bool,
    output: Path | None,
    quiet: bool,
    failures_only: bool,
) -> int:
    """Score the outputs you give against goldens; with -c, exit 2 when a golden got worse.

    PATH is the goldens folder or file (default: the project's goldens, from assay.toml).
    """
    from assay.config import load_config
    from assay.gate._run import GateOptions

    if example and (path is not None or outputs is not None):
        raise click.UsageError("--example brings its own goldens and outputs: no PATH or --outputs")
    if self_test and (outputs is not None or write_baseline or check):
        raise click.UsageError("--self-test checks the goldens: no --outputs or baseline flag")
    if outputs is None and not example and not self_test:
        raise click.UsageError("say what to score: --outputs FILE (or --example)")
    mode = baseline_mode(write_baseline, check)
    if alpha is not None and mode != "check":
        raise click.UsageError("--alpha applies to --check")
    shard, chosen = selection(shard_spec, patterns, mode)
    report = report_settings(as_json, fmt, output, quiet, failures_only)
    options = GateOptions(
        path=path,
        outputs=outputs,
        example=example,
        tiers=cast(Any, tiers),
        similarity=similarity,
        baseline=baseline,
        mode=cast(Any, mode),
        force=force,
        no_cache=no_cache,
        judge=use_judge,
        alpha=alpha,
        shard=shard,
        filter=chosen,
    )
    return run_gate_flow(options, load_config(), report, self_test, save=not no_save)
