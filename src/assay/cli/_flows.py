"""What ``assay gate``, ``assay eval`` and ``assay bench`` do once their flags are parsed and
checked: run the gate or the agent benchmark, print the report, return the exit code. One place,
so the commands differ only in the flags they take."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from assay.cli._common import chosen_format, deliver, emit
from assay.views import dump_json, failures_only, render

if TYPE_CHECKING:
    from assay.agent import AgentOptions, AgentOutcome, Sandbox
    from assay.config import Config
    from assay.gate import GateOptions


@dataclass(frozen=True, slots=True)
class Report:
    """How the run is shown: the format, where to, and how much of it."""

    fmt: str = "text"
    output: Path | None = None
    quiet: bool = False
    failures_only: bool = False

    def show(self, document: dict[str, Any], content: Any = None) -> None:
        """Print (or write) the report: see :func:`~assay.cli._common.deliver`."""
        shown = failures_only(document) if self.failures_only else document
        file = None if self.output is None else str(self.output)
        text = render(self.fmt, shown, content, quiet=self.quiet, file=file)
        if self.fmt == "text" and self.output is None and sys.stdout.isatty():
            # A person is reading: colour (unless NO_COLOR) and lines wrapped to the terminal.
            from assay.views import styled, use_colour

            text = styled(text, colour=use_colour(sys.stdout))
        deliver(text, shown, self.output)


def selection(shard_spec: str | None, patterns: tuple[str, ...], mode: str) -> tuple[Any, Any]:
    """The ``--shard`` and ``-k`` / ``--filter`` selections (each None when not given), checked
    against the mode and each other; an empty pattern is an AssayError."""
    from assay.gate import id_filter, parse_shard

    shard = None
    if shard_spec is not None:
        try:
            shard = parse_shard(shard_spec)
        except ValueError as exc:
            raise click.UsageError(f"--shard: {exc}") from None
    chosen = id_filter(patterns) if patterns else None
    for flag, given in (("--shard", shard), ("--filter", chosen)):
        if given is not None and mode == "write-baseline":
            raise click.UsageError(
                f"{flag} and --write-baseline cannot be used together: a baseline is written "
                "from the whole suite"
            )
    if shard is not None and chosen is not None:
        raise click.UsageError(
            "--shard and --filter cannot be used together: the shards of a filtered suite "
            "would not merge into the whole run"
        )
    return shard, chosen


def shared_flags(flags: dict[str, Any]) -> tuple[Report, dict[str, Any]]:
    """The Which goldens, Baseline and Report flags gate, eval and bench share, checked: the
    report (``--json`` is ``--format json``), and the fields of ``GateOptions`` and
    ``AgentOptions`` they set (``max_repeats`` only where the command has ``--max-repeats``)."""
    write, check = flags["write_baseline"], flags["check"]
    if write and check:
        raise click.UsageError("--write-baseline and --check cannot be used together")
    mode = "write-baseline" if write else "check" if check else "report"
    alpha, max_repeats = flags["alpha"], flags.get("max_repeats")
    if (alpha is not None or max_repeats is not None) and mode != "check":
        if "max_repeats" in flags:  # eval's
            raise click.UsageError("--alpha and --max-repeats apply to --check")
        raise click.UsageError("--alpha applies to --check")
    shard, chosen = selection(flags["shard_spec"], flags["patterns"], mode)
    fmt, quiet = chosen_format(flags["as_json"], flags["fmt"]), flags["quiet"]
    if quiet and fmt != "text":
        raise click.UsageError(f"--quiet shortens the text report; --format {fmt} is whole")
    if quiet and flags["failures_only"]:
        raise click.UsageError("--quiet lists no golden; --failures-only lists the failed ones")
    settings = {"tiers": flags["tiers"], "mode": mode, "baseline": flags["baseline"]}
    settings |= {"force": flags["force"], "alpha": alpha, "shard": shard, "filter": chosen}
    settings["packaged"] = flags["packaged"]
    if "max_repeats" in flags:
        settings["max_repeats"] = max_repeats
    return Report(fmt, flags["output"], quiet, flags["failures_only"]), settings


def gate_options(flags: dict[str, Any], **own: Any) -> tuple[Report, GateOptions]:
    """The report and the ``GateOptions`` of gate and eval: ``flags`` are those they share
    (--similarity, --judge, --no-cache and shared_flags'; --no-save is the caller's), ``own``
    the command's other fields."""
    from assay.gate import GateOptions

    report, shared = shared_flags(flags)
    return report, GateOptions(
        similarity=flags["similarity"],
        judge=flags["use_judge"],
        no_cache=flags["no_cache"],
        **own,
        **shared,
    )


def say_packaged(path: Path | None, config: Config, *, example: bool = False) -> None:
    """One line when a run without PATH gets assay's packaged goldens because the project has
    none (the user may have meant to be somewhere else)."""
    from assay.goldens import holds_goldens
    from assay.paths import shown_path

    if path is None and not example and not holds_goldens(config.goldens):
        click.echo(
            f"assay: no goldens in {shown_path(config.goldens)}/: running assay's packaged goldens "
            "and agent tasks (put yours there; --packaged adds these to yours)",
            err=True,
        )


@contextlib.contextmanager
def prints_to_stderr() -> Iterator[None]:
    """While a run goes, what the project's own code prints (a python assert or transform, a
    python provider, a plugin) goes to stderr: stdout carries the report alone, so a ``--json``
    document on stdout parses."""
    saved = sys.stdout
    sys.stdout = sys.stderr
    try:
        yield
    finally:
        sys.stdout = saved


