"""Run an agent on executable tasks and measure what it did: the telemetry, for real.

For each task folder (``task.md``, ``repo/``, ``solution.sh``, optionally hidden ``tests/``),
:func:`run_task` runs the phases of a ``_Running`` (its methods, in order), which removes the
task's folders however it ends. A task that cannot be run or measured is that task's ``error``
record; the run goes on. Built-in agents: ``oracle`` runs the task's reference solution,
``noop`` does nothing.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Protocol

from assay.agent._box import DEFAULT_MEMORY_MB, Finished, Limits, Sandboxed, Unsandboxed
from assay.agent._sandbox import (
    World,
    agent_env,
    default_allow_read,
    fenced_places,
    named_paths,
    toolchain,
)
from assay.agent._verify import VerifyCounts, counts_of, failed_tests
from assay.agent._worktree import changed_files, make_worktree, verification_copy
from assay.errors import AssayError, GoldenError
from assay.goldens import TASK_FILE, Golden
from assay.validate import is_number

if TYPE_CHECKING:
    from assay.agent._attester import Attester

ISOLATIONS: Final = ("bubblewrap", "none")
DEFAULT_MAX_DURATION_S: Final = 600.0
STEP_TIMEOUT_S: Final = 300.0  # verify and a completion signal
OUTPUT_LIMIT: Final = 100_000  # characters of the agent's stdout kept as its final output
_TRACER_EXIT_S: Final = 10.0
# The place a journal names when the tracer's record is not whole: in no allowance, ever.
INCOMPLETE_TRACE: Final = "/assay-tracer-record-incomplete"


@dataclass(frozen=True, slots=True)
class Sandbox:
    """How the agent is fenced and watched.

    Attributes:
        journal: trace it with strace and journal what it did.
        no_network: a network namespace of its own (nothing reachable, loopback included).
        allow_read: more paths outside the worktree it may read (its install, its config).
        allow_endpoints: ``host:port`` endpoints it may connect to.
        project: the project root: never in the agent's world.
        environment: ``local``, or ``docker``: every step inside the image the task names.
        isolation: ``bubblewrap`` (the default on Linux) or ``none`` (observation only).
        env: the caller's variables passed on to the agent, by name (``[agents.NAME] env``).
        fenced: more places never in its world (the goldens, the attestation store).
        image: with ``docker``, the image of a task that names none (``--image``).
    """

    journal: bool = True
    no_network: bool = False
    allow_read: tuple[str, ...] = ()
    allow_endpoints: tuple[str, ...] = ()
    project: str | None = None
    environment: str = "local"
    isolation: str = "bubblewrap"
    env: tuple[str, ...] = ()
    fenced: tuple[str, ...] = ()
    image: str | None = None

    @property
    def kind(self) -> str:
        """What the attestation records: ``bubblewrap``, ``docker`` or ``none``."""
        return "docker" if self.environment == "docker" else self.isolation


class TaskWatcher(Protocol):
    """Follows a run's tasks: its count as it starts, then each task's run as it ends (in the
    thread that ran it, or on the driver when a Ray worker did)."""

    def started(self, count: int) -> None: ...

    def ended(self, task: Golden, run: TaskRun) -> None: ...


@dataclass(frozen=True, slots=True)
class Execution:
    """How each task of a run is executed, whoever runs it (a thread here, a Ray worker).

    Attributes:
        agent: the agent's command (or ``oracle``, ``noop``).
        sandbox: how it is fenced and watched.
        keep: keep each task's worktree.
        journal_dir: where the journals are written (None: the tracer's folder, removed after
            the task).
        attest: what seals each journal (None: no seal).
        report: where the progress lines go (None: nowhere).
        watcher: who follows the tasks (``assay view``'s live page), told the task count as
            the run starts and each task's run as it ends (None: no one). It is told here,
            on the driver, whoever ran the task: a thread of this run or a Ray worker.
        verified: each task's verify on its untouched fixture, by task id, run before any
            agent (:func:`verify_fixtures`); a task not in it runs its own first.
    """

    agent: str
    sandbox: Sandbox
    keep: bool = False
    journal_dir: Path | None = None
    attest: Attester | None = None
    report: Callable[[str], None] | None = None
    watcher: TaskWatcher | None = None
    verified: Mapping[str, Step] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class TaskRun:
    """One task's telemetry record (the scorer's input), its journal, and its worktree when
    kept."""

    task_id: str
    record: dict[str, Any]
    worktree: Path | None
    journal: Path | None = None


@dataclass(frozen=True, slots=True)
class _Task:
    """One task's paths and settings for this run."""

    golden: Golden
    folder: Path
    scratch: Path
    sandbox: Sandbox
    fenced: tuple[str, ...]

    @property
    def fixture(self) -> Path:
        return self.folder / "repo"

    @property
    def hidden_tests(self) -> Path | None:
        tests = self.folder / "tests"
        return tests if tests.is_dir() else None

    @property
    def verify(self) -> str | None:
        verify = self.golden.fields.get("verify")
        return str(verify) if verify else None

    @property
    def signals(self) -> list[str]:
        """The completion signals' commands, in order."""
        entries = self.golden.fields.get("completion_signals") or []
        return [str(e["run"]) for e in entries if isinstance(e, dict)]

    @property
    def max_duration_s(self) -> float:
        return float(self.golden.fields.get("max_duration_s") or DEFAULT_MAX_DURATION_S)

    def limits(self, duration: float) -> Limits:
        # 0 (or under 1 MiB) means the default: a limit of nothing would start nothing.
        memory = int(self.golden.fields.get("max_memory_mb") or 0) or DEFAULT_MEMORY_MB
        return Limits(duration, memory_mb=memory)

    def world(self, worktree: Path, private: Path, command: str = "") -> World:
        box = self.sandbox
        readonly = [*toolchain(self.fenced), *named_paths(command, self.fenced)]
        readonly += [p for p in box.allow_read if os.path.exists(p)]
        return World(worktree, private, tuple(dict.fromkeys(readonly)), self.fenced, box.no_network)


