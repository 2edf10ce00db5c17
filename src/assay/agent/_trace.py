"""The agent under ``strace -f``: the command prefix, the tracer's lifetime, and its output parsed.

strace runs detached (``-DDD``: the tracer is a grandchild in a session of its own), so the
process assay waits for is the agent itself and its exit status is the agent's, while the tracer
goes on following whatever the agent left behind until assay kills it. ``-ff`` writes one file
per process (no interleaved, split lines), ``-ttt`` stamps each call so that the files merge in
time order, ``-y`` resolves every returned descriptor to its absolute path, and ``-xx`` prints
every string as hex escapes, so that no file name or argument can break the parse.
"""

from __future__ import annotations

import os
import re
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Final

SYSCALLS: Final = "execve,execveat,open,openat,openat2,creat,connect"
_LINE = re.compile(r"^(\d+\.\d+) (\w+)\((.*)\) += (.*)$")
_HEX = r'"((?:\\x[0-9a-f]{2})*)"'
_STRING = re.compile(_HEX)
_DECORATED = re.compile(r"^\d+<((?:\\x[0-9a-f]{2})*)>")
_PORT = re.compile(r"sin6?_port=htons\((\d+)\)")
_INET4 = re.compile(r"inet_addr\(" + _HEX + r"\)")
_INET6 = re.compile(r"inet_pton\(AF_INET6, " + _HEX)


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


def prefix(strace: str, output: Path) -> list[str]:
    """The argv that runs a command under the tracer, writing ``output.<pid>`` files."""
    return [
        strace,
        "-DDD",
        "-f",
        "-ff",
        "-ttt",
        "-qq",
        "-y",
        "-xx",
        "-s",
        "65536",
        "-e",
        f"trace={SYSCALLS}",
        "-e",
        "signal=none",
        "-o",
        str(output),
        "--",
    ]


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
    if name in ("open", "openat", "openat2", "creat"):
        opened = _opened(name, args, result)
        if opened is None:
            return None
        return Call(when, pid, opened[0], path=opened[1])
    if name in ("execve", "execveat"):
        if not result.startswith("0"):
            return None  # a shell trying each folder of PATH
        strings = [_clean(_text(s)) for s in _STRING.findall(args)]
        if not strings:
            return None
        return Call(when, pid, "exec", path=strings[0], argv=tuple(strings[1:]))
    if name == "connect":
        attempt = _connect(args, result)
        if attempt is None:
            return None
        return Call(when, pid, "net", endpoint=attempt[0], result=attempt[1])
    return None


def read_calls(output: Path) -> list[Call]:
    """Every call in the tracer's files (``output.<pid>``), in time order."""
    calls: list[Call] = []
    for file in sorted(output.parent.glob(output.name + ".*")):
        suffix = file.name.rsplit(".", 1)[1]
        if not suffix.isdigit():
            continue
        with file.open(encoding="ascii", errors="replace") as handle:
            for line in handle:
                call = parse_line(line, int(suffix))
                if call is not None:
                    calls.append(call)
    calls.sort(key=lambda c: (c.time, c.pid))
    return calls


def _cmdline_has(pid: str, marker: bytes) -> bool:
    try:
        return marker in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def tracers(output: Path) -> list[int]:
    """The tracer processes writing to ``output`` (found by their command line)."""
    marker = os.fsencode(str(output)) + b"\0"
    return [int(p) for p in os.listdir("/proc") if p.isdigit() and _cmdline_has(p, marker)]


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
            if line.startswith("TracerPid:"):
                if line.split()[1] in wanted:
                    found.append(int(entry))
                break
    return found


def wait_gone(pids: list[int], timeout: float) -> bool:
    """Wait until none of ``pids`` is alive; False when some still are after ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        alive = [p for p in pids if Path(f"/proc/{p}").exists() and not _zombie(p)]
        if not alive:
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.02)


def _zombie(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z"
