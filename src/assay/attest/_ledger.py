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
from typing import Any, Final

from assay.attest._canonical import canonical_json
from assay.errors import AssayError

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
    path.parent.mkdir(parents=True, exist_ok=True)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
    try:
        fd = os.open(path, flags, 0o644)
    except FileExistsError:
        raise AssayError("this attestation already exists", source=str(path)) from None
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    return attestation_id


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_suffix(".lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def read_chain(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    lines = []
    for raw in path.read_bytes().splitlines():
        entry = json.loads(raw.decode("utf-8"))
        if not isinstance(entry, dict) or canonical_json(entry) != raw:
            raise ValueError("not canonical JSON")
        lines.append(entry)
    return lines


def _append(path: Path, entry: dict[str, Any]) -> None:
    with open(path, "ab") as handle:
        handle.write(canonical_json(entry) + b"\n")
        handle.flush()
        os.fsync(handle.fileno())


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
    except (OSError, ValueError, UnicodeDecodeError):
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
    except (OSError, ValueError, UnicodeDecodeError):
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
