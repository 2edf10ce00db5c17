"""Where attestations live: the store folder, ``assay-attestations/`` next to the config by
default (``attestations`` in assay.toml). It is meant to be committed, so anyone with the key can
verify; ``.assay/attestations/``, the old default, is read as a fallback by ``verify``.

- ``<hex>.json``: the record, canonical JSON, created once (exclusive create, no symlink
  following); its id is ``sha256:<hex>``, the SHA-256 of the file's bytes.
- ``lineage.jsonl``: one line per seal, hash-chained (``hash`` = SHA-256 of the canonical line
  without ``hash``; ``prev`` links to the previous line's hash).
- ``audit.jsonl``: one line per seal, HMAC-chained with the key (``mac`` over the canonical line
  without ``mac``), so only a key holder can extend or rewrite it.

A seal refuses a damaged chain (naming the line). ``verify`` checks a chain from genesis up to
and including the record's own entry: anyone can append to a file, and what was appended after
an entry (a forged line, a torn one) must not undo the records before it; damage there is a
note, damage at or before the entry a failure.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import hmac
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, Final, NamedTuple

from assay.attest._canonical import canonical_json, parse_canonical
from assay.config import DEFAULT_ATTESTATIONS
from assay.errors import AssayError
from assay.io import append_bytes, atomic_create_bytes, read_bytes

GENESIS: Final = "0" * 64
#: Where records were stored before the store was configurable (ignored with ``.assay/``).
LEGACY_STORE: Final = Path(".assay") / "attestations"
_ID_PREFIX: Final = "sha256:"
_HEX: Final = frozenset("0123456789abcdef")


def attest_dir(root: Path, folder: Path | None = None) -> Path:
    """The store: ``folder`` when the caller has one (the configured store), else the default."""
    return folder if folder is not None else root / DEFAULT_ATTESTATIONS


def parse_id(text: str) -> str | None:
    """``sha256:<64 hex>`` for an attestation id, given with or without its ``sha256:`` prefix
    (a bare digest is what ``ls`` of the store shows); None when it is not one.

    The hex is lowercase, as ``hexdigest`` writes it: the id is also the record's file name, and
    one id must name one file whatever the file system's case rules.
    """
    digest = text.removeprefix(_ID_PREFIX)
    if len(digest) != 64 or not set(digest) <= _HEX:
        return None
    return _ID_PREFIX + digest


def record_path(root: Path, attestation_id: str, folder: Path | None = None) -> Path:
    canonical = parse_id(attestation_id)
    if canonical is None:
        raise AssayError(
            f"not an attestation id: {attestation_id!r} (sha256:<64 hex digits>)",
            field="attestation",
        )
    return attest_dir(root, folder) / f"{canonical.removeprefix(_ID_PREFIX)}.json"


def write_record(root: Path, data: bytes, folder: Path | None = None) -> str:
    """Create the record file once; return its id."""
    attestation_id = "sha256:" + hashlib.sha256(data).hexdigest()
    path = record_path(root, attestation_id, folder)
    # Exclusive and atomic: the record appears whole or not at all, and nothing already at
    # ``path`` (a symlink included) is replaced or followed.
    if not atomic_create_bytes(path, data, mode=0o644):
        raise AssayError("this attestation already exists", source=str(path))
    return attestation_id


def _open_lock(path: Path) -> IO[str]:
    lock_path = path.with_suffix(".lock")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        return open(lock_path, "a")
    except OSError as exc:
        raise AssayError(f"cannot lock: {exc.strerror}", source=str(lock_path)) from None


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    with _open_lock(path) as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _append(path: Path, entry: dict[str, Any]) -> None:
    # Under the lock, so a failed append is undone safely; a symlink here is not assay's.
    append_bytes(path, canonical_json(entry) + b"\n", fsync=True, follow_symlinks=False)


def _sealed(entry: dict[str, Any], link: str, seal: Callable[[bytes], str]) -> bool:
    value = entry.get(link)
    body = {k: v for k, v in entry.items() if k != link}
    # compare_digest refuses non-ASCII text: such a value is simply wrong.
    return (
        isinstance(value, str)
        and value.isascii()
        and hmac.compare_digest(value, seal(canonical_json(body)))
    )


class _Damage(NamedTuple):
    line: int  # 1-based
    problem: str


def _scan(
    data: bytes, link: str, seal: Callable[[bytes], str]
) -> tuple[list[bytes], int, _Damage | None]:
    """The lines of a chain, how many lead intact from genesis, and the first damaged line
    after them (None when every line is an entry in order that links to the one before and
    carries its own seal).

    A last line without its newline is damage (the next line would be glued to it), so it is
    not counted intact even when its entry checks.
    """
    prev = GENESIS
    lines = data.splitlines()
    for i, raw in enumerate(lines):
        entry = parse_canonical(raw)
        if entry is None:
            return lines, i, _Damage(i + 1, "not canonical JSON")
        if entry.get("index") != i or entry.get("prev") != prev or not _sealed(entry, link, seal):
            return lines, i, _Damage(i + 1, f"entry {i} does not chain to the one before")
        prev = entry[link]
    if lines and not data.endswith(b"\n"):
        return lines, len(lines) - 1, _Damage(len(lines), "the last line is cut short (no newline)")
    return lines, len(lines), None


def _next_entry(
    path: Path, fields: dict[str, Any], link: str, seal: Callable[[bytes], str], what: str
) -> dict[str, Any]:
    """``fields`` as the next entry of the chain in ``path`` (a missing file is an empty chain,
    an unreadable one an AssayError): its index, the previous entry's ``link`` value (``prev``),
    and ``link`` itself, the seal of the canonical entry.

    A damaged chain is refused in one line naming the damaged line and how to repair it: the
    lines before the damage are intact, and keeping only them repairs the chain (attestations
    whose entries are dropped then fail ``verify``). Nothing is repaired here: damage may be
    tampering, which a person should see before it is cut away.
    """
    data = read_bytes(path, AssayError) if os.path.lexists(path) else b""
    lines, _, damage = _scan(data, link, seal)
    if damage is not None:
        line, problem = damage
        if line > 1:
            repair = f"lines 1-{line - 1} are intact: keep only them (head -n {line - 1})"
        else:
            repair = "no line before it is intact: move the file away to start a new one"
        raise AssayError(
            f"the {what} is damaged here ({problem}); {repair}, then seal again",
            source=f"{path}:{line}",
        )
    last = parse_canonical(lines[-1]) if lines else None
    entry: dict[str, Any] = {
        "index": len(lines),
        **fields,
        "prev": last[link] if last is not None else GENESIS,
    }
    entry[link] = seal(canonical_json(entry))
    return entry


def _lineage_seal(data: bytes) -> str:
    """The lineage is hash-chained: anyone can check it, nobody can rewrite it unnoticed."""
    return hashlib.sha256(data).hexdigest()


def _audit_seal(key: bytes) -> Callable[[bytes], str]:
    """The audit log is HMAC-chained: only a key holder can extend or rewrite it."""
    return lambda data: hmac.new(key, data, hashlib.sha256).hexdigest()


def _size(path: Path) -> int | None:
    try:
        return os.lstat(path).st_size
    except FileNotFoundError:
        return None


def _undo_append(path: Path, size: int | None) -> None:
    """Put ``path`` back to ``size`` bytes (None: it did not exist). Under the lock."""
    with contextlib.suppress(OSError):
        if size is None:
            os.unlink(path)
        else:
            os.truncate(path, size)


def store(
    root: Path,
    data: bytes,
    task: str,
    run_id: str,
    key: bytes,
    verdict: str,
    *,
    folder: Path | None = None,
) -> str:
    """Store a sealed record and chain it into the lineage and the audit log; return its id.

    Both chains are checked before anything is written, and both locks are held throughout
    (lineage first, always), so the record and both entries land or none does: a failed
    write (disk full) removes the record and undoes the lineage line. Only a crash in between
    can leave a record in no chain, which ``verify`` then reports as not in the lineage.

    Raises:
        AssayError: a damaged chain (naming its line and how to repair it), an existing record,
            or any write error (nothing is left behind).
    """
    where = attest_dir(root, folder)
    lineage, audit = where / "lineage.jsonl", where / "audit.jsonl"
    attestation_id = "sha256:" + hashlib.sha256(data).hexdigest()
    audit_seal = _audit_seal(key)
    with _locked(lineage), _locked(audit):
        fields = {"id": attestation_id, "task": task, "run_id": run_id}
        lineage_entry = _next_entry(lineage, fields, "hash", _lineage_seal, "lineage")
        fields = {"id": attestation_id, "verdict": verdict}
        audit_entry = _next_entry(audit, fields, "mac", audit_seal, "audit log")
        write_record(root, data, folder)
        lineage_size = _size(lineage)
        try:
            _append(lineage, lineage_entry)
            try:
                _append(audit, audit_entry)
            except BaseException:
                _undo_append(lineage, lineage_size)
                raise
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(record_path(root, attestation_id, folder))
            raise
    return attestation_id


class ChainCheck(NamedTuple):
    """What one chain says of one attestation."""

    problem: str | None  # why the attestation fails this chain; None: it passes
    note: str | None = None  # damage after its entry: it passes, but the chain needs repair


def _check_chain(
    path: Path,
    link: str,
    seal: Callable[[bytes], str],
    names: tuple[str, str],
    wanted: Callable[[dict[str, Any]], bool],
) -> ChainCheck:
    """Whether the chain in ``path`` holds a ``wanted`` entry, checked from genesis up to and
    including it: lines appended after it (a forged one included) cannot change its verdict,
    and damage there is a note. ``names`` are the file's and the record's names for messages.
    """
    file_name, record_name = names
    try:
        data = read_bytes(path, AssayError) if os.path.lexists(path) else b""
    except AssayError:
        return ChainCheck(f"{file_name} is unreadable")
    lines, intact, damage = _scan(data, link, seal)
    found = _wanted_line(lines[:intact], 1, wanted)
    if damage is None:
        return ChainCheck(None if found else f"the attestation is not in {record_name}")
    where = f"{file_name} is damaged at {path}:{damage.line} ({damage.problem})"
    if found:
        return ChainCheck(
            None,
            f"{where}, after this attestation's entry (line {found}); "
            "sealing refuses until it is repaired",
        )
    later = _wanted_line(lines[damage.line - 1 :], damage.line, wanted)
    if later == damage.line:
        return ChainCheck(f"{where}: it is this attestation's entry")
    if later:
        return ChainCheck(f"{where}, before this attestation's entry (line {later})")
    return ChainCheck(f"{where}, and the attestation is not in the intact lines before it")


def _wanted_line(
    lines: list[bytes], first: int, wanted: Callable[[dict[str, Any]], bool]
) -> int | None:
    """The number of the first line (counting from ``first``) holding a ``wanted`` entry."""
    for number, raw in enumerate(lines, start=first):
        entry = parse_canonical(raw)
        if entry is not None and wanted(entry):
            return number
    return None


def check_lineage(root: Path, attestation_id: str, folder: Path | None = None) -> ChainCheck:
    """Whether the lineage holds the id, its chain whole up to that entry."""
    return _check_chain(
        attest_dir(root, folder) / "lineage.jsonl",
        "hash",
        _lineage_seal,
        ("the lineage file", "the lineage"),
        lambda entry: entry.get("id") == attestation_id,
    )


def check_audit(
    root: Path, key: bytes, attestation_id: str, verdict: str, folder: Path | None = None
) -> ChainCheck:
    """Whether the audit log records this id and verdict, its chain whole (HMACs check) up to
    that entry."""
    return _check_chain(
        attest_dir(root, folder) / "audit.jsonl",
        "mac",
        _audit_seal(key),
        ("the audit log", "the audit log"),
        lambda entry: entry.get("id") == attestation_id and entry.get("verdict") == verdict,
    )