def _private(parent: Path, prefix: str) -> Path:
    """A fresh private folder: the sandbox's ``$HOME`` and ``$TMPDIR`` live in it."""
    private = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
    (private / "home").mkdir()
    (private / "tmp").mkdir()
    return private


def _run(
    task: _Task, command: str, world: World, env: Mapping[str, str], limits: Limits, **kw: Any
) -> Finished:
    """``command`` in the task's kind of sandbox, to its end."""
    if task.sandbox.environment == "docker":
        from assay.agent._docker import container_name, image_of, run_in_container

        image = image_of(task.golden, task.sandbox.image) or ""
        name = container_name(task.golden.id)
        stdin = kw.get("stdin")
        passed = task.sandbox.env
        return run_in_container(
            command, world, env, limits, image=image, name=name, stdin=stdin, passed=passed
        )
    if task.sandbox.isolation == "bubblewrap":
        with Sandboxed(command, world, env, limits, **kw) as box:
            return box.finish()
    with Unsandboxed(command, world.worktree, env, limits, **kw) as plain:
        return plain.finish()


@dataclass(frozen=True, slots=True)
class Step:
    """How one verify or signal run ended: its status, the tests it reported (None: no JUnit
    report and no summary line), the ids of those that failed (from JUnit), and its last words
    (why it may not have run)."""

    code: int
    counts: VerifyCounts | None
    failed: frozenset[str] | None
    said: str = ""

    @property
    def cannot_run(self) -> bool:
        """The command did not run its tests: the shell could not run it (126, 127), or it
        failed and reported no test at all (``No module named pytest``, a usage error)."""
        return self.code in (126, 127) or (self.code != 0 and self.counts is None)


