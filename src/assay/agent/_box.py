"""Run one command in an agent's sandbox, with limits that hold without the journal.

The command runs under a small shell of assay's (the holder): it waits for assay's go, runs the
command, reports its exit status on a pipe, then holds the sandbox open until assay has counted
what is still running in it (the orphans) and killed it. With bubblewrap the sandbox is a PID
namespace: killing its first process kills every process in it, whatever session or process
group they moved to. Without (``isolation none``) the holder is the child subreaper of what the
command starts (a process that left the session is still its descendant), beside the session
and what the tracer still follows.

Limits: the wall-clock limit (the whole sandbox is killed at it), memory (``RLIMIT_DATA`` of
every process: heap and private mappings, not the reservations a runtime maps and never
touches) and the largest file (``RLIMIT_FSIZE``), set by assay on the holder before it starts
the command, so no process of the agent can raise them; stdout and stderr are each kept up to
``OUTPUT_BYTES`` (the last bytes: the final answer is at the end), the rest dropped and counted.
"""

from __future__ import annotations

import contextlib
import functools
import io
import json
import os
import resource
import select
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Final

from assay.agent._sandbox import World, bwrap_args, bwrap_path
from assay.agent._trace import is_alive, options, strace_path, traced_by
from assay.errors import AssayError

DEFAULT_MEMORY_MB: Final = 4096
FILE_MB: Final = 1024  # the largest file any process may write
OUTPUT_BYTES: Final = 1 << 20  # how much of stdout (and of stderr) is kept
_GRACE_S: Final = 3.0
_TRACER_ATTACH_S: Final = 10.0
# The holder: waits for assay's go (limits set, tracer attached), runs the command without the
# holder's own pipes, reports its exit status, and holds the sandbox open until assay kills it.
# Python (the interpreter running assay, which the sandbox shows), not sh: sh cannot name a
# descriptor above 9, and these are whatever numbers the pipes got. With "reap" (no sandbox:
# no PID namespace whose init inherits what the command leaves) it is the child subreaper of
# everything the command starts: a process that left the session (`(setsid cmd &)`) is still
# its descendant, to count and to kill.
_HOLDER: Final = """
import os, sys
status, hold = int(sys.argv[1]), int(sys.argv[2])
if sys.argv[3] == "reap" and sys.platform.startswith("linux"):
    import ctypes
    ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
os.write(status, b"ready\\n")
os.read(hold, 3)
pid = os.fork()
if pid == 0:
    os.close(status)
    os.close(hold)
    try:
        os.execvp(sys.argv[4], sys.argv[4:])
    finally:
        os._exit(127)
code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
os.write(status, b"%d\\n" % (code if code >= 0 else 128 - code))
os.close(status)
os.read(hold, 1)
"""


@dataclass(frozen=True, slots=True)
class Limits:
    """What one sandboxed command may use.

    Attributes:
        duration_s: wall-clock seconds before the whole sandbox is killed.
        memory_mb: ``RLIMIT_DATA`` of every process, in MiB.
    """

    duration_s: float
    memory_mb: int = DEFAULT_MEMORY_MB


@dataclass(frozen=True, slots=True)
class Finished:
    """How a sandboxed command ended.

    Attributes:
        exit_code: its exit status; None when it was killed at the limit or its holder was.
        timed_out: it reached ``duration_s``.
        orphans: processes still running in the sandbox when it ended (then killed).
        stdout / stderr: the last ``OUTPUT_BYTES`` of each, decoded (bad bytes replaced).
        dropped: bytes of stdout and stderr not kept.
        duration_s: wall-clock seconds, go to end.
        root_pid: the process the tracer's record starts from (the sandbox's first).
    """

    exit_code: int | None
    timed_out: bool
    orphans: int
    stdout: str
    stderr: str
    dropped: int
    duration_s: float
    root_pid: int


