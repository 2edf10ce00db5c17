"""Run an agent on executable tasks and measure what it did: the telemetry, for real.

For each task folder (``task.md``, ``repo/``, ``solution.sh``): copy the fixture into a fresh
git worktree outside the goldens folder, run ``verify`` once on the untouched fixture, run the
agent command there in its own session (the instruction on stdin and in
``$ASSAY_TASK_PROMPT_FILE``), stop it at ``max_duration_s`` (the whole process group: terminate,
then kill), count and kill what it left running, read the files it changed from git, run the
command completion signals and ``verify`` again, and write the telemetry record the scorer reads.

With a journal (the default), the agent runs under ``strace -f`` (see ``_trace``): every file it
opened, command it ran and connection it attempted becomes a journal event, and the run is
sealed as an attestation. With ``no_network`` it runs in a new network namespace (``unshare``):
nothing, loopback included, is reachable, and every attempt is journaled.

Built-in agents: ``oracle`` runs the task's reference solution (handed to it by assay, in its
private folder), ``noop`` does nothing.
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
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from assay.agent._trace import is_alive
from assay.agent._verify import VerifyCounts, counts_of
from assay.attest._scan import inside
from assay.errors import AssayError, GoldenError
from assay.goldens import TASK_FILE, Golden

BUILTIN_AGENTS: Final = ("oracle", "noop")
DEFAULT_MAX_DURATION_S: Final = 600.0
_GRACE_S: Final = 3.0  # between terminate and kill
_STEP_TIMEOUT_S: Final = 300.0  # verify and a completion signal
_OUTPUT_LIMIT: Final = 100_000  # characters of the agent's stdout kept as its final output
# Not changes the agent made: caches Python and pytest write.
_IGNORED: Final = "__pycache__/\n*.pyc\n.pytest_cache/\n"


# Read-only places outside the worktree every toolchain opens: not the agent looking around.
# /proc is not among them: only its entries that are no process's (and those of the agent's own
# processes) are, since another process's memory may hold the answer (assay's own, for one).
SYSTEM_PATHS: Final = (
    "/usr",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/bin",
    "/sbin",
    "/etc",
    "/sys",
    "/dev",
    "/run",
    "/var/lib",
    "/var/cache",
)
_UNSHARE: Final = ("unshare", "--user", "--map-current-user", "--net", "--")
_TRACER_EXIT_S: Final = 10.0


@dataclass(frozen=True, slots=True)
class Sandbox:
    """How the agent is watched and fenced.

    Attributes:
        journal: run it under strace and journal what it did.
        no_network: run it in a network namespace of its own (nothing reachable).
        allow_read: more paths outside the worktree it may open (its own install, config).
        allow_endpoints: ``host:port`` endpoints it may connect to.
        project: the project root: no default allowance may cover it (its baseline, its runs,
            its goldens are not the agent's to read), though one may lie inside it (a venv).
        environment: ``local``, or ``docker``: every step inside the image the task names.
    """

    journal: bool = True
    no_network: bool = False
    allow_read: tuple[str, ...] = ()
    allow_endpoints: tuple[str, ...] = ()
    project: str | None = None
    environment: str = "local"


UNWATCHED: Final = Sandbox(journal=False)

# (task, journal, worktree, allowed paths, texts the agent was given) -> attestation id
Attest = Callable[[Golden, Path, Path, Sequence[str], Sequence[str]], str]


@dataclass(frozen=True, slots=True)
class TaskRun:
    """One task's telemetry record (the scorer's input), its journal, and its worktree when
    kept."""

    task_id: str
    record: dict[str, Any]
    worktree: Path | None
    journal: Path | None = None
    events: int = 0


def _git(worktree: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=assay", "-c", "user.email=assay@localhost", *args],
        cwd=worktree,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def make_worktree(task: Golden, folder: Path, parent: Path) -> tuple[Path, str]:
    """A fresh git repository holding the fixture, committed; returns it and its commit.

    Raises:
        GoldenError: the task has no fixture repository.
    """
    fixture = folder / "repo"
    if not fixture.is_dir():
        raise GoldenError(
            "an executable task needs a fixture repository (repo/)", source=task.source
        )
    worktree = Path(tempfile.mkdtemp(prefix=f"{task.id}-", dir=parent))
    shutil.copytree(fixture, worktree, dirs_exist_ok=True, symlinks=True)
    _git(worktree, "init", "-q")
    (worktree / ".git" / "info" / "exclude").write_text(_IGNORED, encoding="utf-8")
    _git(worktree, "add", "-A")
    _git(worktree, "commit", "-q", "--allow-empty", "-m", "fixture")
    return worktree, _git(worktree, "rev-parse", "HEAD").strip()


Wrap = Callable[[list[str]], list[str]]


def _run_step(
    command: str, worktree: Path, env: Mapping[str, str], wrap: Wrap | None = None
) -> tuple[int, str]:
    """A verify command or a completion signal: its exit status and output (bounded)."""
    argv = ["sh", "-c", command]
    try:
        done = subprocess.run(
            wrap(argv) if wrap is not None else argv,
            cwd=worktree,
            env=dict(env),
            capture_output=True,
            text=True,
            timeout=_STEP_TIMEOUT_S,
            start_new_session=True,
        )
    except subprocess.TimeoutExpired:
        return 124, ""
    return done.returncode, done.stdout + done.stderr


def _session_members(session: int) -> list[int]:
    """Processes still alive in ``session`` (Linux /proc)."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if os.getsid(int(entry.name)) == session and is_alive(int(entry.name)):
                members.append(int(entry.name))
        except OSError:
            continue
    return members