@contextlib.contextmanager
def _verification_copy(
    task: _Task, source: Path, label: str, commands: Sequence[str]
) -> Iterator[Path]:
    """``_worktree.verification_copy`` of ``source`` in a fresh folder, removed afterwards (the
    files the task owns come from the fixture only after the agent)."""
    owned_files: Any = task.golden.fields.get("owned_files") or ()
    copy = verification_copy(
        source,
        task.fixture,
        Path(tempfile.mkdtemp(prefix=f"{task.golden.id}-{label}-", dir=task.scratch)),
        owned_files=owned_files if label == "after" else (),
        hidden_tests=task.hidden_tests,
        commands=commands,
    )
    try:
        yield copy
    finally:
        shutil.rmtree(copy, ignore_errors=True)


def _step(task: _Task, command: str, copy: Path, *, junit: bool) -> Step:
    private = _private(task.scratch, f"{task.golden.id}-step-")
    try:
        world = task.world(copy, private)
        report = private / "tmp" / "junit.xml"
        extra = {"ASSAY_WORKTREE": str(copy), "ASSAY_TASK_ID": task.golden.id}
        if junit:
            extra["PYTEST_ADDOPTS"] = f"-p no:assay --junit-xml={report}"
        env = agent_env(world, extra, task.sandbox.env)
        done = _run(task, command, world, env, task.limits(STEP_TIMEOUT_S))
        code = done.exit_code if done.exit_code is not None else 124
        counts = counts_of(done.stdout + done.stderr, report if junit else None)
        failed = failed_tests(report) if junit else None
        return Step(code, counts, failed, _last_words(done))
    finally:
        shutil.rmtree(private, ignore_errors=True)


def _last_words(done: Finished) -> str:
    """Why a step may not have run: its last line on stderr (else on stdout), one line."""
    if done.timed_out:
        return f"it did not finish within {STEP_TIMEOUT_S:g} s"
    for text in (done.stderr, done.stdout):
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        if lines:
            return lines[-1][:500]
    return f"it exited {done.exit_code} and said nothing"


def _agent_command(agent: str, folder: Path, private: Path) -> str:
    if agent == "oracle":
        # The reference solution is handed over in the agent's private folder: the task
        # folder, inside the goldens, is not in its world.
        copy = private / "solution.sh"
        shutil.copyfile(folder / "solution.sh", copy)
        return f"bash {json.dumps(str(copy))}"
    if agent == "noop":
        return "true"
    return agent


def _usage(path: Path) -> dict[str, Any]:
    """What the agent reported in ``$ASSAY_USAGE_FILE`` (nothing when it wrote nothing)."""
    try:
        if path.stat().st_size > 1 << 20:
            return {}
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    out: dict[str, Any] = {}
    for ours, theirs in (
        ("input_tokens", "tokens_input"),
        ("output_tokens", "tokens_output"),
        ("turns_used", "turns_used"),
    ):
        value = data.get(theirs, data.get(ours))
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            out[ours] = value
    cost = data.get("cost_usd")
    if is_number(cost) and cost >= 0:  # finite: Infinity (or 1e400) would fail the record later
        out["cost_usd"] = float(cost)
    return out


def run_task(task: Golden, execution: Execution, scratch: Path) -> TaskRun:
    """Run the agent on one executable task and measure it; a failure of this task (not of the
    run) is its ``error`` record (not a task folder: a GoldenError).

    With a journal (``sandbox.journal``), it is written to ``execution.journal_dir`` and, with
    ``attest``, sealed: the record names the attestation.
    """
    attest, report, keep = execution.attest, execution.report, execution.keep
    job = _task_of(task, scratch, execution.sandbox)
    try:
        with _Running(job, keep=keep) as run:
            before = run.verify_before(execution.verified.get(task.id))
            done = run.agent(execution.agent, report, sealed=attest is not None)
            record = _record(job, run.worktree, done, run.private)
            events, journal = run.journal(done, execution.journal_dir)
            verified = run.signals_and_verify(before, record)
            if journal is not None and attest is not None:
                record["attestation"] = run.seal(attest, journal)
    # AssayError: a TaskFailure, or the sandbox did not start, or the tracer did not attach.
    except (AssayError, OSError, UnicodeError, ValueError, subprocess.SubprocessError) as exc:
        cause = exc.message if isinstance(exc, AssayError) else f"{type(exc).__name__}: {exc}"
        return _failed(task, cause, report)
    if report is not None:
        report(_summary(task.id, record, verified, events if journal is not None else None))
    return TaskRun(task.id, record, run.worktree if keep else None, journal)


