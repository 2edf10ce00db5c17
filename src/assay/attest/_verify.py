"""Verify an attestation offline, with the key: every check, in order, the first failure named.

1. ``record``: the file exists and its SHA-256 is the id (any changed byte fails here).
2. ``key``: the record's key id is the verifier's (else: signed with a different key).
3. ``signature``: the record's HMAC checks.
4. ``coverage``: the coverage counts match the committed digests.
5. ``rescan``: every embedded digest is committed, the matches re-derived from the activity equal
   the recorded ones, and so does the verdict.
6. ``journal`` (with ``--journal``): the journal chains from genesis to the recorded head, and
   the activity re-extracted from it equals the embedded activity.
7. ``lineage`` and ``audit``: both chains are whole and hold this attestation.

The id may be given with or without its ``sha256:`` prefix. The record is looked up in the store
folder; a record found only in the old store (``.assay/attestations/``) is verified there, with
that folder's lineage and audit log, so attestations sealed before the store moved still verify.
"""

from __future__ import annotations

import hashlib
import hmac
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay.attest._canonical import parse_canonical
from assay.attest._journal import JournalError, iter_events
from assay.attest._key import key_id
from assay.attest._ledger import (
    LEGACY_STORE,
    attest_dir,
    check_audit,
    check_lineage,
    parse_id,
    record_path,
)
from assay.attest._scan import endpoint_flags, event_texts, match_digests, matches_of, path_flags
from assay.attest._seal import sign


@dataclass(frozen=True, slots=True)
class Verification:
    ok: bool
    reason: str | None
    id: str
    verdict: str | None
    task: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "reason": self.reason, "id": self.id, "verdict": self.verdict}


def _fail(attestation_id: str, reason: str, record: dict[str, Any] | None = None) -> Verification:
    verdict = record.get("verdict") if record else None
    task = record.get("task", {}).get("id") if record else None
    return Verification(False, reason, attestation_id, verdict, task)


_PATH_CLASSES = frozenset({"out_of_scope_path", "ground_truth_path"})


def _flags_consistent(
    recorded: set[str], resolved: set[str] | None, endpoint: set[str], has_path: bool
) -> bool:
    """Recorded boundary flags against the re-derived ones.

    The endpoint flag must match exactly. Path flags are re-derived exactly as at seal time
    (symlinks followed) when the worktree still exists (``resolved``); without it they cannot be
    re-derived offline (a symlink alias may lead out of or back into the worktree), so they are
    taken from the signed record, as long as only path events carry them.
    """
    path_recorded = recorded & _PATH_CLASSES
    if recorded - _PATH_CLASSES != endpoint or (path_recorded and not has_path):
        return False
    return resolved is None or path_recorded == resolved


def _reextract(record: dict[str, Any], key: bytes, journal: Path) -> str | None:
    commitment, scope = record["commitment"], record["scope"]
    embedded = record["activity"]
    resolvable = os.path.isdir(scope["worktree"])
    head, count = "0" * 64, 0
    try:
        for event in iter_events(journal):
            if count >= len(embedded):
                return "journal: it holds more events than the attestation"
            entry = embedded[count]
            digests: set[str] = set()
            for text in event_texts(event):
                digests |= match_digests(key, commitment, text)
            resolved: set[str] | None = set() if resolvable else None
            if resolvable and isinstance(event.get("path"), str):
                resolved = set(
                    path_flags(
                        event["path"],
                        scope["worktree"],
                        scope["goldens"],
                        follow=True,
                        allow=scope.get("allow_paths", []),
                    )
                )
            endpoint = (
                endpoint_flags(event["endpoint"], scope["allow_endpoints"])
                if isinstance(event.get("endpoint"), str)
                else []
            )
            if (
                entry.get("hash") != event["hash"]
                or entry.get("kind") != event["kind"]
                or sorted(digests) != entry.get("digests")
                or not _flags_consistent(
                    set(entry.get("flags", [])),
                    resolved,
                    set(endpoint),
                    isinstance(event.get("path"), str),
                )
            ):
                return f"journal: event {event['index']} does not match the embedded activity"
            head, count = event["hash"], count + 1
    except JournalError as exc:
        return f"journal: {exc}"
    except OSError as exc:
        return f"journal: cannot read it ({exc.strerror})"
    if count != record["journal"]["events"] or count != len(embedded):
        return "journal: it has fewer events than the attestation (trimmed?)"
    if head != record["journal"]["head"]:
        return "journal: its head hash differs from the recorded head"
    return None


