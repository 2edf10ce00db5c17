"""``assay bench``: run an agent on the executable tasks (``--agent``), or score the telemetry of
a run made elsewhere (``--telemetry``); save the run, and gate it against the baseline."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path
from typing import Any

import click

from assay.cli import _options as opt
from assay.cli._flows import AgentRun, run_agent_flow, shared_flags
from assay.cli._help import SectionedCommand


@click.command(
    "bench",
    cls=SectionedCommand,
    sections=[
        ("What to score", ("agent", "telemetry")),
        ("Running the agent (with --agent)", tuple(f.name for f in fields(AgentRun))),
        ("Which tasks", opt.SELECTION_SECTION),
        ("Saved runs", ("no_save", "compare")),
        *opt.JOB_SECTIONS,
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
@opt.path_option(
    "--telemetry",
    help="Score this telemetry instead: a folder of <task_id>.json or a JSONL file.",
)
@opt.count_option(
    "-j",
    "--jobs",
    help_text="Tasks at once (default 1; with --executor ray: at most N, default one per CPU).",
)
@click.option(
    "--executor",
    type=click.Choice(["local", "ray"]),
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
    help="The agent's sandbox: bubblewrap (the default: only its worktree and toolchain are in "
    "its world) or none (observation only: see the threat model in docs/guide/attestation.md).",
)
@click.option("--no-journal", is_flag=True, help="No strace journal and no attestation.")
@click.option("--no-network", is_flag=True, help="Run the agent in a network namespace of its own.")
@click.option("--keep-worktrees", is_flag=True, help="Keep each task's worktree afterwards.")
@opt.selection_options()
@click.option("--no-save", is_flag=True, help="Do not save the run record.")
@click.option("--compare", is_flag=True, help="Show the delta against the previous saved run.")
@opt.baseline_options()
@opt.report_options()
def bench_command(
    path: Path | None,
    agent: str | None,
    telemetry: Path | None,
    no_save: bool,
    compare: bool,
    **flags: Any,  # Running the agent (an AgentRun), then those of shared_flags
) -> int:
    """Run an agent on the tasks (or score its telemetry) with the benchmark's formula.

    PATH is the tasks folder (default: the project's goldens, from assay.toml).
    """
    from assay.agent import AgentOptions
    from assay.config import load_config

    if (agent is None) == (telemetry is None):
        raise click.UsageError("say what to score: --agent CMD (run it) or --telemetry PATH")
    running = AgentRun(**{f.name: flags[f.name] for f in fields(AgentRun)})
    running.check(telemetry)
    report, shared = shared_flags(flags)
    options = AgentOptions(path, telemetry or Path(), save=not no_save, compare=compare, **shared)
    return run_agent_flow(options, load_config(), report, agent, running)
