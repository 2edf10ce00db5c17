"""``assay eval``: run prompt candidates live through their models over the goldens, score every
answer, rank the candidates, and gate them against the baseline."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from assay.cli import _options as opt
from assay.cli._flows import gate_options, run_gate_flow
from assay.cli._help import SectionedCommand


@click.command(
    "eval",
    cls=SectionedCommand,
    sections=[
        (
            "What to run",
            (
                "candidates",
                "candidate_ids",
                "repeats",
                "max_concurrency",
                "no_cache",
                "no_progress",
            ),
        ),
        ("Which goldens", opt.SELECTION_SECTION),
        ("Scoring", ("similarity", "use_judge")),
        ("Saved runs", ("no_save",)),
        *opt.JOB_SECTIONS,
    ],
    examples=[
        ("assay eval goldens/ --candidates candidates.yaml", "every candidate on every golden"),
        ("assay eval goldens/ --candidates candidates.yaml -r 5", "five answers each: pass^k"),
        (
            "assay eval goldens/ --candidates candidates.yaml --candidate brief",
            "only the candidate 'brief'",
        ),
        ("assay eval goldens/ --candidates candidates.yaml -w", "write the baseline to commit"),
        (
            "assay eval goldens/ --candidates candidates.yaml -c --max-repeats 10",
            "CI: more trials where the first ones cannot decide",
        ),
        ("assay eval goldens/ --candidates candidates.yaml --judge", "let the judge grade"),
    ],
)
@click.argument("path", required=False, type=click.Path(path_type=Path))
@opt.path_option(
    "--candidates", required=True, help="The candidates file: a provider and the prompts to run."
)
@click.option(
    "--candidate",
    "candidate_ids",
    multiple=True,
    metavar="ID",
    help="Only this candidate of the file (repeat for more; default: all of them).",
)
@opt.count_option(
    "-r",
    "--repeats",
    help_text="Answers per candidate and golden (default: the candidates file's, else 1).",
)
@opt.count_option(
    "--max-concurrency",
    help_text="Model calls in flight at once (default: the candidates file's, else 64).",
)
@click.option("--no-cache", is_flag=True, help="Call the models again: do not use the cache.")
@click.option("--no-save", is_flag=True, help="Do not save the run's record (assay runs list).")
@click.option(
    "--no-progress",
    is_flag=True,
    help="No progress on stderr (by default: a redrawn line on a terminal, a line every few "
    "seconds in a log).",
)
@opt.selection_options()
@opt.similarity_option()
@click.option(
    "--judge", "use_judge", is_flag=True, help="Let the [judge] model decide goldens that reach it."
)
@opt.baseline_options(max_repeats=True)
@opt.report_options()
def eval_command(
    path: Path | None,
    candidates: Path,
    candidate_ids: tuple[str, ...],
    repeats: int | None,
    max_concurrency: int | None,
    no_progress: bool,
    **flags: Any,  # those eval shares with gate: see gate_options
) -> int:
    """Run prompt candidates through their models over the goldens, score and rank them.

    PATH is the goldens folder or file (default: the project's goldens, from assay.toml).
    """
    from assay.config import load_config

    if candidate_ids and flags["write_baseline"]:
        raise click.UsageError(
            "--candidate and --write-baseline cannot be used together: a baseline is written "
            "from every candidate"
        )
    report, options = gate_options(
        flags,
        path=path,
        candidates=candidates,
        progress=not no_progress,
        repeats=repeats,
        max_concurrency=max_concurrency,
        candidate_ids=tuple(dict.fromkeys(candidate_ids)),
    )
    return run_gate_flow(options, load_config(), report, False, save=not flags["no_save"])