class _Tail:
    """The last ``limit`` bytes read from a pipe, on a thread of its own, and how many were
    dropped: a flood of output costs no more memory than the limit."""

    def __init__(self, pipe: IO[bytes], limit: int) -> None:
        # A buffered reader's read1 returns what is there (up to the size), not the size.
        assert isinstance(pipe, io.BufferedReader)
        self._pipe: io.BufferedReader = pipe
        self._limit = limit
        self._chunks: deque[bytes] = deque()
        self._kept = 0
        self.dropped = 0
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        while chunk := self._pipe.read1(1 << 16):
            self._chunks.append(chunk)
            self._kept += len(chunk)
            while self._kept - len(self._chunks[0]) >= self._limit:
                self._kept -= len(self._chunks[0])
                self.dropped += len(self._chunks.popleft())
        self._pipe.close()

    def text(self, timeout: float = 5.0) -> str:
        self._thread.join(timeout)
        data = b"".join(self._chunks)
        if len(data) > self._limit:
            self.dropped += len(data) - self._limit
            data = data[-self._limit :]
        return data.decode("utf-8", errors="replace")


class _Streams:
    """A command's stdout and stderr, each a :class:`_Tail` of ``OUTPUT_BYTES``, read from the
    moment it starts; :meth:`finished` is how it ended, with what they kept."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        assert process.stdout is not None and process.stderr is not None
        self.out = _Tail(process.stdout, OUTPUT_BYTES)
        self.err = _Tail(process.stderr, OUTPUT_BYTES)

    def finished(
        self, code: int | None, timed_out: bool, orphans: int, duration: float, root_pid: int
    ) -> Finished:
        stdout, stderr = self.out.text(), self.err.text()  # read first: they count the dropped
        dropped = self.out.dropped + self.err.dropped
        return Finished(code, timed_out, orphans, stdout, stderr, dropped, duration, root_pid)

    def said(self) -> str:
        """The last line the command wrote to stderr (the reason it did not start)."""
        lines = self.err.text().strip().splitlines()
        return lines[-1] if lines else "no reason given"


def _set_limits(pid: int, limits: Limits) -> None:
    data, fsize = limits.memory_mb << 20, FILE_MB << 20
    resource.prlimit(pid, resource.RLIMIT_DATA, (data, data))
    resource.prlimit(pid, resource.RLIMIT_FSIZE, (fsize, fsize))
    resource.prlimit(pid, resource.RLIMIT_CORE, (0, 0))


def _await_ready(fd: int, process: subprocess.Popen[bytes]) -> None:
    """Wait until the holder has started and waits for the go: the tracer, attached then, sees
    only what the command does, never the holder's own start (which varies with the machine)."""
    data = b""
    deadline = time.monotonic() + _TRACER_ATTACH_S
    while not data.endswith(b"\n") and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.5)
        if ready:
            chunk = os.read(fd, 6 - len(data))
            if not chunk:
                break
            data += chunk
    if data != b"ready\n":
        process.poll()
        raise AssayError("the agent's sandbox did not start (its holder never said ready)")


def _read_status(fd: int, deadline: float) -> tuple[int | None, bool]:
    """The command's exit status from the holder, or (None, True) at the deadline, or (None,
    False) when the holder died first."""
    data = b""
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return None, True
        ready, _, _ = select.select([fd], [], [], min(left, 1.0))
        if not ready:
            continue
        chunk = os.read(fd, 64)
        data += chunk
        if not chunk or b"\n" in data:  # a line, not the pipe's end: a tracer may hold it
            text = data.split(b"\n", 1)[0].decode("ascii", errors="replace").strip()
            return (int(text), False) if text.lstrip("-").isdigit() else (None, False)


def _children(pid: int) -> list[int]:
    """The children of ``pid`` (all its threads'), from /proc."""
    out: list[int] = []
    with contextlib.suppress(OSError):
        for task in os.listdir(f"/proc/{pid}/task"):
            with contextlib.suppress(OSError):
                children = Path(f"/proc/{pid}/task/{task}/children").read_text()
                out += [int(c) for c in children.split()]
    return out


def _descendants(pid: int) -> set[int]:
    """Every living process below ``pid`` (its children, theirs, ...), from /proc."""
    found: set[int] = set()
    todo = _children(pid)
    while todo:
        child = todo.pop()
        if child not in found and is_alive(child):
            found.add(child)
            todo += _children(child)
    return found


