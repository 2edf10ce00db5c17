"""``assay run``: the one command of assay 0.x for every kind of run, kept for one release.

``assay gate`` (given outputs), ``assay eval`` (live candidates) and ``assay bench`` (agent runs)
take only the flags of their own job; this command takes them all and checks their mix."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import click

from assay.cli._flows import (
    AgentRun,
    baseline_mode,
    report_settings,
    run_agent_flow,
    run_gate_flow,
    selection,
)
from assay.cli._options import format_option, similarity_option
from assay.vocabulary import TIERS


@click.command("run")
@click.argument("path", required=False, type=click.Path(path_type=Path))
@click.option("--outputs", type=click.Path(path_type=Path), help="Candidate outputs file.")
@click.option(
    "--candidates",
    type=click.Path(path_type=Path),
    help="Candidates file: prompts run live through a model provider.",
)
@click.option(
    "--judge", "use_judge", is_flag=True, help="Let the tier 3 judge decide goldens that reach it."
)
@click.option(
    "--telemetry",
    type=click.Path(path_type=Path),
    help="Agent-run telemetry: a folder of <task_id>.json or a JSONL file.",
)
@click.option(
    "--agent",
    help="Run this agent on the executable tasks and score it: a command, a name from "
    "[agents.NAME], oracle or noop.",
)
@click.option(
    "--jobs",
    type=click.IntRange(min=1),
    help="--agent: tasks at once (default 1; with --executor ray: at most N at once, default "
    "one per CPU of the cluster).",
)
@click.option(
    "--executor",
    type=click.Choice(["local", "ray"]),
    default="local",
    help="--agent: run the tasks in threads here, or as Ray tasks (pip install 'assay[ray]').",
)
@click.option(
    "--ray-address",
    metavar="ADDRESS",
    help="--executor ray: the Ray cluster to run on (host:port, or auto); without it a local "
    "Ray is started for the run.",
)
@click.option("--keep-worktrees", is_flag=True, help="--agent: keep each task's worktree.")
@click.option("--no-journal", is_flag=True, help="--agent: no strace journal and no attestation.")
@click.option(
    "--no-network", is_flag=True, help="--agent: run it in a network namespace of its own."
)
@click.option(
    "--environment",
    type=click.Choice(["local", "docker"]),
    default="local",
    help="--agent: run every step here, or in the container image each task names.",
)
@click.option(
    "--isolation",
    type=click.Choice(["bubblewrap", "none"]),
    default="bubblewrap",
    help="--agent: the sandbox (bubblewrap), or none (observation only).",
)
@click.option("--example", is_flag=True, help="Run the packaged example (goldens + outputs).")
@click.option(
    "--shard",
    "shard_spec",
    metavar="I/N",
    help="Only the goldens (or tasks) whose id hashes to shard I of N (stable across machines).",
)
@click.option(
    "--tier",
    "tiers",
    multiple=True,
    type=click.Choice(TIERS),
    help="Only these tiers (repeatable).",
)
@similarity_option()
@click.option("--baseline", type=click.Path(path_type=Path), help="Baseline file.")
@click.option("--write-baseline", is_flag=True, help="Write the baseline from this run.")
@click.option("--check", is_flag=True, help="Exit 2 when a golden regressed against the baseline.")
@click.option(
    "--alpha",
    type=click.FloatRange(0, 1, min_open=True),
    help="--check: significance level for random outcomes (default [gate] alpha, 0.05).",
)
@click.option(
    "--max-repeats",
    type=click.IntRange(min=1),
    help="--check with --candidates: give undecided goldens more trials, up to N in all.",
)
@click.option(
    "--force",
    is_flag=True,
    help="Let --write-baseline replace a baseline that decided goldens with one that decides none.",
)
@click.option("--no-cache", is_flag=True, help="Do not read or write assay's caches.")
@click.option("--self-test", is_flag=True, help="Run each golden's asserts on its own expected.")
@click.option("--no-save", is_flag=True, help="Do not save the run record.")
@click.option(
    "--compare", is_flag=True, help="Agent runs: show the delta against the previous saved run."
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
@format_option()
@click.option("--output", type=click.Path(path_type=Path), help="Write the report to FILE.")
def run_command(
    path: Path | None,
    outputs: Path | None,
    candidates: Path | None,
    use_judge: bool,
    telemetry: Path | None,
    agent: str | None,
    jobs: int | None,
    executor: str,
    ray_address: str | None,
    keep_worktrees: bool,
    no_journal: bool,
    no_network: bool,
    environment: str,
    isolation: str,
    example: bool,
    shard_spec: str | None,
    tiers: tuple[str, ...],
    similarity: str | None,
    baseline: Path | None,
    write_baseline: bool,
    check: bool,
    alpha: float | None,
    max_repeats: int | None,
    force: bool,
    no_cache: bool,
    self_test: bool,
    no_save: bool,
    compare: bool,
    as_json: bool,
    fmt: str | None,
    output: Path | None,
) -> int:
    """Score outputs, candidates or an agent against goldens (kept for one release: use
    assay gate, assay eval or assay bench)."""
    from assay.config import load_config

    if write_baseline and check:
        raise click.UsageError("--write-baseline and --check cannot be used together")
    if (alpha is not None or max_repeats is not None) and not check:
        raise click.UsageError("--alpha and --max-repeats apply to --check")
    if max_repeats is not None and candidates is None:
        raise click.UsageError("--max-repeats applies to live runs (--candidates)")
    if self_test and (write_baseline or check):
        raise click.UsageError("--self-test checks the goldens; it takes no baseline flag")
    if example and path is not None:
        raise click.UsageError("--example runs the packaged goldens; it takes no PATH")
    if as_json and fmt not in (None, "json"):
        raise click.UsageError(f"--json and --format {fmt} cannot be used together")
    sources = [
        name
        for name, given in (
            ("--outputs", outputs),
            ("--candidates", candidates),
            ("--telemetry", telemetry),
            ("--agent", agent),
            ("--example", example),
        )
        if given
    ]
    if len(sources) > 1:
        raise click.UsageError(f"{' and '.join(sources)} cannot be used together")
    if agent is None and (
        jobs is not None
        or keep_worktrees
        or no_journal
        or no_network
        or environment != "local"
        or isolation != "bubblewrap"
        or executor != "local"
        or ray_address is not None
    ):
        raise click.UsageError(
            "--jobs, --keep-worktrees, --no-journal, --no-network, --environment, --isolation, "
            "--executor and --ray-address apply to --agent runs"
        )
    if ray_address is not None and executor != "ray":
        raise click.UsageError("--ray-address applies to --executor ray")
    agent_run = telemetry is not None or agent is not None
    if agent_run and (self_test or similarity or max_repeats is not None):
        raise click.UsageError(
            "--telemetry scores an agent run; --similarity, --self-test and --max-repeats "
            "apply to goldens runs"
        )
    if not agent_run and compare:
        raise click.UsageError("--compare applies to agent runs (--telemetry)")
    mode = baseline_mode(write_baseline, check)
    shard, _ = selection(shard_spec, (), mode)
    report = report_settings(as_json, fmt, output, False, False)
    config = load_config()
    if agent_run:
        from assay.agent import AgentOptions

        agent_options = AgentOptions(
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
        )
        execute = None
        if agent is not None:
            execute = AgentRun(
                agent,
                jobs=jobs,
                executor=executor,
                ray_address=ray_address,
                keep_worktrees=keep_worktrees,
                no_journal=no_journal,
                no_network=no_network,
                environment=environment,
                isolation=isolation,
            )
        return run_agent_flow(agent_options, config, report, execute)

    from assay.gate._run import GateOptions

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
        candidates=candidates,
        judge=use_judge,
        progress=report.fmt == "text" and output is None,
        alpha=alpha,
        max_repeats=max_repeats,
        shard=shard,
    )
    return run_gate_flow(options, config, report, self_test, save=not no_save)
