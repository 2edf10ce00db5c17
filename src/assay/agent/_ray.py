"""Run agent tasks on a Ray cluster (``--executor ray``): one Ray actor per slot, anywhere on
the cluster, each running one task at a time and taking the next as soon as it is done.

Each task runs the same :func:`~assay.agent._execute.run_task` on its worker; this process (the
driver) makes what comes back whole, so no file of the worker's node is needed afterwards. Ray
is imported here only: it is optional.
"""

from __future__ import annotations

import contextlib
import importlib.util
import ipaddress
import logging
import os
import secrets
import shutil
import socket
import sys
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import ModuleType
from typing import Any, Final

from assay.agent._attester import SealedRecord
from assay.agent._execute import Execution, TaskRun, run_task
from assay.errors import AssayError
from assay.goldens import Golden
from assay.io import atomic_create_bytes

RAY_MISSING: Final = "--executor ray needs Ray: pip install 'assay[ray]'"
_AUTH: Final = ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH")
_PROBE_S: Final = 10.0


def require_ray() -> None:
    """Refuse, before anything runs, a Ray executor without Ray (without importing it)."""
    if importlib.util.find_spec("ray") is None:
        raise AssayError(RAY_MISSING)


def import_ray(*, local: bool) -> ModuleType:
    """Ray, set up before it reads its settings at import: usage statistics off (it never
    phones home); for a ``local`` Ray, a fresh token of its own for its token authentication,
    unless the user set Ray's auth (Ray's default would write one into the user's home)."""
    os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
    if local and "ray" not in sys.modules and not any(os.environ.get(v) for v in _AUTH):
        os.environ["RAY_AUTH_MODE"] = "token"
        os.environ["RAY_AUTH_TOKEN"] = secrets.token_hex(32)
    try:
        import ray
    except ImportError:
        raise AssayError(RAY_MISSING) from None
    return ray


@dataclass(frozen=True, slots=True)
class _Job:
    """What a worker gets: one task and how to run it (the attester holds the key: it signs).
    Its execution names no journal folder and no report: those are the driver's, the worker
    has its own."""

    task: Golden
    execution: Execution
    scratch: str  # the name of its scratch folder: the driver cleans up after a dead worker


@dataclass(frozen=True, slots=True)
class _Done:
    """What a worker sends back: the run (its journal path is the worker's), the journal's
    bytes, the attestation record to store, the progress lines, or an error to raise."""

    run: TaskRun | None
    journal: bytes | None
    sealed: SealedRecord | None
    lines: tuple[str, ...]
    error: str | None = None


def _run_on_worker(job: _Job) -> _Done:
    """One task on a Ray worker (a module-level function: Ray sends it by name)."""
    task = job.task
    if not Path(task.source).is_file():
        import ray

        node = ray.util.get_node_ip_address()  # type: ignore[no-untyped-call]
        message = (
            f"task {task.id}: {task.source} is not on Ray node {node}: every node needs the "
            "goldens (and the agent) at the same path as here"
        )
        return _Done(None, None, None, (), message)
    scratch = Path(tempfile.gettempdir()) / job.scratch
    scratch.mkdir(mode=0o700)  # a fresh name, as mkdtemp's: nothing is there yet
    journals = scratch / "journals"  # the worker's copy: the driver writes the run's own
    journals.mkdir()
    lines: list[str] = []
    sealed: list[SealedRecord] = []
    # Built here, where the journal and the worktree are; held for the driver to store.
    attest = job.execution.attest
    holder = replace(attest, held=sealed) if attest is not None else None
    execution = replace(job.execution, journal_dir=journals, attest=holder, report=lines.append)
    try:
        run = run_task(task, execution, scratch)
        journal = run.journal.read_bytes() if run.journal is not None else None
    except AssayError as exc:  # not a task folder (a task's own failure is its record)
        return _Done(None, None, None, tuple(lines), str(exc))
    finally:
        shutil.rmtree(journals, ignore_errors=True)
        if not execution.keep:  # kept, the scratch holds the kept worktree (as locally)
            shutil.rmtree(scratch, ignore_errors=True)
    return _Done(run, journal, sealed[0] if sealed else None, tuple(lines))