def _task_of(task: Golden, scratch: Path, sandbox: Sandbox) -> _Task:
    """The task folder's paths and what is never in its agent's world."""
    source = Path(task.source)
    if source.name != TASK_FILE:
        raise GoldenError(
            "only a task folder (task.md, repo/, solution.sh) can be run by an agent",
            source=task.source,
        )
    fenced = fenced_places(
        scratch=scratch, project=sandbox.project, goldens=[str(source.parent)], extra=sandbox.fenced
    )
    return _Task(task, source.parent, scratch, sandbox, tuple(fenced))


def _failed(task: Golden, cause: str, report: Callable[[str], None] | None) -> TaskRun:
    """The ``error`` record of a task that could not be run or measured: the run goes on."""
    if report is not None:
        report(f"task {task.id}: error: {cause}")
    return TaskRun(task.id, {"task_id": task.id, "error": cause}, None)


class _Running:
    """One task's run as a context manager: it owns the task's folders (the worktree, made on
    entry; the agent's private folder and the tracer's, made when the agent starts) and removes
    them on exit, whatever happened (the worktree is kept with ``keep``). Its methods are the
    run's phases, in the order :func:`run_task` calls them."""

    worktree: Path  # made on entry
    # Made by the agent phase, read by the phases after it:
    private: Path  # the agent's $HOME and $TMPDIR, its prompt and usage files
    trace_dir: Path  # the tracer's files
    trace_out: Path | None  # where the tracer writes (None: no journal)
    world: World  # what the agent's sandbox holds

    def __init__(self, job: _Task, *, keep: bool) -> None:
        self.job, self.keep = job, keep
        self._owned: list[Path] = []  # the agent's and the tracer's folders
        self._given: list[str] = []

    def __enter__(self) -> _Running:
        """Prepare: the fixture copied into a fresh git worktree, committed."""
        self.worktree = make_worktree(self.job.golden, self.job.folder, self.job.scratch)
        return self

    def __exit__(self, *exc: object) -> None:
        for folder in self._owned:
            shutil.rmtree(folder, ignore_errors=True)
        if not self.keep:
            shutil.rmtree(self.worktree, ignore_errors=True)

    def verify_before(self, verified: Step | None = None) -> Step | None:
        """Verify on the untouched fixture (with the hidden tests): the tests that fail before
        the agent starts (None: the task has no verify); ``verified``: that run, made before
        any agent started (verify never runs twice on the fixture)."""
        if verified is not None or self.job.verify is None:
            return verified
        return fixture_verify(self.job)

    def agent(self, agent: str, report: Callable[[str], None] | None, *, sealed: bool) -> Finished:
        """The agent in its sandbox, on its worktree, the instruction on stdin and in
        ``$ASSAY_TASK_PROMPT_FILE``, under the task's limits; traced with a journal. ``sealed``:
        what the task gave the agent is read first, for the seal."""
        job, task = self.job, self.job.golden
        self.private = _private(job.scratch, f"{task.id}-io-")
        self._owned.append(self.private)
        self.trace_dir = Path(tempfile.mkdtemp(prefix=f"{task.id}-trace-", dir=job.scratch))
        self._owned.append(self.trace_dir)
        command = _agent_command(agent, job.folder, self.private)
        self.world = job.world(self.worktree, self.private, command)
        prompt_file, env = self._instructed()
        if sealed:
            from assay.attest import given_texts

            self._given = given_texts(task, job.fixture)  # read before the agent runs
        self.trace_out = self.trace_dir / "trace" if job.sandbox.journal else None
        if report is not None:
            report(f"task {task.id}: started")
        limits = job.limits(job.max_duration_s)
        return _run(
            job, command, self.world, env, limits, stdin=prompt_file, trace_out=self.trace_out
        )

    def _instructed(self) -> tuple[Path, dict[str, str]]:
        """The instruction written to the agent's prompt file, and its environment naming it."""
        task = self.job.golden
        prompt_file = self.private / "prompt.txt"
        instruction = task.input if isinstance(task.input, str) else json.dumps(task.input)
        prompt_file.write_text(instruction or "", encoding="utf-8")
        env = agent_env(
            self.world,
            {
                "ASSAY_TASK_PROMPT_FILE": str(prompt_file),
                "ASSAY_WORKTREE": str(self.worktree),
                "ASSAY_USAGE_FILE": str(self.private / "usage.json"),
                "ASSAY_TASK_ID": task.id,
            },
            self.job.sandbox.env,
        )
        return prompt_file, env

    def journal(self, done: Finished, journal_dir: Path | None) -> tuple[int, Path | None]:
        """Wait for the tracer to finish its files, then write them as the task's journal:
        (events, journal); (0, None) without a journal."""
        from assay.agent._activity import write_journal
        from assay.agent._trace import incomplete, read_calls, tracers, wait_gone

        trace_out = self.trace_out
        if trace_out is None:
            return 0, None
        left = tracers(trace_out)
        if not wait_gone(left, _TRACER_EXIT_S):
            for pid in left:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
        where = journal_dir if journal_dir is not None else trace_out.parent
        journal = where / f"{self.job.golden.id}.journal.jsonl"
        journal.unlink(missing_ok=True)
        calls = read_calls(trace_out)
        events = write_journal(journal, calls, self.worktree, self.job.fixture, done.stdout)
        problem = incomplete(trace_out, done.root_pid)
        if problem is not None:
            # What the tracer did not see cannot be shown clean: a path outside every allowance
            # (allowances never hold the root), so the seal is DIRTY (out_of_scope_path).
            from assay.attest import Journal

            Journal(journal).append("write", path=INCOMPLETE_TRACE, content=problem)
            events += 1
        return events, journal

    def signals_and_verify(self, before: Step | None, record: dict[str, Any]) -> int | None:
        """The completion signals, then verify, each in a fresh sandbox on one verification
        copy of the agent's work; their counts go into ``record``. Returns verify's status
        (None: the task has no verify), see :func:`_verdict`."""
        job = self.job
        signals, verify = job.signals, job.verify
        commands = [*signals, *([verify] if verify is not None else [])]
        steps: list[Step] = []
        after = None
        if commands:
            with _verification_copy(job, self.worktree, "after", commands) as copy:
                steps += [_step(job, command, copy, junit=False) for command in signals]
                if verify is not None:
                    after = _step(job, verify, copy, junit=True)
                    steps.append(after)
        record["completion_signals_checked"] = len(steps)
        record["completion_signals_passed"] = sum(1 for s in steps if s.code == 0)
        return None if after is None else _verdict(before, after, record)

    def seal(self, attest: Attester, journal: Path) -> str:
        """The journal sealed as an attestation naming the run's isolation: its id."""
        allowed = _allowed(self.job, self.world, self.trace_dir, self.private)
        isolation = {"kind": self.job.sandbox.kind, "not_mounted": list(self.job.fenced)}
        task, listing = self.job.golden, _listing(self.job, self.world)
        built = attest.build(
            task, journal, self.worktree, allowed, self._given, isolation=isolation, listing=listing
        )
        return attest.store(built)


