"""Verify an attestation offline, with the key: every check, in order, the first failure named.

1. ``record``: the file exists and its SHA-256 is the id (any changed byte fails here).
2. ``key``: the record's key id is the verifier's (else: signed with a different key).
3. ``signature``: the record's HMAC checks.
4. ``coverage``: the coverage counts match the committed digests.
5. ``rescan``: every embedded digest is committed, the matches re-derived from the activity equal
   the recorded ones, and so do the verdict and the evidence's (event, class) pairs; the
   isolation, when stated, is well formed.
6. ``journal`` (with ``--journal``): the journal chains from genesis to the recorded head, and
   the activity and the evidence re-extracted from it equal the embedded ones.
7. ``lineage`` and ``audit``: each chain holds this attestation, whole from genesis up to its
   entry. What was appended after that entry cannot change this verdict (anyone can append to
   a file): damage there is a note of the result, not a failure.

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
from assay.attest._journal import GENESIS, JournalError, iter_events
from assay.attest._key import key_id
from assay.attest._ledger import (
    LEGACY_STORE,
    attest_dir,
    check_audit,
    check_lineage,
    parse_id,
    record_path,
)
from assay.attest._scan import (
    PATH_CLASSES,
    endpoint_flags,
    event_texts,
    evidence_where,
    match_digests,
    matches_of,
    path_flags,
)
from assay.attest._seal import isolation_field, sign
from assay.errors import AssayError


@dataclass(frozen=True, slots=True)
class Verification:
    """The result of :func:`verify`.

    ``isolation`` (the record's, None when it states none) and ``evidence`` (where each match
    was seen) are the record's, set when it verified; ``notes`` name damage found after the
    record's entries in the lineage or audit log, which does not fail it.
    """

    ok: bool
    reason: str | None
    id: str
    verdict: str | None
    task: str | None = None
    isolation: dict[str, Any] | None = None
    evidence: tuple[dict[str, Any], ...] = ()
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "reason": self.reason,
            "id": self.id,
            "verdict": self.verdict,
            "isolation": self.isolation,
            "evidence": list(self.evidence),
            "notes": list(self.notes),
        }


def _fail(
    attestation_id: str,
    reason: str,
    record: dict[str, Any] | None = None,
    notes: tuple[str, ...] = (),
) -> Verification:
    verdict = record.get("verdict") if record else None
    task = record.get("task", {}).get("id") if record else None
    return Verification(False, reason, attestation_id, verdict, task, notes=notes)


def _flags_consistent(
    recorded: set[str], resolved: set[str] | None, endpoint: set[str], has_path: bool
) -> bool:
    """Recorded boundary flags against the re-derived ones.

    The endpoint flag must match exactly. Path flags are re-derived exactly as at seal time
    (symlinks followed) when the worktree still exists (``resolved``); without it they cannot be
    re-derived offline (a symlink alias may lead out of or back into the worktree), so they are
    taken from the signed record, as long as only path events carry them.
    """
    path_recorded = recorded & PATH_CLASSES
    if recorded - PATH_CLASSES != endpoint or (path_recorded and not has_path):
        return False
    return resolved is None or path_recorded == resolved


def _event_matches(
    entry: dict[str, Any], event: dict[str, Any], record: dict[str, Any], key: bytes
) -> bool:
    """One journal event re-scanned equals its embedded activity entry."""
    commitment, scope = record["commitment"], record["scope"]
    digests = {d for text in event_texts(event) for d in match_digests(key, commitment, text)}
    has_path = isinstance(event.get("path"), str)
    resolved = set(path_flags(event, scope)) if os.path.isdir(scope["worktree"]) else None
    endpoint = endpoint_flags(event, scope)
    return (
        entry.get("hash") == event["hash"]
        and entry.get("kind") == event["kind"]
        and sorted(digests) == entry.get("digests")
        and _flags_consistent(set(entry.get("flags", [])), resolved, set(endpoint), has_path)
    )


def _where_matches(
    event: dict[str, Any], wanted: list[tuple[str, str]], record: dict[str, Any], key: bytes
) -> bool:
    """Each recorded ``where`` of this event is the one the journal gives (see
    ``evidence_where``: a path or endpoint holding ground truth is named by the kind)."""

    def holds_truth(text: str) -> bool:
        return bool(match_digests(key, record["commitment"], text))

    worktree = record["scope"]["worktree"]
    return all(where == evidence_where(event, cls, worktree, holds_truth) for cls, where in wanted)


def _reextract(record: dict[str, Any], key: bytes, journal: Path) -> str | None:
    embedded = record["activity"]
    # The recorded evidence by event (a record sealed before records held evidence has none).
    by_event: dict[int, list[tuple[str, str]]] = {}
    for entry in record.get("evidence") or []:
        by_event.setdefault(entry["event"], []).append((entry["class"], entry["where"]))
    head, count = GENESIS, 0
    try:
        for event in iter_events(journal):
            if count >= len(embedded):
                return "journal: it holds more events than the attestation"
            if not _event_matches(embedded[count], event, record, key):
                return f"journal: event {event['index']} does not match the embedded activity"
            if not _where_matches(event, by_event.get(event["index"], []), record, key):
                return f"journal: event {event['index']} does not match the evidence"
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


def _evidence_consistent(evidence: Any, matches: list[dict[str, Any]]) -> bool:
    """The evidence names the matches' (event, class) pairs, in order, each with a ``where``
    (a record sealed before records held evidence has none: nothing to check)."""
    if evidence is None:
        return True
    return (
        isinstance(evidence, list)
        and all(
            isinstance(e, dict)
            and set(e) == {"event", "class", "where"}
            and isinstance(e["where"], str)
            for e in evidence
        )
        and [{"event": e["event"], "class": e["class"]} for e in evidence] == matches
    )


def _isolation_well_formed(isolation: Any) -> bool:
    """No isolation stated, or one as :func:`isolation_field` writes it."""
    if isolation is None:
        return True
    try:
        return isinstance(isolation, dict) and isolation_field(isolation) == isolation
    except AssayError:
        return False


def _rescan(record: dict[str, Any]) -> str | None:
    """The first inconsistency of the record with itself: coverage, digests, matches, verdict,
    evidence, isolation (None: consistent); a required field missing or malformed raises
    KeyError, TypeError or AttributeError."""
    commitment = record["commitment"]
    coverage = commitment["coverage"]
    if (
        coverage["shingles"] != len(commitment["shingles"])
        or coverage["short_texts"] != len(commitment["short"])
        or coverage["sources"] < 0
    ):
        return "coverage: counts do not match the commitment"
    committed = set(commitment["shingles"]) | set(commitment["short"])
    for entry in record["activity"]:
        if not set(entry.get("digests", [])) <= committed:
            return "rescan: an embedded digest is not committed"
    derived = matches_of(record["activity"], commitment)
    if derived != record["matches"]:
        return "rescan: the matches differ from the activity"
    if ("DIRTY" if derived else "CLEAN") != record["verdict"]:
        return "rescan: the verdict differs from the matches"
    if not _evidence_consistent(record.get("evidence"), derived):
        return "rescan: the evidence differs from the matches"
    if not _isolation_well_formed(record.get("isolation")):
        return "record: the isolation is malformed"
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


def _read_record(path: Path) -> bytes | None:
    """The record's bytes (a symlink is not followed), None when there is none."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        with os.fdopen(fd, "rb") as handle:
            return handle.read()
    except OSError:
        return None


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
    data = _read_record(record_path(root, attestation_id, folder))
    if data is None:
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
        problem = _rescan(record)
        if problem is None and journal is not None:
            problem = _reextract(record, key, journal)
    except (KeyError, TypeError, AttributeError):
        problem = "record: a required field is missing or malformed"
    if problem is not None:
        return _fail(attestation_id, problem, record)
    return _check_chains(root, attestation_id, key, record, folder)


def _check_chains(
    root: Path, attestation_id: str, key: bytes, record: dict[str, Any], folder: Path
) -> Verification:
    """The lineage, then the audit log: the first failure, or the verified record with the
    notes of damage found after its entries."""
    notes: tuple[str, ...] = ()
    lineage = check_lineage(root, attestation_id, folder)
    audit = check_audit(root, key, attestation_id, record["verdict"], folder)
    for name, (problem, note) in (("lineage", lineage), ("audit", audit)):
        notes += (f"{name}: {note}",) if note is not None else ()
        if problem is not None:
            return _fail(attestation_id, f"{name}: {problem}", record, notes)
    return Verification(
        True,
        None,
        attestation_id,
        record["verdict"],
        record["task"]["id"],
        record.get("isolation"),
        tuple(record.get("evidence", [])),
        notes,
    )
