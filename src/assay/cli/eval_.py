"""``assay eval``: run prompt candidates live through their models over the goldens, score every
answer, rank the candidates, and gate them against the baseline."""

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
    "eval",
    cls=SectionedCommand,
    sections=[
        ("What to run", ("candidates", "repeats", "max_concurrency", "no_cache", "no_progress")),
        ("Which goldens", SELECTION_SECTION),
        ("Scoring", ("similarity", "use_judge")),
        ("Saved runs", ("no_save",)),
        ("Baseline", BASELINE_SECTION),
        ("Report", REPORT_SECTION),
    ],
    examples=[
        ("assay eval goldens/ --candidates candidates.yaml", "every candidate on every golden"),
        ("assay eval goldens/ --candidates candidates.yaml -r 5", "five answers each: pass^k"),
        ("assay eval goldens/ --candidates candidates.yaml -w", "write the baseline to commit"),
        (
            "assay eval goldens/ --candidates candidates.yaml -c --max-repeats 10",
            "CI: more trials where the first ones cannot decide",
        ),
        ("assay eval goldens/ --candidates candidates.yaml --judge", "let the judge grade"),
    ],
)
@click.argument("path", required=False, type=click.Path(path_type=Path))
@click.option(
    "--candidates",
    required=True,
    type=click.Path(path_type=Path),
    help="The candidates file: a provider and the prompts to run.",
)
@click.option(
    "-r",
    "--repeats",
    type=click.IntRange(min=1),
    help="Answers per candidate and golden (default: the candidates file's, else 1).",
)
@click.option(
    "--max-concurrency",
    type=click.IntRange(min=1),
    help="Model calls in flight at once (default: the candidates file's, else 64).",
)
@click.option("--no-cache", is_flag=True, help="Call the models again: do not use the cache.")
@click.option("--no-save", is_flag=True, help="Do not save the run's record (assay runs list).")
@click.option(
    "--no-progress",
    is_flag=True,
    help="No progress on stderr (by default: a redrawn line on a terminal, a line every few "
    "seconds in a log).",
)
@selection_options()
@similarity_option()
@click.option(
    "--judge", "use_judge", is_flag=True, help="Let the [judge] model decide goldens that reach it."
)
@baseline_options(max_repeats=True)
@report_options()
def eval_command(
    path: Path | None,
    candidates: Path,
    repeats: int | None,
    max_concurrency: int | None,
    no_cache: bool,
    no_save: bool,
    no_progress: bool,
    tiers: tuple[str, ...],
    patterns: tuple[str, ...],
    shard_spec: str | None,
    similarity: str | None,
    use_judge: bool,
    baseline: Path | None,
    write_baseline: bool,
    check: bool,
    alpha: float | None,
    max_repeats: int | None,
    force: bool,
    fmt: str | None,
    as_json: bool,
    output: Path | None,
    quiet: bool,
    failures_only: bool,
) -> int:
    """Run prompt candidates through their models over the goldens, score and rank them.

    PATH is the goldens folder or file (default: the project's goldens, from assay.toml).
    """
    from assay.config import load_config
    from assay.gate._run import GateOptions

    mode = baseline_mode(write_baseline, check)
    if (alpha is not None or max_repeats is not None) and mode != "check":
        raise click.UsageError("--alpha and --max-repeats apply to --check")
    shard, chosen = selection(shard_spec, patterns, mode)
    report = report_settings(as_json, fmt, output, quiet, failures_only)
    options = GateOptions(
        path=path,
        tiers=cast(Any, tiers),
        similarity=similarity,
        baseline=baseline,
        mode=cast(Any, mode),
        force=force,
        no_cache=no_cache,
        candidates=candidates,
        judge=use_judge,
        progress=not no_progress,
        alpha=alpha,
        max_repeats=max_repeats,
        shard=shard,
        filter=chosen,
        repeats=repeats,
        max_concurrency=max_concurrency,
    )
    return run_gate_flow(options, load_config(), report, False, save=not no_save)
