"""Seal each task's journal with the user's key: in one go where the task ran, or in two steps
(build the signed record where the journal is, store it where the project is) when a task runs
on another machine (``--executor ray``)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.errors import AssayError
from assay.goldens import Golden


@dataclass(frozen=True, slots=True)
class SealedRecord:
    """A signed attestation record, not stored yet: its id is the SHA-256 of ``data``."""

    id: str
    task_id: str
    verdict: str
    data: bytes


@dataclass(frozen=True, slots=True)
class Attester:
    """What seals a task's journal as it runs: ``attester.store(attester.build(task, journal,
    worktree, allow_paths, given, isolation=...))`` seals and stores, returning the attestation
    id; ``isolation`` (how the agent was fenced off, see ``assay.attest._seal.isolation_field``)
    is signed into the record. On a Ray worker (with ``held``) :meth:`store` holds the record
    for the driver to store: the project is where the driver is.

    Attributes:
        root: the project root.
        run_id: the run every seal of this run names.
        endpoints: ``host:port`` endpoints the agent may connect to.
        goldens_root: the goldens folder a task was loaded from.
        key: the user's attestation key (never printed).
        folder: the attestation store (the configured ``attestations`` folder; None: the
            default under ``root``).
        held: on a Ray worker, the records built and not stored (None: store each at once).
    """

    root: Path
    run_id: str
    endpoints: tuple[str, ...]
    goldens_root: Callable[[Golden], Path]
    key: bytes = field(repr=False)
    folder: Path | None = None
    held: list[SealedRecord] | None = field(default=None, repr=False, compare=False)

    def build(
        self,
        task: Golden,
        journal: Path,
        worktree: Path,
        allow_paths: Sequence[str],
        given: Sequence[str],
        *,
        isolation: Mapping[str, Any] | None = None,
        listing: Sequence[str] = (),
    ) -> SealedRecord:
        """The signed record of ``journal``, not stored yet: built where the journal and the
        worktree are, stored by :meth:`store` where the project is. ``listing``: folders the
        agent may open themselves, not what is under them (``allow_listing``).

        Raises:
            AssayError: an unreadable reference file, a broken journal, no worktree, a
                malformed ``isolation``.
        """
        from assay.attest import build_record, canonical_json

        if not worktree.is_dir():
            raise AssayError("the worktree is not a folder", source=str(worktree))
        record = build_record(
            task,
            self.goldens_root(task),
            journal,
            worktree,
            list(self.endpoints),
            self.run_id,
            self.key,
            allow_paths=list(allow_paths),
            allow_listing=list(listing),
            given=list(given),
            isolation=isolation,
        )
        data = canonical_json(record)
        digest = "sha256:" + hashlib.sha256(data).hexdigest()
        return SealedRecord(digest, task.id, str(record["verdict"]), data)

    def store(self, sealed: SealedRecord) -> str:
        """Store a record :meth:`build` made and chain it into the lineage and the audit log
        (on a Ray worker, hold it for the driver to store); its id.

        Raises:
            AssayError: a damaged chain, an existing record, a write error; a record whose
                bytes are not the ones its id names.
        """
        if self.held is not None:
            self.held.append(sealed)
            return sealed.id
        from assay.attest import store

        stored = store(
            self.root,
            sealed.data,
            sealed.task_id,
            self.run_id,
            self.key,
            sealed.verdict,
            folder=self.folder,
        )
        if stored != sealed.id:  # the id the telemetry names must be the record stored
            raise AssayError(f"task {sealed.task_id}: the attestation changed on its way back")
        return stored
