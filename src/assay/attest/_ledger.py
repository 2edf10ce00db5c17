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
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, Final

from assay.attest._canonical import canonical_json
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
        entry = _canonical_entry(raw)
        if entry is None:
            raise AssayError("not canonical JSON", source=f"{path}:{lineno}")
        lines.append(entry)
    return lines


def _canonical_entry(raw: bytes) -> dict[str, Any] | None:
    """The JSON object ``raw`` is the canonical form of, else None."""
    try:
        entry = json.loads(raw.decode("utf-8"))
        # canonical_json refuses NaN (which json.loads accepts) with a ValueError.
        return entry if isinstance(entry, dict) and canonical_json(entry) == raw else None
    except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
        return None


def _append(path: Path, entry: dict[str, Any]) -> None:
    # Under the lock, so a failed append is undone safely; a symlink here is not assay's.
    append_bytes(path, canonical_json(entry) + b"\n", fsync=True, follow_symlinks=False)


def append_lineage(root: Path, attestation_id: str, task: str, run_id: str) -> None:
    path = attest_dir(root) / "lineage.jsonl"
    with _locked(path):
        chain = read_chain(path)
        entry: dict[str, Any] = {
            "index": len(chain),
            "id": attestation_id,
            "task": task,
            "run_id": run_id,
            "prev": chain[-1]["hash"] if chain else GENESIS,
        }
        entry["hash"] = hashlib.sha256(canonical_json(entry)).hexdigest()
        _append(path, entry)


def append_audit(root: Path, key: bytes, attestation_id: str, verdict: str) -> None:
    path = attest_dir(root) / "audit.jsonl"
    with _locked(path):
        chain = read_chain(path)
        entry: dict[str, Any] = {
            "index": len(chain),
            "id": attestation_id,
            "verdict": verdict,
            "prev": chain[-1]["mac"] if chain else GENESIS,
        }
        entry["mac"] = hmac.new(key, canonical_json(entry), hashlib.sha256).hexdigest()
        _append(path, entry)


def check_lineage(root: Path, attestation_id: str) -> str | None:
    """None when the lineage chain is whole and holds the id, else why not."""
    try:
        chain = read_chain(attest_dir(root) / "lineage.jsonl")
    except AssayError:
        return "the lineage file is unreadable or not canonical"
    prev = GENESIS
    found = False
    for i, entry in enumerate(chain):
        body = {k: v for k, v in entry.items() if k != "hash"}
        if (
            entry.get("index") != i
            or entry.get("prev") != prev
            or entry.get("hash") != hashlib.sha256(canonical_json(body)).hexdigest()
        ):
            return f"the lineage chain is broken at entry {i}"
        prev = entry["hash"]
        found = found or entry.get("id") == attestation_id
    return None if found else "the attestation is not in the lineage"


def check_audit(root: Path, key: bytes, attestation_id: str, verdict: str) -> str | None:
    """None when the audit chain is whole (HMACs check) and records this id and verdict."""
    try:
        chain = read_chain(attest_dir(root) / "audit.jsonl")
    except AssayError:
        return "the audit log is unreadable or not canonical"
    prev = GENESIS
    found = False
    for i, entry in enumerate(chain):
        body = {k: v for k, v in entry.items() if k != "mac"}
        mac = hmac.new(key, canonical_json(body), hashlib.sha256).hexdigest()
        if (
            entry.get("index") != i
            or entry.get("prev") != prev
            or not hmac.compare_digest(str(entry.get("mac")), mac)
        ):
            return f"the audit chain is broken at entry {i}"
        prev = entry["mac"]
        found = found or (entry.get("id") == attestation_id and entry.get("verdict") == verdict)
    return None if found else "the attestation is not in the audit log"