def _lost_run(task: Golden, reason: str, execution: Execution, scratch: Path) -> TaskRun:
    """A task whose Ray worker died: a crash, as a crashing agent's record reads, with nothing
    measured (no files, no output, no signal checked). Journaled, its journal says what was
    lost and its seal is DIRTY: what the tracer's record does not show cannot be shown clean."""
    record: dict[str, Any] = {
        "task_id": task.id,
        "duration_s": 0.0,
        "crashes": 1,
        "orphans": 0,
        "files_modified": [],
        "output": "",
        "completion_signals_checked": 0,
        "completion_signals_passed": 0,
        "x_lost": reason,
    }
    journal_dir, attest = execution.journal_dir, execution.attest
    if journal_dir is None or attest is None:
        return TaskRun(task.id, record, None)
    from assay.attest import Journal

    journal = journal_dir / f"{task.id}.journal.jsonl"
    journal.unlink(missing_ok=True)
    # A path outside every allowance (the journal that should have come back) is what makes
    # the seal DIRTY, as a tracer's record cut short does locally.
    Journal(journal).append("write", path=str(journal), content=f"journal lost: {reason}")
    worktree = Path(tempfile.mkdtemp(prefix=f"{task.id}-lost-", dir=scratch))
    record["attestation"] = attest.store(attest.build(task, journal, worktree, [], []))
    return TaskRun(task.id, record, None, journal)


def _is_loopback(address: str) -> bool:
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return address == "localhost"


@contextlib.contextmanager
def _loopback_only() -> Iterator[None]:
    """While a single-node Ray starts, Ray takes loopback as this node's address (as it does
    where it supports no clusters), so every server it starts listens on loopback only."""
    try:
        from ray._private import ray_constants
    except ImportError:
        ray_constants = None  # type: ignore[assignment]
    if ray_constants is None or not hasattr(ray_constants, "ENABLE_RAY_CLUSTER"):
        yield  # another Ray's layout: the address check after start-up still holds
        return
    saved = ray_constants.ENABLE_RAY_CLUSTER
    ray_constants.ENABLE_RAY_CLUSTER = False
    try:
        yield
    finally:
        ray_constants.ENABLE_RAY_CLUSTER = saved


def _probe(address: str) -> None:
    """Refuse at once a ``host:port`` nothing answers at (Ray would retry for minutes)."""
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit() or "/" in host:
        return  # "auto", a ray:// client address: Ray finds or refuses them itself
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=_PROBE_S).close()
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise AssayError(f"--ray-address {address}: nothing answers there ({reason})") from None


def _connect(ray: ModuleType, address: str | None, jobs: int | None) -> Path | None:
    """Connect to the cluster at ``address``, or start a local Ray for this run; returns the
    local Ray's session folder (None when connected to a cluster)."""
    quiet: dict[str, Any] = {"log_to_driver": False, "logging_level": logging.ERROR}
    if address == "local":
        raise AssayError("--ray-address names a running cluster; without it a local Ray starts")
    if address is not None:
        _probe(address)
        try:
            ray.init(address=address, **quiet)
        except (ConnectionError, RuntimeError, ValueError, OSError, ray.exceptions.RayError) as e:
            raise AssayError(f"--ray-address {address}: cannot connect: {_first_line(e)}") from None
        return None
    session = Path(tempfile.mkdtemp(prefix="assay-ray-"))  # not /tmp/ray: runs never collide
    try:
        with _loopback_only():
            ray.init(
                address="local",  # a Ray of its own, never one already running here
                num_cpus=jobs or os.cpu_count() or 1,
                include_dashboard=False,
                _node_ip_address="127.0.0.1",
                _temp_dir=str(session),
                **quiet,
            )
    except Exception as exc:  # Ray's start-up failures have no common class
        shutil.rmtree(session, ignore_errors=True)
        why = _first_line(exc)
        raise AssayError(f"--executor ray: could not start a local Ray: {why}") from None
    node = ray.util.get_node_ip_address()
    if not _is_loopback(node):
        ray.shutdown()
        shutil.rmtree(session, ignore_errors=True)
        raise AssayError(
            f"--executor ray: the local Ray took {node} as its address, not loopback; start "
            "a cluster (ray start --head) and pass --ray-address"
        )
    return session


def _lost(ray: ModuleType) -> tuple[type[BaseException], ...]:
    """Ray's errors for a task whose worker process, node or result went away mid-task
    (``RayActorError``: the worker process running the task died, ``ActorDiedError``;
    ``OutOfMemoryError``: Ray's memory monitor killed the worker)."""
    names = """RayActorError WorkerCrashedError NodeDiedError OutOfMemoryError ObjectLostError
        LocalRayletDiedError TaskCancelledError""".split()
    return tuple(getattr(ray.exceptions, n) for n in names if hasattr(ray.exceptions, n))


