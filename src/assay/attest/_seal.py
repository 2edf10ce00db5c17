"""Seal: commit to a task's ground truth, scan the journal, sign and store the verdict."""

from __future__ import annotations

import hashlib
import hmac
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from assay.attest._canonical import canonical_json
from assay.attest._journal import GENESIS, JournalError, iter_events
from assay.attest._key import key_id
from assay.attest._ledger import store
from assay.attest._scan import (
    Truth,
    build_truth,
    endpoint_flags,
    event_texts,
    evidence_where,
    match_plain,
    matches_of,
    path_flags,
)
from assay.attest._truth import ground_truth
from assay.errors import AssayError, GoldenError
from assay.goldens import Golden
from assay.validate import At, List, Str, Table

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


ISOLATION_KINDS: Final = ("bubblewrap", "docker", "none")
_KIND = f"{{value}} is not one of {', '.join(ISOLATION_KINDS)}"
_PATHS = "not a list of path strings"
_ISOLATION: Final = Table(
    {
        "kind": Str(choices=ISOLATION_KINDS, message=_KIND, required=_KIND.format(value=None)),
        "not_mounted": List(Str(message=_PATHS), message=_PATHS),
    },
    unknown="unknown key {key} (kind, not_mounted)",
    names_table=True,
)


def isolation_field(isolation: Mapping[str, Any]) -> dict[str, Any]:
    """The record's ``isolation``: what fenced the agent off, as the runner states it, signed
    with the verdict, so a reader knows what a CLEAN was earned under (``none``: nothing but
    the journal). ``not_mounted`` are the paths kept out of the agent's view, sorted. An
    unknown key, a kind not in ``ISOLATION_KINDS`` or a path not a string is an AssayError."""
    checked = _ISOLATION.check(isolation, At(None, "", AssayError), "isolation")
    return {"kind": checked["kind"], "not_mounted": sorted(set(checked.get("not_mounted", ())))}


def _scan_journal(
    journal: Path, truth: Truth, commitment: dict[str, Any], scope: dict[str, Any]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Per event its activity entry (digests matched, boundary flags), and the evidence of the
    matches (where each was seen: no text). A broken journal raises JournalError, an unreadable
    one OSError."""
    activity: list[dict[str, Any]] = []
    evidence: list[dict[str, Any]] = []

    def holds_truth(text: str) -> bool:
        return bool(match_plain(truth, text))

    for event in iter_events(journal):
        digests = {d for text in event_texts(event) for d in match_plain(truth, text)}
        flags = path_flags(event, scope) + endpoint_flags(event, scope)
        entry = {
            "index": event["index"],
            "kind": event["kind"],
            "hash": event["hash"],
            "digests": sorted(digests),
            "flags": sorted(set(flags)),
        }
        activity.append(entry)
        evidence.extend(
            {
                **match,
                "where": evidence_where(event, match["class"], scope["worktree"], holds_truth),
            }
            for match in matches_of([entry], commitment)
        )
    return activity, evidence


def build_record(
    task: Golden,
    goldens_root: Path,
    journal: Path,
    worktree: Path,
    allow: Sequence[str],
    run_id: str,
    key: bytes,
    *,
    allow_paths: Sequence[str] = (),
    allow_listing: Sequence[str] = (),
    given: Sequence[str] = (),
    isolation: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The signed attestation record (nothing is written).

    ``allow_paths`` are folders (or files) outside the worktree the agent may read (the system,
    its toolchain); ``allow_listing`` folders it may open themselves, nothing under them (the
    folders on the way to what its sandbox mounts: there they hold only those mount points);
    ``given`` are the texts it was handed (its instruction, the fixture), whose
    shingles are not committed; ``isolation`` is how the agent was fenced off (see
    :func:`isolation_field`; None: not stated, the record has no ``isolation``).

    Raises:
        GoldenError: an unreadable reference file. AssayError: a broken journal, a malformed
            ``isolation``.
    """
    fence = isolation_field(isolation) if isolation is not None else None
    truth = build_truth(key, ground_truth(task), given)
    commitment = truth.commitment()
    allowed = sorted({os.path.realpath(a) for a in allow_paths})
    listed = sorted({os.path.realpath(a) for a in allow_listing})
    scope: dict[str, Any] = {
        "worktree": os.path.realpath(worktree),
        "goldens": os.path.realpath(goldens_root),
        "allow_endpoints": sorted({a.strip().lower() for a in allow}),
        **({"allow_paths": allowed} if allowed else {}),
        **({"allow_listing": listed} if listed else {}),
    }
    try:
        activity, evidence = _scan_journal(journal, truth, commitment, scope)
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
        "scope": scope,
        **({"isolation": fence} if fence is not None else {}),
        "journal": {"head": activity[-1]["hash"] if activity else GENESIS, "events": len(activity)},
        "activity": activity,
        "matches": matches,
        "evidence": evidence,
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
    isolation: Mapping[str, Any] | None = None,
) -> Sealed:
    """Build, store and chain an attestation in ``folder``, the store (default: the project's
    ``assay-attestations/`` under ``root``), stating ``isolation`` (see :func:`build_record`).

    Raises:
        AssayError: unknown task, unreadable reference file, broken journal, bad worktree, a
            malformed ``isolation``, a damaged lineage or audit log (naming its line), a failed
            write (nothing is kept).
    """
    task = next((t for t in tasks if t.id == task_id), None)
    if task is None:
        raise GoldenError(f"no golden task {task_id!r}", source=str(goldens_root), field="--task")
    if not worktree.is_dir():
        raise AssayError("the worktree is not a folder", source=str(worktree), field="--worktree")
    run = run_id or datetime.now(UTC).strftime("run_%Y%m%dT%H%M%S_%fZ")
    record = build_record(
        task,
        goldens_root,
        journal,
        worktree,
        allow,
        run,
        key,
        allow_paths=allow_paths,
        given=given,
        isolation=isolation,
    )
    # The record and its lineage and audit entries land together or not at all.
    attestation_id = store(
        root, canonical_json(record), task.id, run, key, record["verdict"], folder=folder
    )
    return Sealed(attestation_id, record["verdict"], record["matches"], record["journal"]["events"])
