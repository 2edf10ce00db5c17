"""The agent under ``strace -f``: its options, the tracer's lifetime, and its output parsed.

strace is attached (``-p``) to assay's holder once it waits for the go, from outside the
sandbox (``_box``): it then follows every process the agent starts, whatever session it moves
to, and nothing of the sandbox's own setup. ``-ff`` writes one file per process (no
interleaved, split lines), ``-ttt`` stamps each call so that the files merge in time order,
``-y`` resolves every returned descriptor to its absolute path, and ``-xx`` prints every string
as hex escapes, so that no file name or argument can break the parse.
"""

from __future__ import annotations

import os
import re
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Final

_OPENS: Final = ("open", "openat", "openat2", "creat")
_EXECS: Final = ("execve", "execveat")
_SENDS: Final = ("connect", "sendto", "sendmsg")
# The first path of these is what the agent reaches (read); the rest, where it puts it (write).
_SOURCE_FIRST: Final = ("link", "linkat", "rename", "renameat", "renameat2", "mount")
_REACH: Final = (*_SOURCE_FIRST, "open_tree", "chroot", "pivot_root", "unlink", "unlinkat")
# What is traced: opening, running and connecting, and every other way to reach a file by its
# name (a link, a rename, a mount, a chroot) or the network without connect (a datagram to an
# address).
SYSCALLS: Final = ",".join((*_EXECS, *_OPENS, *_SENDS, *_REACH))
_LINE = re.compile(r"^(\d+\.\d+) (\w+)\((.*)\) += (.*)$")
_HEX = r'"((?:\\x[0-9a-f]{2})*)"'
_STRING = re.compile(_HEX)
_DECORATED = re.compile(r"^\d+<((?:\\x[0-9a-f]{2})*)>")
_PORT = re.compile(r"sin6?_port=htons\((\d+)\)")
_INET4 = re.compile(r"inet_addr\(" + _HEX + r"\)")
_INET6 = re.compile(r"inet_pton\(AF_INET6, " + _HEX)
# A path argument, with the folder it is relative to when the call names one (``-y``).
_PATH_ARG = re.compile(r"(?:(?:[A-Z_]+|\d+)<((?:\\x[0-9a-f]{2})*)>, )?" + _HEX)
_CWD = re.compile(r"AT_FDCWD<((?:\\x[0-9a-f]{2})*)>")


@dataclass(frozen=True, slots=True)
class Call:
    """One traced system call of interest.

    Attributes:
        time: seconds since the epoch (strace's ``-ttt``), to merge the per-process files.
        pid: the calling process.
        kind: ``read`` or ``write`` (a file opened), ``exec`` or ``net``.
        path: the absolute path opened or executed.
        argv: the command line of an ``exec``.
        endpoint: ``host:port`` of a ``net`` attempt.
        result: how ``connect`` returned: ``ok``, the error strace named (``ENETUNREACH``;
            ``EINPROGRESS`` for a non-blocking connect, whatever came of it), ``interrupted``.
    """

    time: float
    pid: int
    kind: str
    path: str | None = None
    argv: tuple[str, ...] = ()
    endpoint: str | None = None
    result: str = "ok"


def strace_path() -> str | None:
    return shutil.which("strace")


def options(output: Path) -> list[str]:
    """strace's options, writing ``output.<pid>`` files: follow forks, one file per process,
    time stamps, resolved descriptors, every string hex-escaped."""
    # -q, not -qq: each record then ends "+++ exited ... +++", which shows it is whole. Signals
    # are printed (and ignored by the parser): with signal=none strace also leaves out "+++
    # killed by SIGKILL +++", the line that shows a killed process's record whole.
    flags = ["-f", "-ff", "-ttt", "-q", "-y", "-xx", "-s", "65536"]
    return [*flags, "-e", f"trace={SYSCALLS}", "-o", str(output)]


def _text(hexed: str) -> str:
    return bytes.fromhex(hexed.replace("\\x", "")).decode("utf-8", errors="surrogateescape")


def _clean(text: str) -> str:
    """A decoded string that can go into JSON (undecodable bytes as U+FFFD)."""
    return text.encode("utf-8", errors="surrogateescape").decode("utf-8", errors="replace")


def _opened(name: str, args: str, result: str) -> tuple[str, str] | None:
    decorated = _DECORATED.match(result)
    if decorated is None:  # the open failed: nothing was read or written
        return None
    path = _clean(_text(decorated.group(1)))
    # Only the flags argument counts (a file may be named O_WRONLY); O_RDWR may write.
    flags = args.rsplit('"', 1)[-1]
    writing = name == "creat" or "O_WRONLY" in flags or "O_RDWR" in flags
    return ("write" if writing else "read"), path


def _connect(args: str, result: str) -> tuple[str, str] | None:
    port = _PORT.search(args)
    if port is None:  # a local (AF_UNIX) or other socket: not the network
        return None
    if "AF_INET6" in args:
        address = _INET6.search(args)
        host = f"[{_text(address.group(1))}]" if address else "[?]"
    else:
        address = _INET4.search(args)
        host = _text(address.group(1)) if address else "?"
    if host.startswith("[::ffff:") and "." in host:  # an IPv4 address, mapped: say it as one
        host = host[len("[::ffff:") : -1]
    if result.startswith("?"):  # the caller was killed in the call
        return f"{host}:{port.group(1)}", "interrupted"
    status = "ok" if result.startswith("0") else (result.split()[1:2] or ["failed"])[0]
    return f"{host}:{port.group(1)}", status


