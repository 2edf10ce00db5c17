"""``assay merge``: parse flags, merge the shard documents, print, return the exit code."""

from __future__ import annotations

from pathlib import Path

import click

from assay.cli import _options as opt
from assay.cli._common import chosen_format, deliver


@click.command("merge")
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
@opt.format_option()
@opt.json_option()
@opt.path_option("-o", "--output", help="Write the report to FILE.")
@opt.path_option(
    "-b",
    "--baseline",
    help="Baseline file: the one the shards checked (default: where they read it), or where "
    "--write-baseline writes.",
)
@click.option(
    "-w", "--write-baseline", is_flag=True, help="Write the baseline from the merged run."
)
@click.option("--force", is_flag=True, help=opt.FORCE_HELP)
def merge_command(
    files: tuple[Path, ...],
    fmt: str | None,
    as_json: bool,
    output: Path | None,
    baseline: Path | None,
    write_baseline: bool,
    force: bool,
) -> int:
    """Merge the --json documents of a run's shards (--shard I/N) into the whole run: one
    report and one verdict, exactly the unsharded run's (exit 2 only on a regression).

    \b
    Example (each CI job ran one shard):
      assay gate --check --shard 1/3 --json > shard-1.json   # and 2/3, 3/3
      assay merge shard-*.json --format junit --output report.xml
    """
    from assay.agent import merge_run
    from assay.config import load_config
    from assay.gate import read_shards
    from assay.views import render

    fmt = chosen_format(as_json, fmt)
    if force and not write_baseline:
        raise click.UsageError("--force applies to --write-baseline")
    config = load_config()
    merged = merge_run(
        read_shards(files), config, baseline=baseline, write_baseline=write_baseline, force=force
    )
    text = render(
        fmt, merged.document, merged.content, file=None if output is None else str(output)
    )
    deliver(text, merged.document, output)
    for reason in merged.undecided:  # the report is out; the exit code says: could not decide
        click.echo(f"assay: error: {reason}", err=True)
    return merged.exit_code
