"""The hash-chained activity journal (JSONL, one event per line).

Each event: ``index`` (0, 1, ...), ``kind`` (read, write, exec, net, tool, message), optional
``path``, ``endpoint`` (``host:port``), ``command``, ``content``, then ``prev_hash`` (64 zeros for
the first event) and ``hash`` = SHA-256 hex of the RFC 8785 canonical JSON of the event without
``hash``. Each line is the canonical JSON of the whole event.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from assay.attest._canonical import canonical_json, parse_canonical
from assay.errors import AssayError, ValidationError
from assay.io import append_bytes

GENESIS: Final = "0" * 64
_BOM: Final = b"\xef\xbb\xbf"
KINDS: Final = ("read", "write", "exec", "net", "tool", "message")


def event_hash(event: dict[str, Any]) -> str:
    body = {k: v for k, v in event.items() if k != "hash"}
    return hashlib.sha256(canonical_json(body)).hexdigest()


@dataclass(frozen=True, slots=True)
class JournalCheck:
    ok: bool
    reason: str | None
    head: str
    events: int


class JournalError(Exception):
    """A journal line that breaks the format or the chain."""


def iter_events(path: Path) -> Iterator[dict[str, Any]]:
    """Events in order, each checked: canonical bytes, index, chain link and hash (a
    JournalError names the line and what is wrong; an unreadable journal raises OSError, and
    the callers name the file). A leading UTF-8 BOM is tolerated (assay's one BOM policy): it
    is no part of any event, so the chain and the hashes are unaffected."""
    prev = GENESIS
    with open(path, "rb") as handle:
        for lineno, raw in enumerate(handle, start=1):
            line = raw[:-1] if raw.endswith(b"\n") else raw
            if lineno == 1:
                line = line.removeprefix(_BOM)
            event = parse_canonical(line)
            if event is None:
                raise JournalError(f"line {lineno}: not canonical JSON")
            index = event.get("index")
            if type(index) is not int or index != lineno - 1:  # true is not 1 here
                raise JournalError(f"line {lineno}: index {event.get('index')!r} out of order")
            if event.get("kind") not in KINDS:
                raise JournalError(f"line {lineno}: unknown kind {event.get('kind')!r}")
            if event.get("prev_hash") != prev:
                raise JournalError(f"line {lineno}: prev_hash does not chain")
            if event.get("hash") != event_hash(event):
                raise JournalError(f"line {lineno}: hash does not match the event")
            prev = event["hash"]
            yield event


class Journal:
    """Append events to a journal file and verify its chain.

    Example:
        >>> j = Journal("run.journal.jsonl")
        >>> j.append(kind="read", path="src/app.py", content="...")
    """

    def __init__(self, path: str | os.PathLike[str], *, fsync: bool = False):
        self.path = Path(path)
        self.fsync = fsync
        self._next = 0
        self._head = GENESIS
        try:
            size = self.path.stat().st_size
        except FileNotFoundError:
            size = 0
        except OSError as exc:
            raise AssayError(f"cannot read: {exc.strerror}", source=str(self.path)) from None
        if size:
            check = self.verify()
            if not check.ok:
                raise ValidationError(
                    f"the journal is broken: {check.reason}", source=str(self.path)
                )
            self._next, self._head = check.events, check.head

    @property
    def head(self) -> str:
        return self._head

    def append(
        self,
        kind: str,
        *,
        path: str | None = None,
        endpoint: str | None = None,
        command: str | None = None,
        content: str | None = None,
    ) -> dict[str, Any]:
        """Append one event and return it (with its hash).

        Raises:
            ValidationError: a bad kind or field. AssayError: the journal cannot be written
                (the file is left as it was).
        """
        if kind not in KINDS:
            raise ValidationError(
                f"unknown event kind {kind!r} (use {', '.join(KINDS)})", field="kind"
            )
        event: dict[str, Any] = {"index": self._next, "kind": kind}
        fields = {"path": path, "endpoint": endpoint, "command": command, "content": content}
        for name, value in fields.items():
            if value is not None:
                if not isinstance(value, str):
                    raise ValidationError(f"{name} must be a string", field=name)
                event[name] = value
        event["prev_hash"] = self._head
        event["hash"] = event_hash(event)
        append_bytes(self.path, canonical_json(event) + b"\n", fsync=self.fsync)
        self._next += 1
        self._head = event["hash"]
        return event

    def verify(self) -> JournalCheck:
        """Check the whole chain from genesis; never raises for a broken journal."""
        head, count = GENESIS, 0
        try:
            for event in iter_events(self.path):
                head, count = event["hash"], count + 1
        except JournalError as exc:
            return JournalCheck(False, str(exc), head, count)
        except OSError as exc:
            return JournalCheck(False, f"cannot read the journal: {exc.strerror}", head, count)
        return JournalCheck(True, None, head, count)