def parse_line(line: str, pid: int) -> Call | None:
    match = _LINE.match(line.rstrip("\n"))
    if match is None:  # not a call line (a signal, an exit), or a line cut mid-way
        return None
    stamp, name, args, result = match.groups()
    when = float(stamp)
    if name in _OPENS:
        opened = _opened(name, args, result)
        if opened is None:
            return None
        return Call(when, pid, opened[0], path=opened[1])
    if name in _EXECS:
        if not result.startswith("0"):
            return None  # a shell trying each folder of PATH
        strings = [_clean(_text(s)) for s in _STRING.findall(args)]
        if not strings:
            return None
        return Call(when, pid, "exec", path=strings[0], argv=tuple(strings[1:]))
    if name in _SENDS:
        attempt = _connect(args, result)  # sendto / sendmsg: only those naming an address
        if attempt is None:
            return None
        return Call(when, pid, "net", endpoint=attempt[0], result=attempt[1])
    return None


def reached(line: str, pid: int, cwd: str | None) -> list[Call]:
    """The paths a link, rename, mount, chroot or unlink names, resolved against the folder the
    call gives (``AT_FDCWD<cwd>``, ``3<dir>``) or else the process's last known ``cwd``; the
    first path of a link, rename or mount is reached (``read``), the others are written."""
    match = _LINE.match(line.rstrip("\n"))
    if match is None or match.group(2) not in _REACH or not match.group(4).startswith("0"):
        return []
    stamp, name, args, _ = match.groups()
    read_first = name in (*_SOURCE_FIRST, "open_tree", "chroot")
    calls = []
    for index, (folder, raw) in enumerate(_PATH_ARG.findall(args)):
        path = _clean(_text(raw))
        base = _clean(_text(folder)) if folder else cwd
        if not os.path.isabs(path) and base is not None:
            path = os.path.normpath(os.path.join(base, path))
        kind = "read" if index == 0 and read_first else "write"
        if os.path.isabs(path):
            calls.append(Call(float(stamp), pid, kind, path=path))
    return calls


def cwd_of(line: str) -> str | None:
    """The process's working folder, when the line shows it (``AT_FDCWD<...>``)."""
    found = _CWD.search(line)
    return _clean(_text(found.group(1))) if found else None


def read_calls(output: Path) -> list[Call]:
    """Every call in the tracer's files (``output.<pid>``), in time order."""
    calls: list[Call] = []
    for file in sorted(output.parent.glob(output.name + ".*")):
        suffix = file.name.rsplit(".", 1)[1]
        if not suffix.isdigit():
            continue
        pid, cwd = int(suffix), None
        with file.open(encoding="ascii", errors="replace") as handle:
            for line in handle:
                cwd = cwd_of(line) or cwd
                call = parse_line(line, pid)
                if call is not None:
                    calls.append(call)
                else:
                    calls.extend(reached(line, pid, cwd))
    calls.sort(key=lambda c: (c.time, c.pid))
    return calls


def _is_tracer(pid: str, marker: bytes) -> bool:
    try:
        if marker not in Path(f"/proc/{pid}/cmdline").read_bytes():
            return False
        return os.path.basename(os.readlink(f"/proc/{pid}/exe")) == "strace"
    except OSError:
        return False


def tracers(output: Path) -> list[int]:
    """The tracer processes writing to ``output``: strace itself (by its program, so that a
    process merely named like it is not taken for it) with that output on its command line."""
    marker = os.fsencode(str(output)) + b"\0"
    return [int(p) for p in os.listdir("/proc") if p.isdigit() and _is_tracer(p, marker)]


def incomplete(output: Path, agent_pid: int) -> str | None:
    """Why the tracer's record cannot be trusted whole, or None: the record of the process it
    attached to (``agent_pid``, assay's holder) is missing, or a process's record does not end
    with strace's exit line (the tracer was killed, or its files were cut)."""
    files = {f.name.rsplit(".", 1)[1]: f for f in output.parent.glob(output.name + ".*")}
    if str(agent_pid) not in files:
        return "the tracer's record of the agent's own process is missing"
    for pid, file in sorted(files.items()):
        try:
            lines = file.read_bytes().rstrip(b"\n").rsplit(b"\n", 1)
        except OSError:
            return f"the tracer's record of process {pid} cannot be read"
        if not lines[-1].split(b" ", 1)[-1].startswith(b"+++ "):
            return f"the tracer's record of process {pid} is cut short"
    return None


def traced_by(tracer_pids: list[int]) -> list[int]:
    """Processes the tracers still follow: what the agent left running, even in a new session."""
    wanted = {str(p) for p in tracer_pids}
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            status = Path(f"/proc/{entry}/status").read_text()
        except OSError:
            continue
        for line in status.splitlines():
            # A zombie (or a dying process) has exited, though it may still name its tracer:
            # it is no process left running.
            if line.startswith("State:") and line.split()[1] in ("Z", "X"):
                break
            if line.startswith("TracerPid:"):
                if line.split()[1] in wanted:
                    found.append(int(entry))
                break
    return found


def wait_gone(pids: list[int], timeout: float) -> bool:
    """Wait until none of ``pids`` is alive; False when some still are after ``timeout``."""
    deadline = time.monotonic() + timeout
    while any(is_alive(p) for p in pids):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.02)
    return True


def is_alive(pid: int) -> bool:
    """The process exists and is not a zombie (a zombie has already exited)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    fields = stat.rsplit(")", 1)[1].split()
    return bool(fields) and fields[0] != "Z"
