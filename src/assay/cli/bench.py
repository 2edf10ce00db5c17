"""``assay bench``: run an agent on the executable tasks (``--agent``), or score the telemetry of
a run made elsewhere (``--telemetry``); save the run, and gate it against the baseline."""

from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import click

from assay.cli import _options as opt
from assay.cli._flows import AgentRun, run_agent_flow, shared_flags
from assay.cli._help import SectionedCommand


@dataclass(frozen=True, slots=True)
class _Execution:
    """The flags that run the agent (``--agent``), as given: None or False when not."""

    jobs: int | None = None
    executor: str | None = None
    ray_address: str | None = None
    environment: str | None = None
    image: str | None = None
    isolation: str | None = None
    no_journal: bool = False
    no_network: bool = False
    keep_worktrees: bool = False

    def check(self, telemetry: Path | None) -> None:
        """Refuse the flags that do not go together.

        Raises:
            click.UsageError: a flag that runs the agent with ``--telemetry`` (it ran), or one
                that applies to another flag's choice.
        """
        given = [f"--{f.name.replace('_', '-')}" for f in fields(self) if getattr(self, f.name)]
        if telemetry is not None and given:
            raise click.UsageError(
                f"{', '.join(given)}: these run the agent; with --telemetry it ran"
            )
        if self.ray_address is not None and self.executor != "ray":
            raise click.UsageError("--ray-address applies to --executor ray")
        if self.image is not None and self.environment != "docker":
            raise click.UsageError("--image applies to --environment docker")

    def run(self, agent: str) -> AgentRun:
        """How ``agent`` runs: the defaults for what was not given."""
        return AgentRun(
            agent,
            jobs=self.jobs,
            executor=self.executor or "local",
            ray_address=self.ray_address,
            keep_worktrees=self.keep_worktrees,
            no_journal=self.no_journal,
            no_network=self.no_network,
            environment=self.environment or "local",
            isolation=self.isolation or "bubblewrap",
            image=self.image,
        )


@click.command(
    "bench",
    cls=SectionedCommand,
    sections=[
        ("What to score", ("agent", "telemetry")),
        ("Running the agent (with --agent)", tuple(f.name for f in fields(_Execution))),
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
    **flags: Any,  # Running the agent (an _Execution), then those of shared_flags
) -> int:
    """Run an agent on the tasks (or score its telemetry) with the benchmark's formula.

    PATH is the tasks folder (default: the project's goldens, from assay.toml).
    """
    from assay.agent import AgentOptions
    from assay.config import load_config

    if (agent is None) == (telemetry is None):
        raise click.UsageError("say what to score: --agent CMD (run it) or --telemetry PATH")
    running = _Execution(**{f.name: flags[f.name] for f in fields(_Execution)})
    running.check(telemetry)
    report, shared = shared_flags(flags)
    options = AgentOptions(path, telemetry or Path(), save=not no_save, compare=compare, **shared)
    execute = running.run(agent) if agent is not None else None
    return run_agent_flow(options, load_config(), report, execute)
