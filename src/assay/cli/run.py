"""``assay run``: parse flags, call the gate, print the report, return the exit code."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

import click

TIER_CHOICES = ("smoke", "standard", "stretch", "adversarial")


def emit(text: str, output: Path | None) -> None:
    """Print ``text`` or write it atomically to ``output``."""
    if output is None:
        click.echo(text, nl=False)
    else:
        from ..store import atomic_write_text

        atomic_write_text(output, text)


@click.command("run")
@click.argument("path", required=False, type=click.Path(path_type=Path))
@click.option("--outputs", type=click.Path(path_type=Path), help="Candidate outputs file.")
@click.option("--example", is_flag=True, help="Run the packaged example (goldens + outputs).")
@click.option(
    "--tier",
    "tiers",
    multiple=True,
    type=click.Choice(TIER_CHOICES),
    help="Only these tiers (repeatable).",
)
@click.option(
    "--similarity",
    type=click.Choice(("none", "difflib", "rapidfuzz")),
    help="Tier 2 backend (default from config, else none).",
)
@click.option("--baseline", type=click.Path(path_type=Path), help="Baseline file.")
@click.option("--write-baseline", is_flag=True, help="Write the baseline from this run.")
@click.option("--check", is_flag=True, help="Exit 2 when a golden regressed against the baseline.")
@click.option(
    "--force",
    is_flag=True,
    help="Let --write-baseline replace a baseline that decided goldens with one that decides none.",
)
@click.option("--no-cache", is_flag=True, help="Do not read or write assay's caches.")
@click.option("--self-test", is_flag=True, help="Run each golden's asserts on its own expected.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
@click.option(
    "--format", "fmt", type=click.Choice(("text", "json")), default=None, help="Report format."
)
@click.option("--output", type=click.Path(path_type=Path), help="Write the report to FILE.")
def run_command(
    path: Path | None,
    outputs: Path | None,
    example: bool,
    tiers: tuple[str, ...],
    similarity: str | None,
    baseline: Path | None,
    write_baseline: bool,
    check: bool,
    force: bool,
    no_cache: bool,
    self_test: bool,
    as_json: bool,
    fmt: str | None,
    output: Path | None,
) -> int:
    """Score candidate outputs against goldens; write or check the baseline."""
    from ..config import load_config
    from ..gate import GateOptions, load_selected, run_gate

    if write_baseline and check:
        raise click.UsageError("--write-baseline and --check cannot be used together")
    if as_json and fmt not in (None, "json"):
        raise click.UsageError("--json and --format text cannot be used together")
    fmt = "json" if as_json else (fmt or "text")
    config = load_config()
    mode = "write-baseline" if write_baseline else "check" if check else "report"
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
    )
    if self_test:
        from ..asserts import CheckContext
        from ..selftest import self_test as run_self_test

        report = run_self_test(
            load_selected(options, config), CheckContext(regex_timeout=config.regex_timeout_s)
        )
        if fmt == "json":
            document = {
                "checked": report.checked,
                "inconsistent": [
                    {"id": i.id, "source": i.source, "failed": [c.to_dict() for c in i.failed]}
                    for i in report.inconsistent
                ],
                "no_expected": report.no_expected,
                "no_origin": report.no_origin,
                "ok": report.ok,
            }
            emit(json.dumps(document, indent=2, ensure_ascii=False) + "\n", output)
        else:
            from ..report.text import render_self_test

            emit(render_self_test(report), output)
        return 0 if report.ok else 1
    run = run_gate(options, config)
    if fmt == "json":
        emit(json.dumps(run.to_dict(), indent=2, ensure_ascii=False) + "\n", output)
    else:
        from ..report.text import render_gate

        emit(render_gate(run), output)
    return run.exit_code