def _stop_group(pid: int) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(pid, sig)
        except (ProcessLookupError, PermissionError):
            return
        deadline = time.monotonic() + (_GRACE_S if sig == signal.SIGTERM else 1.0)
        while time.monotonic() < deadline and _session_members(pid):
            time.sleep(0.05)
        if not _session_members(pid):
            return


def _agent_command(agent: str, folder: Path, private: Path) -> str:
    if agent == "oracle":
        # The reference solution is handed over in the agent's private folder: read from the
        # task folder, inside the goldens, it would be what the journal is there to catch.
        copy = private / "solution.sh"
        shutil.copyfile(folder / "solution.sh", copy)
        return f"bash {json.dumps(str(copy))}"
    if agent == "noop":
        return "true"
    return agent


def _changed_files(worktree: Path) -> list[str]:
    status = _git(worktree, "status", "--porcelain", "-uall", "-z")
    paths = []
    entries = status.split("\0")
    i = 0
    while i < len(entries):
        entry = entries[i]
        i += 1
        if len(entry) < 4:
            continue
        code, path = entry[:2], entry[3:]
        if code[0] in "RC":  # a rename names its source next
            i += 1
        paths.append(path)
    return sorted(set(paths))


def _usage(path: Path) -> dict[str, Any]:
    """What the agent reported in ``$ASSAY_USAGE_FILE`` (nothing when it wrote nothing)."""
    try:
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
    if isinstance(cost, int | float) and not isinstance(cost, bool) and cost >= 0:
        out["cost_usd"] = float(cost)
    return out


def default_allow_read(scratch: Path, project: str | None = None) -> list[str]:
    """The system, this Python (and its import path), the folders of ``$PATH`` (and the tool
    prefix above a ``bin`` or ``shims`` folder), git's own configuration; never a folder
    holding ``scratch`` or the ``project``."""
    places = [*SYSTEM_PATHS, sys.prefix, sys.base_prefix, sys.exec_prefix]
    places += [p for p in sys.path if p and os.path.isabs(p)]  # where this Python imports from
    for entry in os.environ.get("PATH", "").split(os.pathsep):
        if entry and os.path.isabs(entry):
            places.append(entry)
            if os.path.basename(entry.rstrip(os.sep)) in ("bin", "sbin", "shims"):
                places.append(os.path.dirname(entry.rstrip(os.sep)))
    try:
        home = Path.home()
    except (RuntimeError, KeyError):  # no $HOME and no passwd entry (a container's uid)
        home = None
    if home is not None:
        places += [str(home / ".gitconfig"), str(home / ".config" / "git")]
    with contextlib.suppress(OSError):
        # Not the links (self, mounts, net): resolved here they would name assay's own process.
        entries = [f"/proc/{e}" for e in os.listdir("/proc") if not e.isdigit()]
        places += [e for e in entries if not os.path.islink(e)]
    fenced = [os.path.realpath(scratch)]
    if project is not None:
        fenced.append(os.path.realpath(project))
    out = []
    for place in places:
        real = os.path.realpath(place)
        holds = any(inside(f, real) for f in fenced)
        if real != os.sep and not holds and real not in out:
            out.append(real)
    return out