class _Held:
    """What a sandboxed and an unsandboxed command share: the holder's pipes, the bounded
    output, the tracer, and the end (count what is left, kill it, release the rest). A
    subclass says how to find what is left (:meth:`_orphans`) and how to kill it (:meth:`_stop`).
    """

    limits: Limits
    root_pid: int
    _process: subprocess.Popen[bytes]
    _status: int
    _hold_w: int
    _streams: _Streams
    _started: float
    _tracer: subprocess.Popen[bytes] | None = None

    def _start(
        self,
        command: str,
        limits: Limits,
        stdin: Path | None,
        trace_out: Path | None,
        root: Callable[[], int] | None = None,
        prefix: Sequence[str] = (),
        fds: Sequence[int] = (),
        reap: bool = False,
        **popen: Any,
    ) -> None:
        """Start the holder of ``command`` (after ``prefix``: bwrap's, with its ``fds``; ``reap``:
        the holder is the subreaper of what the command starts); once it waits for the go
        (``root``: its host pid; None: the process started), set its limits, attach the tracer
        and go. A failure on the way kills it all."""
        self.limits = limits
        self._status, status_w = os.pipe()
        hold_r, self._hold_w = os.pipe()
        argv = [*prefix, sys.executable, "-I", "-S", "-c", _HOLDER, str(status_w), str(hold_r)]
        argv.append("reap" if reap else "-")
        passed = (*fds, status_w, hold_r)
        self._process = spawn([*argv, "sh", "-c", command], stdin, pass_fds=passed, **popen)
        for fd in passed:
            os.close(fd)
        self._streams = _Streams(self._process)
        try:
            self.root_pid = self._process.pid if root is None else root()
            _await_ready(self._status, self._process)
            _set_limits(self.root_pid, limits)
            if trace_out is not None:  # attached before the go: it sees only the command
                self._tracer = _attach(trace_out, self.root_pid)
        except BaseException:
            self._kill()
            raise
        os.write(self._hold_w, b"go\n")
        self._started = time.monotonic()

    def _orphans(self) -> set[int]:
        raise NotImplementedError

    def _stop(self) -> None:
        raise NotImplementedError

    def finish(self) -> Finished:
        """Wait for the command (to its limit), count what it left, kill everything."""
        deadline = self._started + self.limits.duration_s
        code, timed_out = _read_status(self._status, deadline)
        duration = time.monotonic() - self._started
        orphans = 0 if timed_out else len(self._orphans())
        self._kill()
        return self._streams.finished(code, timed_out, orphans, duration, self.root_pid)

    def _kill(self) -> None:
        self._stop()
        if self._tracer is not None:
            try:
                self._tracer.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._tracer.kill()
                self._tracer.wait()
        for fd in (self._status, self._hold_w):
            with contextlib.suppress(OSError):
                os.close(fd)

    def __enter__(self) -> _Held:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._process.poll() is None:
            self._kill()


def spawn(
    argv: list[str],
    stdin: Path | None,
    *,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    pass_fds: Sequence[int] = (),
) -> subprocess.Popen[bytes]:
    """``argv`` in a session of its own, reading ``stdin`` (None: nothing), stdout and stderr
    piped (for :class:`_Streams`): how every command of an agent's is started."""
    with open(stdin or os.devnull, "rb") as source:
        return subprocess.Popen(
            argv,
            cwd=cwd,
            env=None if env is None else dict(env),
            stdin=source,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            pass_fds=pass_fds,
            start_new_session=True,
        )