def run_gate_flow(
    options: GateOptions, config: Config, report: Report, self_test: bool, save: bool = False
) -> int:
    """The gate on given outputs or live candidates (or ``--self-test``): report, exit code;
    ``save``: the run's record is saved (``assay runs list``, ``assay report --run``)."""
    from assay.gate import load_selected, run_gate

    if self_test:
        from assay.cascade import check_context
        from assay.goldens import self_test as run_self_test
        from assay.views import render_self_test

        with prints_to_stderr():
            goldens = load_selected(options, config).goldens
            result = run_self_test(goldens, check_context(config))
        text = dump_json(result.to_dict()) if report.fmt == "json" else render_self_test(result)
        emit(text, report.output)
        return 0 if result.ok else 1
    with prints_to_stderr(), _calls_watched(config, options.candidates is not None):
        run = run_gate(options, config)
    document = run.to_dict()
    report.show(document, run.content())
    if not options.packaged:  # after the report: a run that fails stays one line
        say_packaged(options.path, config, example=options.example)
    if save:
        _save(config, run, document)
    for reason in run.undecided:  # the report is out; the exit code says: could not decide
        click.echo(f"assay: error: {reason}", err=True)
    return run.exit_code


@contextlib.contextmanager
def _calls_watched(config: Config, live: bool) -> Iterator[None]:
    """While an eval or gate run makes model calls (live candidates, the judge), its progress
    in ``.assay/live/`` (the live page of ``assay view``), removed when the run ends. The file,
    and the viewer's import, come with the first call: a run without calls writes none."""
    from assay.models import CALL_WATCHERS, CallEnded

    progress: list[Any] = []  # the LiveRun and its watcher, once the first call is done

    def watch(ended: CallEnded) -> None:
        if not progress:
            from assay.viewer import CallProgress, LiveRun

            run = LiveRun(config.root, "eval" if live else "gate")
            progress.extend([run, CallProgress(run, config.keep_outputs)])
        progress[1](ended)

    CALL_WATCHERS.append(watch)
    try:
        yield
    finally:
        CALL_WATCHERS.remove(watch)
        if progress:
            progress[0].close()


def _save(config: Config, run: Any, document: dict[str, Any]) -> None:
    """Save the gate run's record. The run has decided: a record that cannot be written is a
    warning, never another exit code."""
    from assay.errors import AssayError
    from assay.gate import gate_record, prune_runs, save_run

    try:
        record = gate_record(run, document, keep_outputs=config.keep_outputs, root=config.root)
        run_id = save_run(config.root, record)
    except AssayError as exc:
        click.echo(f"assay: warning: the run was not saved: {exc}", err=True)
        return
    try:
        prune_runs(config.root, config.keep_runs)
    except AssayError as exc:
        click.echo(f"assay: warning: saved, but old runs were not removed: {exc}", err=True)
    if sys.stderr.isatty():  # a person is watching; logs and pipes get only the report
        click.echo(f"assay: saved as run {run_id} (assay report --run {run_id})", err=True)


@dataclass(frozen=True, slots=True)
class AgentRun:
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
        """Refuse (a ``click.UsageError``) the flags that do not go together."""
        given = [f"--{f.name.replace('_', '-')}" for f in fields(self) if getattr(self, f.name)]
        if telemetry is not None and given:
            raise click.UsageError(
                f"{', '.join(given)}: these run the agent; with --telemetry it ran"
            )
        if self.ray_address is not None and self.executor != "ray":
            raise click.UsageError("--ray-address applies to --executor ray")
        if self.image is not None and self.environment != "docker":
            raise click.UsageError("--image applies to --environment docker")


def run_agent_flow(
    options: AgentOptions, config: Config, report: Report, agent: str | None, running: AgentRun
) -> int:
    """An agent run (``agent`` executed here, or, when None, its telemetry scored): report,
    exit code."""
    with prints_to_stderr():
        outcome = _agent_outcome(options, config, agent, running)
    report.show(outcome.view())
    if not options.packaged:  # after the report: a run that fails stays one line
        say_packaged(options.path, config)
    return outcome.exit_code


def _agent_outcome(
    options: AgentOptions, config: Config, agent: str | None, running: AgentRun
) -> AgentOutcome:
    """The agent's run: executed here, or scored from its telemetry (``agent`` None)."""
    from assay.agent import execute_agent, run_agent

    if agent is not None:
        # The viewer's live page follows the tasks: a run of agents can afford the import.
        from assay.viewer import AgentProgress, live_run

        command, sandbox = _agent_sandbox(agent, running, config)

        def say(line: str) -> None:
            click.echo(f"assay: {line}", err=True)

        with live_run(config.root, "bench") as live:
            return execute_agent(
                options,
                config,
                command,
                sandbox=sandbox,
                report=say,
                watcher=AgentProgress(live, config),
                jobs=running.jobs,
                keep_worktrees=running.keep_worktrees,
                executor=running.executor or "local",
                ray_address=running.ray_address,
            )
    return run_agent(options, config)


def _agent_sandbox(agent: str, running: AgentRun, config: Config) -> tuple[str, Sandbox]:
    """The command and sandbox of ``--agent``: a named ``[agents.NAME]`` block, else the text
    itself as the command (or a built-in agent) with a block's defaults."""
    from assay.agent import Sandbox
    from assay.config import AgentSettings

    named = config.agents.get(agent) or AgentSettings(command=agent)
    # Where the steps run and how fenced: the flags, whatever the [agents.NAME] block says.
    return named.command, Sandbox(
        journal=named.journal and not running.no_journal,
        no_network=named.no_network or running.no_network,
        allow_read=named.allow_read,
        allow_endpoints=named.allow_endpoints,
        env=named.env,
        environment=running.environment or "local",
        isolation=running.isolation or "bubblewrap",
        image=running.image,
    )