def _store_of(root: Path, attestation_id: str, folder: Path | None) -> Path:
    """The store holding the record: the configured one, else the legacy one when only it has
    the record (a record in neither is reported from the configured store)."""
    store = attest_dir(root, folder)
    legacy = root / LEGACY_STORE
    if (
        legacy != store
        and not os.path.lexists(record_path(root, attestation_id, store))
        and os.path.lexists(record_path(root, attestation_id, legacy))
    ):
        return legacy
    return store


def verify(
    root: Path,
    attestation_id: str,
    key: bytes,
    journal: Path | None = None,
    *,
    folder: Path | None = None,
) -> Verification:
    """Run every check against the record in ``folder``, the store (default: the project's
    ``assay-attestations/`` under ``root``); never raises for a bad attestation (it is
    reported)."""
    canonical = parse_id(attestation_id)
    if canonical is None:
        return _fail(attestation_id, "record: malformed attestation id")
    # A bare digest names the same record: checked (and reported) under its full id, so the
    # hash comparison below never mistakes the missing prefix for a changed byte.
    attestation_id = canonical
    folder = _store_of(root, attestation_id, folder)
    path = record_path(root, attestation_id, folder)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        with os.fdopen(fd, "rb") as handle:
            data = handle.read()
    except OSError:
        return _fail(attestation_id, "record: no such attestation")
    if "sha256:" + hashlib.sha256(data).hexdigest() != attestation_id:
        return _fail(attestation_id, "record: its bytes do not hash to its id (modified)")
    record = parse_canonical(data)
    if record is None:
        return _fail(attestation_id, "record: not canonical JSON")
    if record.get("key_id") != key_id(key):
        return _fail(attestation_id, "key: signed with a different key", record)
    if not hmac.compare_digest(str(record.get("signature")), sign(key, record)):
        return _fail(attestation_id, "signature: the record's HMAC does not check", record)
    try:
        commitment = record["commitment"]
        coverage = commitment["coverage"]
        if (
            coverage["shingles"] != len(commitment["shingles"])
            or coverage["short_texts"] != len(commitment["short"])
            or coverage["sources"] < 0
        ):
            return _fail(attestation_id, "coverage: counts do not match the commitment", record)
        committed = set(commitment["shingles"]) | set(commitment["short"])
        for entry in record["activity"]:
            if not set(entry.get("digests", [])) <= committed:
                return _fail(attestation_id, "rescan: an embedded digest is not committed", record)
        derived = matches_of(record["activity"], commitment)
        if derived != record["matches"]:
            return _fail(attestation_id, "rescan: the matches differ from the activity", record)
        if ("DIRTY" if derived else "CLEAN") != record["verdict"]:
            return _fail(attestation_id, "rescan: the verdict differs from the matches", record)
        if journal is not None:
            problem = _reextract(record, key, journal)
            if problem is not None:
                return _fail(attestation_id, problem, record)
    except (KeyError, TypeError, AttributeError):
        return _fail(attestation_id, "record: a required field is missing or malformed", record)
    problem = check_lineage(root, attestation_id, folder)
    if problem is not None:
        return _fail(attestation_id, f"lineage: {problem}", record)
    problem = check_audit(root, key, attestation_id, record["verdict"], folder)
    if problem is not None:
        return _fail(attestation_id, f"audit: {problem}", record)
    return Verification(True, None, attestation_id, record["verdict"], record["task"]["id"])