def _record(job: _Task, worktree: Path, done: Finished, private: Path) -> dict[str, Any]:
    """The telemetry record of what the agent did: its time, exit, orphans, output, usage,
    and the files it changed (the worktree compared with the fixture, file by file)."""
    stdout = done.stdout[-OUTPUT_LIMIT:]
    record: dict[str, Any] = {
        "task_id": job.golden.id,
        "duration_s": round(done.duration_s, 3),
        "crashes": 1 if (done.exit_code != 0 and not done.timed_out) else 0,
        "orphans": done.orphans,
        "files_modified": changed_files(worktree, job.fixture),
        "output": stdout,
        **_usage(private / "usage.json"),
    }
    if done.timed_out:
        # Killed at the limit: it ran past it, however the clock rounds (a timeout, by the
        # taxonomy's duration_s > max_duration_s).
        record["duration_s"] = max(record["duration_s"], round(job.max_duration_s + 0.001, 3))
    if done.dropped:
        record["x_output_dropped_bytes"] = done.dropped
    return record


def _verdict(before: Step | None, after: Step, record: dict[str, Any]) -> int:
    """Verify's status on the agent's work, its test counts into ``record``: a test that
    failed on the fixture and still fails leaves the task incomplete (1), whatever verify
    said; a test failing before is not counted against the agent."""
    if after.counts is not None:
        already = before.counts.failed if before is not None and before.counts else 0
        record["tests_run"] = after.counts.ran
        record["tests_passed"] = after.counts.passed
        record["tests_failed"] = max(0, after.counts.failed - already)
    if before is not None and before.failed and after.failed is not None and after.code == 0:
        still = sorted(before.failed & after.failed)
        if still:  # verify said 0, yet a test the task was to fix still fails
            record["completion_signals_passed"] -= 1
            record["x_still_failing"] = still[:10]
            return 1
    return after.code