def _left_running(pid: int, tracer_pids: list[int]) -> list[int]:
    from assay.agent._trace import traced_by

    found = set(_session_members(pid)) | set(traced_by(tracer_pids))
    return sorted(found - set(tracer_pids))


def _kill_all(pid: int, others: Sequence[int]) -> None:
    _stop_group(pid)
    for other in others:
        try:
            os.kill(other, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            continue


def run_task(
    task: Golden,
    agent: str,
    scratch: Path,
    *,
    keep: bool = False,
    sandbox: Sandbox = UNWATCHED,
    journal_dir: Path | None = None,
    attest: Attest | None = None,
    report: Callable[[str], None] | None = None,
) -> TaskRun:
    """Run ``agent`` on one executable task and measure it.

    With ``sandbox.journal``, the journal is written to ``journal_dir`` and, with ``attest``,
    sealed: the record names the attestation.

    Raises:
        GoldenError: the task is not a task folder or has no fixture.
    """
    source = Path(task.source)
    if source.name != TASK_FILE:
        raise GoldenError(
            "only a task folder (task.md, repo/, solution.sh) can be run by an agent",
            source=task.source,
        )
    folder = source.parent
    worktree, base = make_worktree(task, folder, scratch)
    private = Path(tempfile.mkdtemp(prefix=f"{task.id}-io-", dir=scratch))
    prompt_file = private / "prompt.txt"
    instruction = task.input if isinstance(task.input, str) else json.dumps(task.input)
    prompt_file.write_text(instruction or "", encoding="utf-8")
    usage_file = private / "usage.json"
    (private / "tmp").mkdir()
    env = {
        **os.environ,
        "ASSAY_TASK_PROMPT_FILE": str(prompt_file),
        "ASSAY_WORKTREE": str(worktree),
        "ASSAY_USAGE_FILE": str(usage_file),
        "ASSAY_TASK_ID": task.id,
        "PYTHONDONTWRITEBYTECODE": "1",
        "TMPDIR": str(private / "tmp"),  # its temporary files stay inside its own scope
    }
    # verify and the signals run with the fixture's own Python settings, not the caller's.
    step_env = {k: v for k, v in env.items() if k not in ("PYTHONPATH", "PYTEST_ADDOPTS")}
    verify = task.fields.get("verify")
    wrap: Wrap | None = None
    container = ""
    if sandbox.environment == "docker":
        from assay.agent import _docker

        container = _docker.container_name(task.id)

        def in_container(argv: list[str], name: str | None = None) -> list[str]:
            return _docker.wrap(
                argv,
                image=str(task.fields["image"]),
                name=name or _docker.container_name(task.id),
                mounts=[worktree, private],
                workdir=worktree,
                env=env,
                no_network=sandbox.no_network,
            )

        wrap = in_container

    before: VerifyCounts | None = None
    if verify:
        _, output = _run_step(verify, worktree, step_env, wrap)
        before = counts_of(output)
    limit = float(task.fields.get("max_duration_s") or DEFAULT_MAX_DURATION_S)
    # Files, not pipes: a process the agent leaves behind keeps a pipe open and would make
    # waiting for the agent wait for it.
    out_file = private / "stdout.txt"
    argv = ["sh", "-c", _agent_command(agent, folder, private)]
    trace_out: Path | None = None
    if sandbox.journal:
        from assay.agent._trace import prefix, strace_path

        # Outside the agent's private folder: the tracer's files are not its to read.
        trace_out = Path(tempfile.mkdtemp(prefix=f"{task.id}-trace-", dir=scratch)) / "trace"
        argv = [*prefix(strace_path() or "strace", trace_out), *argv]
    if container:
        argv = in_container(argv, container)
    elif sandbox.no_network:
        argv = [*_UNSHARE, *argv]
    given: list[str] = []
    if attest is not None:
        from assay.attest._truth import given_texts

        # Read before the agent runs: what it was given, not what it may have put there.
        given = given_texts(task, folder / "repo")
    if report is not None:
        report(f"task {task.id}: started")
    started = time.monotonic()
    with prompt_file.open("rb") as stdin, out_file.open("wb") as stdout_sink:
        process = subprocess.Popen(
            argv,
            cwd=worktree,
            env=env,
            stdin=stdin,
            stdout=stdout_sink,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        timed_out = False
        try:
            process.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            timed_out = True
            if container:
                from assay.agent._docker import kill

                kill(container)
            _stop_group(process.pid)
            process.wait()
    duration = time.monotonic() - started
    stdout = out_file.read_text(encoding="utf-8", errors="replace")
    tracer_pids: list[int] = []
    if trace_out is not None:
        from assay.agent._trace import tracers

        tracer_pids = tracers(trace_out)
    left = _left_running(process.pid, tracer_pids)
    orphans = len(left)
    for _ in range(20):  # a process that keeps forking: kill until none is left
        if not left:
            break
        _kill_all(process.pid, left)
        left = _left_running(process.pid, tracer_pids)
    journal: Path | None = None
    events = 0
    traced_pids: list[str] = []
    if trace_out is not None:
        traced_pids = [f.name.rsplit(".", 1)[1] for f in trace_out.parent.glob("trace.*")]
        events, journal = _journal(
            task, process.pid, trace_out, tracer_pids, worktree, folder, stdout, journal_dir
        )
    record: dict[str, Any] = {
        "task_id": task.id,
        "duration_s": round(duration, 3),
        "crashes": 1 if (process.returncode != 0 and not timed_out) else 0,
        "orphans": orphans,
        "files_modified": _changed_files(worktree),
        "output": (stdout or "")[-_OUTPUT_LIMIT:],
        **_usage(usage_file),
    }
    if _git(worktree, "rev-parse", "HEAD").strip() != base:
        record["merge_conflicts"] = 1  # the agent rewrote history: its diff is not the fixture's
    checked = passed = 0
    for entry in task.fields.get("completion_signals") or []:
        if isinstance(entry, dict):
            checked += 1
            passed += _run_step(entry["run"], worktree, step_env, wrap)[0] == 0
    verify_code: int | None = None
    if verify:
        code, output = _run_step(verify, worktree, step_env, wrap)
        verify_code = code
        after = counts_of(output)
        checked += 1
        passed += code == 0
        if after is not None:
            # A test regression is a test the agent broke: failures beyond the fixture's own.
            already = before.failed if before is not None else 0
            record["tests_run"] = after.ran
            record["tests_passed"] = after.passed
            record["tests_failed"] = max(0, after.failed - already)
    record["completion_signals_checked"] = checked
    record["completion_signals_passed"] = passed
    if journal is not None and attest is not None:
        allowed = [
            *default_allow_read(scratch, sandbox.project),
            *(f"/proc/{pid}" for pid in traced_pids),
            os.path.realpath(private),
            *sandbox.allow_read,
        ]
        record["attestation"] = attest(task, journal, worktree, allowed, given)
    shutil.rmtree(private, ignore_errors=True)
    if trace_out is not None:
        shutil.rmtree(trace_out.parent, ignore_errors=True)
    if not keep:
        shutil.rmtree(worktree, ignore_errors=True)
    if report is not None:
        verdict = {None: "", 0: "verify passed"}.get(verify_code, "verify failed")
        report(
            f"task {task.id}: finished in {duration:.2f} s"
            + (f", {verdict}" if verdict else "")
            + f", {len(record['files_modified'])} file(s) changed"
            + (f", {events} journal events" if journal is not None else "")
        )
    return TaskRun(task.id, record, worktree if keep else None, journal, events)


def _journal(
    task: Golden,
    agent_pid: int,
    trace_out: Path,
    tracer_pids: list[int],
    worktree: Path,
    folder: Path,
    stdout: str,
    journal_dir: Path | None,
) -> tuple[int, Path]:
    """Wait for the tracer to finish its files, then write them as the task's journal."""
    from assay.agent._activity import write_journal
    from assay.agent._trace import incomplete, read_calls, wait_gone

    if not wait_gone(tracer_pids, _TRACER_EXIT_S):
        for pid in tracer_pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                continue
    where = journal_dir if journal_dir is not None else trace_out.parent
    journal = where / f"{task.id}.journal.jsonl"
    journal.unlink(missing_ok=True)
    events = write_journal(journal, read_calls(trace_out), worktree, folder / "repo", stdout)
    problem = incomplete(trace_out, agent_pid)
    if problem is not None:
        # What the tracer did not see cannot be shown clean: the tracer's own folder, outside
        # every allowance, makes the seal DIRTY (out_of_scope_path) and says why.
        from assay.attest import Journal

        Journal(journal).append("write", path=str(trace_out.parent), content=problem)
        events += 1
    return events, journal


def check_sandbox(sandbox: Sandbox) -> None:
    """Refuse, before any task runs, a sandbox this machine cannot give.

    Raises:
        AssayError: no strace for a journal, no user and network namespaces for no_network.
    """
    from assay.agent._trace import strace_path

    if sandbox.environment not in ("local", "docker"):
        raise AssayError(f"unknown environment {sandbox.environment!r} (use local or docker)")
    if sandbox.environment == "docker":
        if sandbox.journal:
            raise AssayError(
                "--environment docker: the journal traces host processes and is not built for "
                "containers; add --no-journal"
            )
        from assay.agent._docker import check_daemon

        check_daemon()
        return
    if sandbox.journal and (not sys.platform.startswith("linux") or strace_path() is None):
        raise AssayError(
            "the agent's journal needs strace on Linux, and none is installed "
            "(Debian: apt-get install strace); --no-journal runs the agent without a journal"
        )
    if sandbox.no_network:
        try:
            done = subprocess.run([*_UNSHARE, "true"], capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise AssayError(f"--no-network needs unshare (util-linux): {exc}") from None
        if done.returncode != 0:
            raise AssayError(
                "--no-network needs user and network namespaces, and unshare failed: "
                + (done.stderr.strip().splitlines() or ["no reason given"])[-1]
            )


def run_tasks(
    tasks: Sequence[Golden],
    agent: str,
    *,
    jobs: int | None = None,
    keep: bool = False,
    sandbox: Sandbox = UNWATCHED,
    journal_dir: Path | None = None,
    attest: Attest | None = None,
    report: Callable[[str], None] | None = None,
    checked: bool = False,
) -> list[TaskRun]:
    """Run ``agent`` on every task here, ``jobs`` at a time (default 1) in threads, in task
    order (``checked``: the caller already ran :func:`check_sandbox` and the image check).
    The Ray executor is ``_ray.run_on_ray``, which runs :func:`run_task` on the workers.

    Raises:
        AssayError: the sandbox cannot be given here, or git failed preparing a worktree.
    """
    if not checked:
        if sandbox.environment == "docker":
            from assay.agent._docker import check_images

            check_images(tasks)
        check_sandbox(sandbox)
    scratch = Path(tempfile.mkdtemp(prefix="assay-agent-"))

    def one(task: Golden) -> TaskRun:
        return run_task(
            task,
            agent,
            scratch,
            keep=keep,
            sandbox=sandbox,
            journal_dir=journal_dir,
            attest=attest,
            report=report,
        )

    try:
        with ThreadPoolExecutor(max_workers=max(1, jobs or 1)) as pool:
            return list(pool.map(one, tasks))
    except subprocess.CalledProcessError as exc:
        raise AssayError(f"git failed while preparing a worktree: {exc.stderr or exc}") from None
    finally:
        if not keep:
            shutil.rmtree(scratch, ignore_errors=True)
