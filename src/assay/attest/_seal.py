"""Seal: commit to a task's ground truth, scan the journal, sign and store the verdict."""

from __future__ import annotations

import hashlib
import hmac
import os
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from assay.attest._canonical import canonical_json
from assay.attest._journal import JournalError, iter_events
from assay.attest._key import key_id
from assay.attest._ledger import store
from assay.attest._scan import (
    DEFAULT_K,
    build_truth,
    endpoint_flags,
    event_texts,
    match_plain,
    matches_of,
    path_flags,
)
from assay.attest._truth import ground_truth
from assay.errors import AssayError, GoldenError
from assay.goldens import Golden

SCHEMA_VERSION: Final = 1


@dataclass(frozen=True, slots=True)
class Sealed:
    id: str
    verdict: str
    matches: list[dict[str, Any]]
    events: int


def sign(key: bytes, record: dict[str, Any]) -> str:
    body = {k: v for k, v in record.items() if k != "signature"}
    return hmac.new(key, canonical_json(body), hashlib.sha256).hexdigest()


def build_record(
    task: Golden,
    goldens_root: Path,
    journal: Path,
    worktree: Path,
    allow: Sequence[str],
    run_id: str,
    key: bytes,
    k: int = DEFAULT_K,
    *,
    allow_paths: Sequence[str] = (),
    given: Sequence[str] = (),
) -> dict[str, Any]:
    """The signed attestation record (nothing is written).

    ``allow_paths`` are folders (or files) outside the worktree the agent may read (the system,
    its toolchain); ``given`` are the texts it was handed (its instruction, the fixture), whose
    shingles are not committed.

    Raises:
        GoldenError: an unreadable reference file. AssayError: a broken journal.
    """
    truth = build_truth(key, ground_truth(task), k, given)
    commitment = truth.commitment()
    worktree_real = os.path.realpath(worktree)
    goldens_real = os.path.realpath(goldens_root)
    allowed = sorted({os.path.realpath(a) for a in allow_paths})
    activity: list[dict[str, Any]] = []
    head, count = "0" * 64, 0
    try:
        for event in iter_events(journal):
            digests: set[str] = set()
            for text in event_texts(event):
                digests |= match_plain(truth, text)
            flags: list[str] = []
            if isinstance(event.get("path"), str):
                flags += path_flags(
                    event["path"], worktree_real, goldens_real, follow=True, allow=allowed
                )
            if isinstance(event.get("endpoint"), str):
                flags += endpoint_flags(event["endpoint"], allow)
            activity.append(
                {
                    "index": event["index"],
                    "kind": event["kind"],
                    "hash": event["hash"],
                    "digests": sorted(digests),
                    "flags": sorted(set(flags)),
                }
            )
            head, count = event["hash"], count + 1
    except JournalError as exc:
        raise AssayError(f"the journal is broken: {exc}", source=str(journal)) from None
    except OSError as exc:
        raise AssayError(f"cannot read the journal: {exc.strerror}", source=str(journal)) from None
    matches = matches_of(activity, commitment)
    record: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "run_id": run_id,
        "sealed_at": datetime.now(UTC).isoformat(timespec="microseconds"),
        "task": {
            "id": task.id,
            "commitment": "sha256:" + hashlib.sha256(canonical_json(commitment)).hexdigest(),
        },
        "key_id": key_id(key),
        "commitment": commitment,
        "scope": {
            "worktree": worktree_real,
            "goldens": goldens_real,
            "allow_endpoints": sorted({a.strip().lower() for a in allow}),
            **({"allow_paths": allowed} if allowed else {}),
        },
        "journal": {"head": head, "events": count},
        "activity": activity,
        "matches": matches,
        "verdict": "DIRTY" if matches else "CLEAN",
    }
    record["signature"] = sign(key, record)
    return record


def seal(
    root: Path,
    tasks: Sequence[Golden],
    goldens_root: Path,
    task_id: str,
    journal: Path,
    worktree: Path,
    allow: Sequence[str],
    run_id: str | None,
    key: bytes,
    *,
    allow_paths: Sequence[str] = (),
    given: Sequence[str] = (),
    folder: Path | None = None,
) -> Sealed:
    """Build, store and chain an attestation in ``folder``, the store (default: the project's
    ``assay-attestations/`` under ``root``).

    Raises:
        AssayError: unknown task, unreadable reference file, broken journal, bad worktree, a
            damaged lineage or audit log (naming its line), a failed write (nothing is kept).
    """
    task = next((t for t in tasks if t.id == task_id), None)
    if task is None:
        raise GoldenError(f"no golden task {task_id!r}", source=str(goldens_root), field="--task")
    if not worktree.is_dir():
        raise AssayError("the worktree is not a folder", source=str(worktree), field="--worktree")
    run = run_id or datetime.now(UTC).strftime("run_%Y%m%dT%H%M%S_%fZ")
    record = build_record(
        task, goldens_root, journal, worktree, allow, run, key, allow_paths=allow_paths, given=given
    )
    # The record and its lineage and audit entries land together or not at all.
    attestation_id = store(
        root, canonical_json(record), task.id, run, key, record["verdict"], folder=folder
    )
    return Sealed(attestation_id, record["verdict"], record["matches"], record["journal"]["events"])