def _allowed(job: _Task, world: World, trace_dir: Path, private: Path) -> list[str]:
    """What the agent may have opened, for the seal: in a sandbox, what was mounted; without
    one, the system and toolchain (and the agent's own /proc entries)."""
    if job.sandbox.isolation == "bubblewrap":
        return world.visible()
    traced = [f.name.rsplit(".", 1)[1] for f in trace_dir.glob("trace.*")]
    return [
        *default_allow_read(job.scratch, job.sandbox.project),
        *(f"/proc/{pid}" for pid in traced),
        os.path.realpath(private),
        *world.readonly,
    ]


def _listing(job: _Task, world: World) -> list[str]:
    """Folders the agent may open themselves (not what is under them), for the seal: in a
    sandbox, those on the way to its mounts (:meth:`World.scaffolding`); without one, the
    folder of each file it was given (its script: Python lists the folder a script is in)."""
    if job.sandbox.isolation == "bubblewrap":
        return world.scaffolding()
    folders = {os.path.dirname(os.path.realpath(p)) for p in world.readonly if os.path.isfile(p)}
    return sorted(f for f in folders if f != os.sep and f not in job.fenced)


def _summary(
    task_id: str, record: Mapping[str, Any], verified: int | None, events: int | None
) -> str:
    checked = record.get("completion_signals_checked", 0)
    passed = record.get("completion_signals_passed", 0)
    verdict = {None: "", 0: ", verify passed"}.get(verified, ", verify failed")
    return (
        f"task {task_id}: finished in {record['duration_s']:.2f} s{verdict}"
        + (f", {passed} of {checked} check(s) passed" if checked else "")
        + f", {len(record['files_modified'])} file(s) changed"
        + (f", {events} journal events" if events is not None else "")
    )


def fixture_verify(job: _Task) -> Step:
    """The task's verify on a copy of its untouched fixture (with the hidden tests)."""
    verify = job.verify
    assert verify is not None
    with _verification_copy(job, job.fixture, "before", [verify]) as copy:
        return _step(job, verify, copy, junit=True)


