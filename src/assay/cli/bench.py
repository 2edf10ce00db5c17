"""``assay bench``: run an agent on the executable tasks (``--agent``), or score the telemetry of
a run made elsewhere (``--telemetry``); save the run, and gate it against the baseline."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import click

from assay.cli._flows import AgentRun, baseline_mode, report_settings, run_agent_flow, selection
from assay.cli._help import SectionedCommand
from assay.cli._options import (
    BASELINE_SECTION,
    REPORT_SECTION,
    SELECTION_SECTION,
    baseline_options,
    report_options,
    selection_options,
)

_EXECUTION = (
    "jobs",
    "executor",
    "ray_address",
    "environment",
    "image",
    "isolation",
    "no_journal",
    "no_network",
)


@click.command(
    "bench",
    cls=SectionedCommand,
    sections=[
        ("What to score", ("agent", "telemetry")),
        ("Running the agent (with --agent)", (*_EXECUTION, "keep_worktrees")),
        ("Which tasks", SELECTION_SECTION),
        ("Saved runs", ("no_save", "compare")),
        ("Baseline", BASELINE_SECTION),
        ("Report", REPORT_SECTION),
    ],
    examples=[
        (
            "assay bench --agent 'my-agent --prompt-file \"$ASSAY_TASK_PROMPT_FILE\"'",
            "run an agent on every task",
        ),
        ("assay bench --agent oracle -j 4", "the reference solutions, four tasks at once"),
        ("assay bench --agent claude -w", "an [agents.claude] from assay.toml; write the baseline"),
        ("assay bench --agent claude -c --compare", "CI: exit 2 when it got worse"),
        ("assay bench --telemetry runs/telemetry/", "score a run made elsewhere"),
    ],
)
@click.argument("path", required=False, type=click.Path(path_type=Path))
@click.option(
    "-a",
    "--agent",
    help="Run this agent on the executable tasks: a command, a name from [agents.NAME], "
    "oracle (the reference solutions) or noop.",
)
@click.option(
    "--telemetry",
    type=click.Path(path_type=Path),
    help="Score this telemetry instead: a folder of <task_id>.json or a JSONL file.",
)
@click.option(
    "-j",
    "--jobs",
    type=click.IntRange(min=1),
    help="Tasks at once (default 1; with --executor ray: at most N, default one per CPU).",
)
@click.option(
    "--executor",
    type=click.Choice(["local", "ray"]),
    default=None,
    help="Run the tasks in threads here (local, the default) or on a Ray cluster "
    "(pip install 'assay[ray]').",
)
@click.option(
    "--ray-address",
    metavar="ADDRESS",
    help="With --executor ray: the cluster (host:port, or auto); without it a local Ray starts.",
)
@click.option(
    "--environment",
    type=click.Choice(["local", "docker"]),
    default=None,
    help="Run every step here (local, the default), or in the image each task names.",
)
@click.option(
    "--image",
    metavar="IMAGE",
    help="With --environment docker: the image of every task that names none.",
)
@click.option(
    "--isolation",
    type=click.Choice(["bubblewrap", "none"]),
    default=None,
    help="The agent's sandbox: bubblewrap (the default: only its worktree and toolchain are in "
    "its world) or none (observation only: see the README's threat model).",
)
@click.option("--no-journal", is_flag=True, help="No strace journal and no attestation.")
@click.option("--no-network", is_flag=True, help="Run the agent in a network namespace of its own.")
@click.option("--keep-worktrees", is_flag=True, help="Keep each task's worktree afterwards.")
@selection_options()
@click.option("--no-save", is_flag=True, help="Do not save the run record.")
@click.option("--compare", is_flag=True, help="Show the delta against the previous saved run.")
@baseline_options()
@report_options()
def bench_command(
    path: Path | None,
    agent: str | None,
    telemetry: Path | None,
    jobs: int | None,
    executor: str | None,
    ray_address: str | None,
    environment: str | None,
    image: str | None,
    isolation: str | None,
    no_journal: bool,
    no_network: bool,
    keep_worktrees: bool,
    tiers: tuple[str, ...],
    patterns: tuple[str, ...],
    shard_spec: str | None,
    no_save: bool,
    compare: bool,
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
    """Run an agent on the tasks (or score its telemetry) with the benchmark's formula.

    PATH is the tasks folder (default: the project's goldens, from assay.toml).
    """
    from assay.agent import AgentOptions
    from assay.config import load_config

    if (agent is None) == (telemetry is None):
        raise click.UsageError("say what to score: --agent CMD (run it) or --telemetry PATH")
    given = [
        flag
        for flag, value in (
            ("--jobs", jobs),
            ("--executor", executor),
            ("--ray-address", ray_address),
            ("--environment", environment),
            ("--image", image),
            ("--isolation", isolation),
            ("--no-journal", no_journal),
            ("--no-network", no_network),
            ("--keep-worktrees", keep_worktrees),
        )
        if value
    ]
    if telemetry is not None and given:
        raise click.UsageError(f"{', '.join(given)}: these run the agent; with --telemetry it ran")
    if ray_address is not None and executor != "ray":
        raise click.UsageError("--ray-address applies to --executor ray")
    if image is not None and environment != "docker":
        raise click.UsageError("--image applies to --environment docker")
    mode = baseline_mode(write_baseline, check)
    if alpha is not None and mode != "check":
        raise click.UsageError("--alpha applies to --check")
    shard, chosen = selection(shard_spec, patterns, mode)
    report = report_settings(as_json, fmt, output, quiet, failures_only)
    options = AgentOptions(
        path,
        telemetry or Path(),
        cast(Any, tiers),
        not no_save,
        compare,
        mode=mode,
        baseline=baseline,
        force=force,
        alpha=alpha,
        shard=shard,
        filter=chosen,
    )
    execute = None
    if agent is not None:
        execute = AgentRun(
            agent,
            jobs=jobs,
            executor=executor or "local",
            ray_address=ray_address,
            keep_worktrees=keep_worktrees,
            no_journal=no_journal,
            no_network=no_network,
            environment=environment or "local",
            isolation=isolation or "bubblewrap",
            image=image,
        )
    return run_agent_flow(options, load_config(), report, execute)