def _first_line(exc: BaseException) -> str:
    """One line saying what ``exc`` is: a failure in a worker's code is its cause's."""
    cause = getattr(exc, "cause", None)  # RayTaskError: the exception the worker raised
    shown = cause if isinstance(cause, BaseException) else exc
    first = (str(shown).strip().splitlines() or [""])[0]
    return f"{type(shown).__name__}: {first}"[:500]


def run_on_ray(
    tasks: Sequence[Golden],
    execution: Execution,
    *,
    jobs: int | None = None,
    address: str | None = None,
) -> list[TaskRun]:
    """Run the agent on every task as Ray tasks, in task order.

    ``jobs``: at most that many tasks at once (None: as many as the cluster has CPUs, each
    task taking one). With no ``address`` a local Ray (``jobs`` CPUs, else this machine's) is
    started for the run, on loopback only, and stopped afterwards.

    Raises:
        AssayError: Ray is missing or unreachable, the cluster has no CPU, a task's folder is
            not on its node, or an attestation could not be stored.
    """
    ray = import_ray(local=address is None)
    # stdout carries assay's report: what Ray prints there while connected (its raylets'
    # messages, e.g. that a worker died) goes to stderr instead. Ray's shutdown joins the
    # thread that prints them, so nothing of Ray's reaches stdout after it.
    with contextlib.redirect_stdout(sys.stderr):
        session = _connect(ray, address, jobs)
        scratch = Path(tempfile.mkdtemp(prefix="assay-ray-driver-"))
        try:
            slots = int(ray.cluster_resources().get("CPU", 0))
            if slots < 1:
                raise AssayError("the Ray cluster has no CPU to run a task on")
            report = execution.report
            if report is not None:
                where = address if address is not None else "a local Ray started for this run"
                cap = f", at most {jobs} at once" if jobs is not None else ""
                report(f"{len(tasks)} task(s) on Ray ({where}): {slots} CPU slot(s){cap}")
            driver = _Driver(ray, tasks, execution, scratch)
            return driver.drive(min(slots if jobs is None else min(jobs, slots), len(tasks)))
        finally:
            ray.shutdown()  # connected: only this driver leaves; started here: the Ray stops
            shutil.rmtree(scratch, ignore_errors=True)
            if session is not None:
                shutil.rmtree(session, ignore_errors=True)


class _TaskRunner:
    """A Ray actor's class, one per slot: a task at a time for the whole run, as the local
    executor's threads do, so no task waits on Ray's scheduler."""

    def run(self, job: _Job) -> _Done:
        return _run_on_worker(job)