def verify_fixtures(
    tasks: Sequence[Golden], sandbox: Sandbox, *, jobs: int | None = None
) -> dict[str, Step]:
    """Every task's verify on its untouched fixture, ``jobs`` at a time (default 1), in the
    task's kind of sandbox, before any agent runs: by task id, each task's verify before
    (:attr:`Execution.verified`). A task whose fixture could not be verified at all (a
    sandbox that did not start) is left out: its own run tries again and records why.

    Raises:
        AssayError: a verify that cannot run on the untouched fixture (:attr:`Step.cannot_run`:
            pytest missing, a command not found), in one line naming the first such task, the
            command and what it said: no agent could pass that task, so none runs.
    """
    scratch = Path(tempfile.mkdtemp(prefix="assay-verify-"))

    def one(task: Golden) -> Step | None:
        job = _task_of(task, scratch, sandbox)
        if job.verify is None:
            return None
        try:
            return fixture_verify(job)
        except (AssayError, OSError, UnicodeError, ValueError, subprocess.SubprocessError):
            return None

    try:
        with ThreadPoolExecutor(max_workers=max(1, jobs or 1)) as pool:
            steps = list(pool.map(one, tasks))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    for task, step in zip(tasks, steps, strict=True):
        if step is not None and step.cannot_run:
            raise AssayError(
                f"task {task.id}: its verify {task.fields['verify']!r} cannot run on the "
                f"untouched fixture: {step.said}"
            )
    return {task.id: step for task, step in zip(tasks, steps, strict=True) if step is not None}


def check_sandbox(sandbox: Sandbox, tasks: Sequence[Golden]) -> None:
    """Refuse, before any task runs, a sandbox this machine cannot give (with ``docker``, a
    task of ``tasks`` without an image too).

    Raises:
        AssayError: no bubblewrap (or it cannot build a sandbox), no seccomp, no strace for a
            journal, an unknown isolation or environment, no Docker daemon.
        GoldenError: with ``docker``, a task that names no image (and no ``--image``).
    """
    from assay.agent._trace import strace_path

    if sandbox.environment == "docker":
        from assay.agent._docker import check_images

        check_images(tasks, sandbox.image)
    if sandbox.environment not in ("local", "docker"):
        raise AssayError(f"unknown environment {sandbox.environment!r} (use local or docker)")
    if sandbox.isolation not in ISOLATIONS:
        raise AssayError(f"unknown isolation {sandbox.isolation!r} (use bubblewrap or none)")
    if sandbox.environment == "docker":
        from assay.agent._docker import check_daemon

        if sandbox.journal:
            raise AssayError(
                "--environment docker: the journal traces host processes and is not built for "
                "containers; add --no-journal"
            )
        check_daemon()
        return
    if sandbox.journal and (not sys.platform.startswith("linux") or strace_path() is None):
        raise AssayError(
            "the agent's journal needs strace on Linux, and none is installed "
            "(Debian: apt-get install strace); --no-journal runs the agent without a journal"
        )
    if sandbox.isolation == "bubblewrap":
        from assay.agent._sandbox import check_bubblewrap
        from assay.agent._seccomp import program

        check_bubblewrap()
        program()
    elif sandbox.no_network:
        raise AssayError(
            "--no-network needs the sandbox (a network namespace of its own); it cannot be "
            "given with --isolation none"
        )


def run_tasks(
    tasks: Sequence[Golden], execution: Execution, *, jobs: int | None = None, checked: bool = False
) -> list[TaskRun]:
    """Run the agent on every task here, ``jobs`` at a time (default 1) in threads, in task
    order (``checked``: the caller already ran :func:`check_sandbox` and
    :func:`verify_fixtures`). The Ray executor is ``_ray.run_on_ray``, which runs
    :func:`run_task` on the workers."""
    if not checked:
        check_sandbox(execution.sandbox, tasks)
        verified = verify_fixtures(tasks, execution.sandbox, jobs=jobs)
        execution = replace(execution, verified=verified)
    scratch = Path(tempfile.mkdtemp(prefix="assay-agent-"))
    watcher = execution.watcher

    def one(task: Golden) -> TaskRun:
        run = run_task(task, execution, scratch)
        if watcher is not None:
            watcher.ended(task, run)
        return run

    try:
        if watcher is not None:
            watcher.started(len(tasks))
        with ThreadPoolExecutor(max_workers=max(1, jobs or 1)) as pool:
            return list(pool.map(one, tasks))
    finally:
        if not execution.keep:
            shutil.rmtree(scratch, ignore_errors=True)