class Sandboxed(_Held):
    """One command in a bubblewrap sandbox; :meth:`finish` waits for it, counts the orphans and
    kills the sandbox (use it as a context manager: the sandbox never outlives it)."""

    def __init__(
        self,
        command: str,
        world: World,
        env: Mapping[str, str],
        limits: Limits,
        *,
        stdin: Path | None = None,
        trace_out: Path | None = None,
    ) -> None:
        from assay.agent import _seccomp

        bwrap = bwrap_path()
        if bwrap is None:
            raise AssayError("bubblewrap (bwrap) is not installed")
        info_r, info_w = os.pipe()
        seccomp = _seccomp.program_fd()
        prefix = [bwrap, *bwrap_args(world, env), "--info-fd", str(info_w)]
        prefix += ["--seccomp", str(seccomp), "--"]
        root = functools.partial(self._holder, info_r)
        self._start(command, limits, stdin, trace_out, root, prefix, (info_w, seccomp))

    def _holder(self, info: int) -> int:
        """The holder's host pid: the first child of bwrap's init (the sandbox's first process),
        once bwrap has built the sandbox and run it. The tracer follows what it starts after
        the go, and nothing of bwrap's own setup."""
        self._init = int(self._info(info)["child-pid"])
        deadline = time.monotonic() + _TRACER_ATTACH_S
        while time.monotonic() < deadline:
            found = _children(self._init)
            if found:
                return found[0]
            if self._process.poll() is not None:
                break
            time.sleep(0.0005)
        self._process.wait()
        raise AssayError(f"the sandbox did not start: {self._streams.said()}")

    def _info(self, fd: int) -> dict[str, int]:
        """bwrap's first words: the sandbox's first process, as the host sees it. Read up to
        the end of its JSON object, not to the end of the pipe (the sandbox holds it open)."""
        data = b""
        parsed: object = None
        with os.fdopen(fd, "rb", buffering=0) as handle:
            while chunk := handle.read(4096):
                data += chunk
                try:
                    parsed = json.loads(data)
                    break
                except ValueError:
                    continue
        if not isinstance(parsed, dict) or not isinstance(parsed.get("child-pid"), int):
            self._process.wait()
            raise AssayError(f"the sandbox did not start: {self._streams.said()}")
        return parsed

    def _orphans(self) -> set[int]:
        """What still runs in the sandbox beside the holder: bwrap's init is its reaper, so
        every process whose parent has gone is its child; those and all they started."""
        found: set[int] = set()
        for pid in _children(self._init):
            if pid != self.root_pid and is_alive(pid):
                found |= {pid, *_descendants(pid)}
        return found

    def _stop(self) -> None:
        """Kill the sandbox's first process: the kernel kills every other one with it."""
        pid = getattr(self, "_init", None)
        if pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        try:
            self._process.wait(timeout=_GRACE_S)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()


def _attach(trace_out: Path, pid: int) -> subprocess.Popen[bytes]:
    """strace, outside the sandbox, attached to its first process before it runs anything: it
    then follows every process the sandbox starts. Waits until the kernel shows the tracer."""
    tracer = subprocess.Popen(
        [strace_path() or "strace", *options(trace_out), "-p", str(pid)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + _TRACER_ATTACH_S
    while time.monotonic() < deadline:
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            break
        line = next((x for x in status.splitlines() if x.startswith("TracerPid:")), "")
        if line.split()[1:2] not in (["0"], []):
            return tracer
        if tracer.poll() is not None:
            break
        time.sleep(0.002)
    tracer.kill()
    tracer.wait()
    raise AssayError("the tracer could not attach to the agent's sandbox")


class Unsandboxed(_Held):
    """One command with no sandbox (``isolation none``): the same holder, limits and bounded
    output, in a session of its own; what is left is found by session and by tracer (a process
    that left the session is still followed by strace), and killed."""

    def __init__(
        self,
        command: str,
        cwd: Path,
        env: Mapping[str, str],
        limits: Limits,
        *,
        stdin: Path | None = None,
        trace_out: Path | None = None,
    ) -> None:
        self._start(command, limits, stdin, trace_out, reap=True, cwd=cwd, env=env)

    def _orphans(self) -> set[int]:
        """What the command left: the holder's descendants (it is their subreaper, whatever
        session they moved to), its session's members, and what the tracer still follows."""
        tracer_pids = [self._tracer.pid] if self._tracer is not None else []
        found = set(_session_members(self.root_pid)) | set(traced_by(tracer_pids))
        found |= _descendants(self.root_pid)
        return found - {self.root_pid, *tracer_pids}

    def _stop(self) -> None:
        # The holder last: while it lives, what a killed process started is reparented to it
        # (its subreaper) and found again; a process that keeps forking is killed until none is.
        for _ in range(20):
            left = self._orphans()
            for pid in left:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            if not left:
                break
            time.sleep(0.02)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.root_pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(self.root_pid, signal.SIGKILL)
        self._process.wait()


def _session_members(session: int) -> list[int]:
    """Processes still alive in ``session`` (Linux /proc)."""
    members = []
    for entry in os.listdir("/proc"):
        with contextlib.suppress(OSError):
            if entry.isdigit() and os.getsid(int(entry)) == session and is_alive(int(entry)):
                members.append(int(entry))
    return members
