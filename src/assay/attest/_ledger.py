"""Where attestations live: ``.assay/attestations/``.

- ``<hex>.json``: the record, canonical JSON, created once (exclusive create, no symlink
  following); its id is ``sha256:<hex>``, the SHA-256 of the file's bytes.
- ``lineage.jsonl``: one line per seal, hash-chained (``hash`` = SHA-256 of the canonical line
  without ``hash``; ``prev`` links to the previous line's hash).
- ``audit.jsonl``: one line per seal, HMAC-chained with the key (``mac`` over the canonical line
  without ``mac``), so only a key holder can extend or rewrite it.
"""

from __future__ import annotations

import fcntl
import hashlib
import hmac
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, Final

from assay.attest._canonical import canonical_json, parse_canonical
from assay.errors import AssayError
from assay.io import append_bytes, atomic_create_bytes, read_bytes

GENESIS: Final = "0" * 64


def attest_dir(root: Path) -> Path:
    return root / ".assay" / "attestations"


def record_path(root: Path, attestation_id: str) -> Path:
    hexpart = attestation_id.removeprefix("sha256:")
    if len(hexpart) != 64 or any(c not in "0123456789abcdef" for c in hexpart):
        raise AssayError("an attestation id looks like sha256:<64 hex digits>", field="attestation")
    return attest_dir(root) / f"{hexpart}.json"


def write_record(root: Path, data: bytes) -> str:
    """Create the record file once; return its id."""
    attestation_id = "sha256:" + hashlib.sha256(data).hexdigest()
    path = record_path(root, attestation_id)
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


def read_chain(path: Path) -> list[dict[str, Any]]:
    """The entries of a ledger file (none when it does not exist yet).

    Raises:
        AssayError: unreadable, or a line that is not canonical JSON (naming ``path:line``).
    """
    if not os.path.lexists(path):
        return []
    lines = []
    for lineno, raw in enumerate(read_bytes(path, AssayError).splitlines(), start=1):
        entry = parse_canonical(raw)
        if entry is None:
            raise AssayError("not canonical JSON", source=f"{path}:{lineno}")
        lines.append(entry)
    return lines


def _append(path: Path, entry: dict[str, Any]) -> None:
    # Under the lock, so a failed append is undone safely; a symlink here is not assay's.
    append_bytes(path, canonical_json(entry) + b"\n", fsync=True, follow_symlinks=False)


def _append_chained(
    path: Path, fields: dict[str, Any], link: str, seal: Callable[[bytes], str]
) -> None:
    """Append ``fields`` as the next entry of the chain in ``path``: its index, the previous
    entry's ``link`` value (``prev``), and ``link`` itself, the seal of the canonical entry."""
    with _locked(path):
        chain = read_chain(path)
        entry: dict[str, Any] = {
            "index": len(chain),
            **fields,
            "prev": chain[-1][link] if chain else GENESIS,
        }
        entry[link] = seal(canonical_json(entry))
        _append(path, entry)


def append_lineage(root: Path, attestation_id: str, task: str, run_id: str) -> None:
    """The lineage is hash-chained: anyone can check it, nobody can rewrite it unnoticed."""
    fields = {"id": attestation_id, "task": task, "run_id": run_id}
    _append_chained(
        attest_dir(root) / "lineage.jsonl",
        fields,
        "hash",
        lambda data: hashlib.sha256(data).hexdigest(),
    )


def append_audit(root: Path, key: bytes, attestation_id: str, verdict: str) -> None:
    """The audit log is HMAC-chained: only a key holder can extend or rewrite it."""
    _append_chained(
        attest_dir(root) / "audit.jsonl",
        {"id": attestation_id, "verdict": verdict},
        "mac",
        lambda data: hmac.new(key, data, hashlib.sha256).hexdigest(),
    )


def _check_chain(
    path: Path,
    link: str,
    seal: Callable[[bytes], str],
    names: tuple[str, str, str],
    wanted: Callable[[dict[str, Any]], bool],
) -> str | None:
    """None when every entry of the chain in ``path`` is in order, links to the previous one
    and carries its own seal, and one entry is ``wanted``; else why not. ``names`` are the
    file's, the chain's and the record's names for messages."""
    file_name, chain_name, record_name = names
    try:
        chain = read_chain(path)
    except AssayError:
        return f"{file_name} is unreadable or not canonical"
    prev = GENESIS
    found = False
    for i, entry in enumerate(chain):
        body = {k: v for k, v in entry.items() if k != link}
        if (
            entry.get("index") != i
            or entry.get("prev") != prev
            or not hmac.compare_digest(str(entry.get(link)), seal(canonical_json(body)))
        ):
            return f"{chain_name} is broken at entry {i}"
        prev = entry[link]
        found = found or wanted(entry)
    return None if found else f"the attestation is not in {record_name}"


def check_lineage(root: Path, attestation_id: str) -> str | None:
    """None when the lineage chain is whole and holds the id, else why not."""
    return _check_chain(
        attest_dir(root) / "lineage.jsonl",
        "hash",
        lambda data: hashlib.sha256(data).hexdigest(),
        ("the lineage file", "the lineage chain", "the lineage"),
        lambda entry: entry.get("id") == attestation_id,
    )


def check_audit(root: Path, key: bytes, attestation_id: str, verdict: str) -> str | None:
    """None when the audit chain is whole (HMACs check) and records this id and verdict."""
    return _check_chain(
        attest_dir(root) / "audit.jsonl",
        "mac",
        lambda data: hmac.new(key, data, hashlib.sha256).hexdigest(),
        ("the audit log", "the audit chain", "the audit log"),
        lambda entry: entry.get("id") == attestation_id and entry.get("verdict") == verdict,
    )