@dataclass
class _Driver:
    """The driver's side of a Ray run: one worker (a :class:`_TaskRunner` actor) per slot, each
    given the next task as soon as it is done; what comes back is made whole here, and a lost
    worker's task is a crash record and its slot a new worker."""

    ray: ModuleType
    tasks: Sequence[Golden]
    execution: Execution
    scratch: Path
    runs: list[TaskRun | None] = field(init=False)
    errors: dict[int, str] = field(default_factory=dict)
    # What is awaited: a worker becoming ready (index None) or a task's result (its index),
    # with the worker and the task's scratch folder name.
    pending: dict[Any, tuple[Any, int | None, str]] = field(default_factory=dict)
    started_workers: int = 0
    unstarted: str = ""  # why Ray could not start a worker

    def __post_init__(self) -> None:
        self.runs = [None] * len(self.tasks)
        self._queued = iter(range(len(self.tasks)))
        # One CPU per slot: the cluster's slots are its CPUs. No restart, no retry: an agent is
        # never run twice behind the user's back (a retried agent would see a second, different
        # run); a slot whose worker died gets a new worker for the tasks still to run.
        self._runner = self.ray.remote(num_cpus=1, max_restarts=0, max_task_retries=0)(_TaskRunner)
        # The report and the watcher are this process's, the journal folder a folder of its node.
        self._shipped = replace(self.execution, journal_dir=None, report=None, watcher=None)

    def drive(self, workers: int) -> list[TaskRun]:
        """Every task run on ``workers`` workers, in task order."""
        if self.execution.watcher is not None:
            self.execution.watcher.started(len(self.tasks))
        for _ in range(workers):
            self._start_worker()
        while self.pending:
            [ref], _ = self.ray.wait(list(self.pending), num_returns=1)
            actor, index, job_scratch = self.pending.pop(ref)
            if index is None:  # a worker is ready, or could not start
                self._ready(ref, actor)
            elif self._collect(ref, actor, index, job_scratch):
                self._give(actor)
            elif self.started_workers < 2 * len(self.tasks):  # bounded: a worker that always dies
                self._start_worker()
        if next(self._queued, None) is not None:  # tasks left, and no worker to run them
            raise AssayError(self.unstarted or "the Ray workers were lost before every task ran")
        if self.errors:  # as locally: every task ran, then the first failure in task order stops it
            raise AssayError(self.errors[min(self.errors)])
        return [run for run in self.runs if run is not None]

    def _start_worker(self) -> None:
        actor = self._runner.remote()
        self.started_workers += 1
        self.pending[actor.__ray_ready__.remote()] = (actor, None, "")

    def _ready(self, ref: Any, actor: Any) -> None:
        try:
            self.ray.get(ref)
        except self.ray.exceptions.RayError as exc:
            self.unstarted = f"Ray could not start a worker: {_first_line(exc)}"
            return  # the other slots go on; with none left, the run stops
        self._give(actor)

    def _give(self, actor: Any) -> None:
        """The next task to ``actor``; with none left, the worker is let go."""
        index = next(self._queued, None)
        if index is None:
            self.ray.kill(actor)
            return
        # A worker's working folder is not ours: it gets the task by its absolute path.
        task = replace(self.tasks[index], source=os.path.abspath(self.tasks[index].source))
        name = f"assay-agent-{secrets.token_hex(8)}"
        job = _Job(task, self._shipped, name)
        self.pending[actor.run.remote(job)] = (actor, index, job.scratch)

    def _collect(self, ref: Any, actor: Any, index: int, job_scratch: str) -> bool:
        """A task's result taken in; False when its worker was lost (and let go)."""
        task = self.tasks[index]
        try:
            try:
                done: _Done = self.ray.get(ref)
            except _lost(self.ray) as exc:  # the worker, its node or its result was lost
                self._lost_worker(task, index, job_scratch, exc, actor)
                return False
            except self.ray.exceptions.RayError as exc:
                # Ray could not run it (or the worker's own code failed): not the agent's doing.
                self.errors[index] = f"task {task.id}: Ray could not run it: {_first_line(exc)}"
            else:
                self._take(index, done)
        except AssayError as exc:  # the tasks still running finish first, as locally
            self.errors[index] = str(exc)
        return True

    def _lost_worker(
        self, task: Golden, index: int, job_scratch: str, exc: BaseException, actor: Any
    ) -> None:
        if not self.execution.keep:  # its scratch folder, when its node is this machine
            shutil.rmtree(Path(tempfile.gettempdir()) / job_scratch, True)
        reason = f"the Ray worker running this task was lost ({_first_line(exc)})"
        run = self.runs[index] = _lost_run(task, reason, self.execution, self.scratch)
        report = self.execution.report
        if report is not None:
            report(f"task {task.id}: {reason}: recorded as a crash")
        self._ended(index, run)
        self.ray.kill(actor)  # its slot gets a new worker

    def _take(self, index: int, done: _Done) -> None:
        report = self.execution.report
        if report is not None:
            for line in done.lines:
                report(line)
        if done.error is not None:
            self.errors[index] = done.error
        elif done.run is not None:
            run = self.runs[index] = _received(done, done.run, self.execution)
            self._ended(index, run)

    def _ended(self, index: int, run: TaskRun) -> None:
        if self.execution.watcher is not None:
            self.execution.watcher.ended(self.tasks[index], run)


def _received(done: _Done, run: TaskRun, execution: Execution) -> TaskRun:
    """A worker's run made whole here: its journal written into the run's folder, its
    attestation stored in the project."""
    journal: Path | None = None
    journal_dir, attest = execution.journal_dir, execution.attest
    if done.journal is not None and journal_dir is not None:
        journal = journal_dir / f"{run.task_id}.journal.jsonl"
        journal.unlink(missing_ok=True)
        if not atomic_create_bytes(journal, done.journal):
            raise AssayError("the journal appeared while it was written", source=str(journal))
    if done.sealed is not None and attest is not None:
        if run.record.get("attestation") != done.sealed.id:
            raise AssayError(f"task {run.task_id}: its record names another attestation")
        attest.store(done.sealed)
    return replace(run, journal=journal)
