"""From the traced calls of an agent run to its journal: what it read, wrote, ran and reached.

Each distinct file opened is one ``read`` or ``write`` event (the path relative to the worktree
when inside it, else absolute); each distinct command executed one ``exec`` event; each network
connection attempted one ``net`` event (``content`` says how the call returned: ``connect ok``,
``connect ENETUNREACH``, ``connect EINPROGRESS`` for a non-blocking one); the agent's standard
output closes the journal as a ``message``. A file opened for writing (``O_WRONLY``, ``O_RDWR``)
is a ``write``.

A ``read`` inside the worktree carries the content the agent could read there: the fixture's
version of the file (a file the agent created itself carries none: it wrote it). Files outside
the worktree carry no content: whether the agent may read them is decided by their path (the
boundary), and copying, say, a key file the agent opened into the journal would leak it.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from assay.agent._trace import Call
from assay.attest import Journal, inside

MAX_CONTENT_BYTES: Final = 1 << 20


def _fixture_text(fixture: Path, relative: str) -> str | None:
    """The fixture's text of a worktree file: never through a link (a fixture's link may lead
    anywhere, the goldens included)."""
    path = fixture / relative
    try:
        base = os.path.realpath(fixture)
        if os.path.realpath(path) != os.path.join(base, os.path.normpath(relative)):
            return None  # a link on the way
        if not path.is_file() or path.stat().st_size > MAX_CONTENT_BYTES:
            return None
        return path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def write_journal(
    journal: Path,
    calls: Sequence[Call],
    worktree: Path,
    fixture: Path,
    output: str,
) -> int:
    """Append the run's events to ``journal``; returns how many were written."""
    book = Journal(journal)
    tree = os.path.realpath(worktree)
    seen: set[tuple[str, ...]] = set()
    count = 0
    for call in calls:
        if call.kind in ("read", "write") and call.path is not None:
            in_tree = inside(call.path, tree)
            shown = os.path.relpath(call.path, tree) if in_tree else call.path
            key: tuple[str, ...] = (call.kind, shown)
            if key in seen:
                continue
            seen.add(key)
            content = _fixture_text(fixture, shown) if in_tree and call.kind == "read" else None
            book.append(call.kind, path=shown, content=content)
        elif call.kind == "exec":
            command = shlex.join(call.argv)
            key = ("exec", call.path or "", command)
            if key in seen:
                continue
            seen.add(key)
            # A relative program path is relative to a folder the trace does not name: the
            # program's own open is journaled with its resolved path instead.
            program = call.path if call.path and os.path.isabs(call.path) else None
            book.append("exec", path=program, command=command)
        elif call.kind == "net" and call.endpoint is not None:
            book.append("net", endpoint=call.endpoint, content=f"connect {call.result}")
        else:
            continue
        count += 1
    if output:
        book.append("message", content=output)
        count += 1
    return count
