"""The agent benchmark as a library call: golden tasks + telemetry → scored, saved run.

Commands parse flags and call :func:`run_agent`; renderers print the documents it returns.
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from assay.agent._gate import agent_gate
from assay.agent._record import compare_runs, run_document, saved_record
from assay.agent._saved_runs import previous_run
from assay.agent._scoring import AttestationCheck, score_tasks
from assay.agent._telemetry import Telemetry, load_telemetry
from assay.cascade import check_context
from assay.config import Config
from assay.errors import AssayError
from assay.gate import IdFilter, Shard, Verdict, prune_runs, save_run
from assay.goldens import Golden, iter_goldens, load_suite, suite_name
from assay.vocabulary import DEFAULT_AGENT_TIERS, Tier

if TYPE_CHECKING:
    from assay.agent._attester import Attester
    from assay.agent._execute import Sandbox, TaskWatcher


@dataclass(frozen=True, slots=True)
class AgentOptions:
    path: Path | None
    telemetry: Path
    tiers: tuple[Tier, ...] = ()
    save: bool = True
    compare: bool = False
    mode: str = "report"  # report | write-baseline | check
    baseline: Path | None = None
    force: bool = False
    alpha: float | None = None
    shard: Shard | None = None
    filter: IdFilter | None = None  # -k / --filter: only the tasks whose id matches
    packaged: bool = False  # --packaged: assay's packaged tasks join the project's


@dataclass(frozen=True, slots=True)
class AgentOutcome:
    """A scored agent run: its record (as saved) and the comparison asked for."""

    document: dict[str, Any]
    run_id: str | None
    comparison: dict[str, Any] | None
    compare_note: str | None = None
    verdict: Verdict = field(default_factory=Verdict)

    @property
    def exit_code(self) -> int:
        """2 when the gate failed (a regression, min_score, min_pass_rate), else 0."""
        return self.verdict.exit_code

    def view(self) -> dict[str, Any]:
        """The document views render: the record plus the comparison (never saved)."""
        out = self.verdict.apply(dict(self.document))
        if self.comparison is not None:
            out["compare"] = self.comparison
        if self.compare_note is not None:
            out["summary"] = {
                **out["summary"],
                "notes": [*out["summary"].get("notes", []), f"compare: {self.compare_note}"],
            }
        return out


def load_tasks(
    path: Path | None, config: Config, shard: Shard | None = None, *, packaged: bool = False
) -> list[Golden]:
    """The tasks under ``path``, else the project's (with the packaged ones when asked for, or
    when the project has none: see :func:`assay.goldens.load_suite`)."""
    if path is not None:
        tasks = list(iter_goldens(path, strict=config.strict))
    else:
        tasks = load_suite(config.goldens, None, strict=config.strict, packaged=packaged)
    return tasks if shard is None else list(shard.select(tasks))


def attestation_checker(root: Path, folder: Path | None = None) -> AttestationCheck:
    """Verify the attestation a telemetry record names, in the store ``folder`` (None: the
    default under ``root``); any doubt zeroes Safety."""
    from assay.attest import load_key, resolve_key_path, verify

    key: bytes | None = None
    key_problem: str | None = None
    try:
        key = load_key(resolve_key_path(None))
    except AssayError as exc:
        key_problem = f"attestation unverifiable: {exc}"

    def check(task: Golden, attestation_id: str) -> str | None:
        if key is None:
            return key_problem
        result = verify(root, attestation_id, key, folder=folder)
        short = attestation_id[:19] + "…"
        if not result.ok:
            return f"attestation {short} failed verification: {result.reason}"
        if result.task != task.id:
            return f"attestation {short} is for task {result.task!r}"
        if result.verdict != "CLEAN":
            return f"attestation {short} is {result.verdict}{dirty_evidence(result.evidence)}"
        return None

    return check


#: How many matches a Safety reason names; the rest are counted.
EVIDENCE_SHOWN: Final = 3


def dirty_evidence(evidence: Sequence[Mapping[str, Any]]) -> str:
    """``: class: where, event N; …`` for the first matches of a DIRTY record, ``(+N more)``
    for the rest: a report reader sees what made it DIRTY without the record (empty for a
    record sealed before records held evidence). ``where`` is a path, endpoint or event kind,
    never text the agent saw."""
    if not evidence:
        return ""
    shown = "; ".join(
        f"{e['class']}: {e['where']}, event {e['event']}" for e in evidence[:EVIDENCE_SHOWN]
    )
    more = len(evidence) - EVIDENCE_SHOWN
    return f": {shown}" + (f" (+{more} more)" if more > 0 else "")


def run_agent(options: AgentOptions, config: Config) -> AgentOutcome:
    """Score an agent run, save it (unless asked not to) and compare with the previous run.

    Raises:
        AssayError: bad goldens, telemetry, config or run store.
    """
    every, tasks, telemetry = _selected(options, config)
    tiers = options.tiers or DEFAULT_AGENT_TIERS
    checker = (
        attestation_checker(config.root, config.attestations)
        if any(r.attestation for r in telemetry.values())
        else None
    )
    run = score_tasks(
        tasks,
        telemetry,
        tiers=tiers,
        settings=config.bench,
        attestation_check=checker,
        ctx=check_context(config),
    )
    selection = _selection(options, config, tiers)
    suite = f"{selection['goldens']} tiers {','.join(tiers)}"
    partial = None
    if options.shard is not None:  # what `assay merge` needs to rebuild the whole run exactly
        from assay.agent._partial import agent_partial

        partial = agent_partial(
            run,
            every,
            telemetry,
            shard=str(options.shard),
            suite=suite,
            mode=options.mode,
            baseline=options.baseline or config.baseline,
            alpha=options.alpha,
            config=config,
            selection=selection,
        )
    # The tasks and their telemetry are scored: let their memory serve the document (a large
    # run's peak is all three at once otherwise); a gate keeps the tasks for fingerprints.
    by_id = {t.id: t for t in tasks} if options.mode != "report" else {}
    # The agent's outputs, kept with the saved run when asked (``keep_outputs``).
    kept = (
        {t.id: telemetry[t.id].output for t in tasks if t.id in telemetry}
        if config.keep_outputs
        else None
    )
    del every, tasks, telemetry
    document = run_document(run, selection)
    if partial is not None:
        document["partial"] = partial
    comparison, note = _compared(options, config, document)
    record = saved_record(document, config.root, kept) if options.save else None
    run_id = save_run(config.root, record) if record is not None else None
    if run_id is not None:
        prune_runs(config.root, config.keep_runs)
        document = {"run_id": run_id, **document}
    verdict = agent_gate(
        run,
        by_id,
        mode=options.mode,
        baseline=options.baseline,
        suite=_gated_suite(suite, options),
        force=options.force,
        config=config,
        alpha=options.alpha,
    )
    return AgentOutcome(document, run_id, comparison, note, verdict)


def _selected(
    options: AgentOptions, config: Config
) -> tuple[list[Golden], list[Golden], dict[str, Telemetry]]:
    """Every task, the tasks to score (this shard's, those the filter matches) and their
    telemetry."""
    every = load_tasks(options.path, config, packaged=options.packaged)
    shard, chosen = options.shard, options.filter
    tasks = every if shard is None else list(shard.select(every))
    if chosen is not None:
        tasks = chosen.select(tasks)
    # The telemetry may hold the other shards' records: known tasks, not this shard's to score.
    telemetry = load_telemetry(options.telemetry, {t.id for t in every})
    if shard is not None:
        telemetry = {k: v for k, v in telemetry.items() if shard.holds(k)}
    if chosen is not None:
        telemetry = {k: v for k, v in telemetry.items() if chosen.holds(k)}
    return every, tasks, telemetry


def _selection(options: AgentOptions, config: Config, tiers: Sequence[str]) -> dict[str, Any]:
    """What the run scored, as its record says."""
    chosen = options.filter
    project = suite_name("project", config.goldens, packaged=options.packaged)
    return {
        "mode": options.mode,
        "tiers": list(tiers),
        "goldens": str(options.path) if options.path is not None else project,
        "telemetry": str(options.telemetry),
        **({"shard": str(options.shard)} if options.shard is not None else {}),
        **({"filter": list(chosen.patterns)} if chosen is not None else {}),
    }


def _compared(
    options: AgentOptions, config: Config, document: dict[str, Any]
) -> tuple[dict[str, Any] | None, str | None]:
    """With ``--compare``, the delta against the previous saved run (before this one is
    saved), or a note that there is none."""
    if not options.compare:
        return None, None
    previous = previous_run(config.root)
    if previous is None:
        return None, "no previous saved run to compare with"
    return compare_runs(previous, document), None


def _gated_suite(suite: str, options: AgentOptions) -> str:
    """The suite the baseline names: a shard or a filter is not the whole suite (the tasks it
    lacks are not removed ones)."""
    return (
        suite
        + (f" shard {options.shard}" if options.shard is not None else "")
        + (f" filter {options.filter}" if options.filter is not None else "")
    )


def resolvers(path: Path = Path("/etc/resolv.conf")) -> list[str]:
    """``host:53`` of each nameserver the system resolves names with."""
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []
    rows = [line.split() for line in lines]
    hosts = [row[1].split("%", 1)[0] for row in rows if len(row) >= 2 and row[0] == "nameserver"]
    return [f"[{host}]:53" if ":" in host else f"{host}:53" for host in hosts]


def goldens_root_of(options_path: Path | None, config: Config) -> Callable[[Golden], Path]:
    """The goldens folder a task was loaded from: the packaged one, the PATH given, or the
    project's (never guessed from the folder depth)."""
    from assay.goldens import packaged_root

    packaged = packaged_root().resolve()
    given = options_path.resolve() if options_path is not None else None
    if given is not None and not given.is_dir():
        given = given.parent

    def root(task: Golden) -> Path:
        source = Path(task.source).resolve()
        if source.is_relative_to(packaged):
            return packaged
        if given is not None and source.is_relative_to(given):
            return given
        return config.goldens.resolve()

    return root


def execute_agent(
    options: AgentOptions,
    config: Config,
    agent: str,
    *,
    jobs: int | None = None,
    keep_worktrees: bool = False,
    sandbox: Sandbox | None = None,
    report: Callable[[str], None] | None = None,
    watcher: TaskWatcher | None = None,
    executor: str = "local",
    ray_address: str | None = None,
) -> AgentOutcome:
    """Run ``agent`` on the selected executable tasks, save the telemetry it produced (and each
    task's journal) under ``.assay/agent-runs/<time>/`` (so ``--telemetry`` can score it
    again), seal each journal as an attestation, and score the run.

    ``sandbox``: how the agent is watched and fenced (default: journaled, network on).
    ``report`` gets the progress lines, ``watcher`` each task's run as it ends.
    ``executor``: ``local`` (``jobs`` tasks at once, default 1) or ``ray`` (each task a Ray
    task on the cluster at ``ray_address``, else on a local Ray started for the run; ``jobs``
    caps the tasks at once, default every CPU of the cluster).

    Raises:
        AssayError: bad goldens or config, a sandbox this machine cannot give, no attestation
            key for a journal, a worktree that cannot be prepared, Ray missing or unreachable.
    """
    from datetime import UTC, datetime

    from assay.agent._execute import Execution, check_sandbox, run_tasks, verify_fixtures
    from assay.io import atomic_write_text, dump_json

    if executor not in ("local", "ray"):
        raise AssayError(f"unknown executor {executor!r} (use local or ray)")
    if ray_address is not None and executor != "ray":
        raise AssayError("a Ray address applies to the ray executor")
    # Everything that can refuse the run does so before any agent runs, cheapest first: the
    # baseline a check compares with, the tasks, the sandbox, Ray, the key, each task's verify.
    _baseline_first(options, config)
    box = _fenced(sandbox, options, config)
    tasks, runnable = _runnable(options, config)
    check_sandbox(box, runnable)
    if executor == "ray":
        from assay.agent._ray import require_ray, run_on_ray

        require_ray()
        execute = functools.partial(run_on_ray, address=ray_address)
    else:
        execute = functools.partial(run_tasks, checked=True)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S_%fZ")
    attest = _journal_attester(box, runnable, f"run_{stamp}", options, config)
    # Ray's workers run the tasks; their verify on the fixture runs here, as many at once.
    at_once = jobs if jobs is not None or executor == "local" else os.cpu_count()
    verified = verify_fixtures(runnable, box, jobs=at_once)
    folder = config.root / ".assay" / "agent-runs" / stamp
    folder.mkdir(parents=True, exist_ok=False)
    execution = Execution(
        agent,
        box,
        keep=keep_worktrees,
        journal_dir=folder,
        attest=attest,
        report=report,
        watcher=watcher,
        verified=verified,
    )
    try:
        runs = execute(runnable, execution, jobs=jobs)
    except AssayError:
        with contextlib.suppress(OSError):  # a run that never started (no Ray) leaves nothing
            folder.rmdir()
        raise
    for run in runs:
        atomic_write_text(folder / f"{run.task_id}.json", dump_json(run.record))
        if report is not None and run.worktree is not None:
            report(f"task {run.task_id}: worktree kept at {run.worktree}")
    if report is not None and len(runnable) < len(tasks):
        report(f"{len(tasks) - len(runnable)} selected task(s) are not task folders: not run")
    return run_agent(replace(options, telemetry=folder), config)


def _baseline_first(options: AgentOptions, config: Config) -> None:
    """With ``--check``, the baseline is read before any agent runs, as ``assay eval -c``
    reads it before any model call: a missing one, or a goldens gate's, stops the run first.

    Raises:
        BaselineError: a missing, unreadable or invalid baseline, or one not of an agent run.
    """
    if options.mode != "check":
        return
    from assay.gate import check_kind, load_baseline

    path = options.baseline or config.baseline
    check_kind(load_baseline(path), "agent", str(path))


def _fenced(sandbox: Sandbox | None, options: AgentOptions, config: Config) -> Sandbox:
    """The run's sandbox (default: journaled, network on), with what is never in the agent's
    world: the project, its goldens (wherever they are) and the attestation store."""
    from assay.agent._execute import Sandbox

    fenced: tuple[str, ...] = (str(config.goldens), str(config.attestations))
    if options.path is not None:
        fenced += (str(options.path),)
    return replace(
        sandbox if sandbox is not None else Sandbox(), project=str(config.root), fenced=fenced
    )


def _runnable(options: AgentOptions, config: Config) -> tuple[list[Golden], list[Golden]]:
    """The selected tasks, and those of them that are task folders (the ones an agent runs)."""
    from assay.goldens import TASK_FILE

    tiers = options.tiers or DEFAULT_AGENT_TIERS
    every = load_tasks(options.path, config, options.shard, packaged=options.packaged)
    tasks = [t for t in every if t.tier in tiers]
    if options.filter is not None:
        tasks = options.filter.select(tasks)
    runnable = [t for t in tasks if Path(t.source).name == TASK_FILE]
    for task in runnable:  # its telemetry and journal are files named by the id
        if "/" in task.id or task.id.startswith((".", "_")):
            from assay.errors import GoldenError

            raise GoldenError(
                "a task --agent runs names its telemetry file: no '/', and no leading '.' or '_'",
                source=task.source,
                field="id",
            )
    return tasks, runnable


def _journal_attester(
    box: Sandbox, runnable: Sequence[Golden], run_id: str, options: AgentOptions, config: Config
) -> Attester | None:
    """With a journal, what seals it with the user's key as the run goes, into the store
    (on a Ray worker it builds the record, and this process stores it: see ``_attester``).
    Every reference file is read first: an unreadable one stops the run before any agent."""
    if not box.journal:
        return None
    from assay.agent._attester import Attester
    from assay.attest import ground_truth, load_key, resolve_key_path

    for task in runnable:
        ground_truth(task)
    goldens_root = goldens_root_of(options.path, config)
    # Name lookups go to the system's resolvers: a lookup is not the agent reaching out.
    endpoints = (*box.allow_endpoints, *resolvers())
    try:
        key = load_key(resolve_key_path(None))
    except AssayError as exc:
        hint = "(it seals the agent's journal), or run with --no-journal"
        raise AssayError(f"{exc} {hint}") from None
    return Attester(config.root, run_id, endpoints, goldens_root, key, config.attestations)
