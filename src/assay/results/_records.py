"""The record family: the JSON documents assay writes and later reads back itself (a run's
``--json`` document, a shard part, the baseline, a saved run), one :class:`RecordType` each, with
the family's one schema version, one serialiser and one reader.

Reading one checks the same things in the same order for every member, so each says the same
kind of line: not a JSON object; a version an older assay wrote (refused with the fix the
member gives); any other version (unknown, naming ``schema_version``); then the member's own
declared fields (:mod:`assay.validate`), naming the first bad one. Attestation records are not
in the family: they are sealed, with a version and a verifier of their own.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from assay import validate as v
from assay.errors import AssayError
from assay.io import atomic_write_text, dump_json, read_json

SCHEMA_VERSION: Final = 2


class RecordType:
    """One member of the family (a plain class, not a dataclass: defining one costs a
    millisecond of every run's start-up, and the members are three constants).

    Attributes:
        name: what a message calls a record of it (``baseline``, ``run record``).
        error: the error its problems raise.
        fields: its declared fields, checked once its version is known (None: all that
            remains to check is the reader's).
        retired: each version an older assay wrote -> what to do about a record of it.
        compact: written on one line (a saved run), or indented for review (a committed
            baseline).
    """

    __slots__ = ("compact", "error", "fields", "name", "retired")

    def __init__(
        self,
        name: str,
        error: type[AssayError],
        *,
        fields: v.Spec | None = None,
        retired: Mapping[int, str] | None = None,
        compact: bool = False,
    ) -> None:
        self.name, self.error, self.fields = name, error, fields
        self.retired: Mapping[int, str] = retired or {}
        self.compact = compact

    def dump(self, record: Mapping[str, Any]) -> str:
        return dump_json(record, compact=self.compact)

    def write(self, path: Path, record: Mapping[str, Any]) -> None:
        """Write the record atomically (the old file is kept when it cannot be written)."""
        atomic_write_text(path, self.dump(record), self.error)

    def read(self, path: Path, *, missing: str = "file not found") -> dict[str, Any]:
        """The record in ``path``, checked (:meth:`check`)."""
        return self.check(read_json(path, self.error, missing=missing), str(path))

    def retired_version(self, record: Any) -> int | None:
        """The version of a record an older assay wrote, else None."""
        version = record.get("schema_version") if isinstance(record, dict) else None
        return version if type(version) is int and version in self.retired else None

    def check(self, record: Any, source: str) -> dict[str, Any]:
        """``record`` itself, once it is one of this member's, of today's version.

        Raises:
            error: not a JSON object, a retired or unknown version, or a bad field.
        """
        if not isinstance(record, dict):
            raise self.error(f"not a {self.name}: it must be a JSON object", source=source)
        old = self.retired_version(record)
        if old is not None:
            raise self.error(self.retired[old], source=source, field="schema_version")
        version = record.get("schema_version")
        if type(version) is not int or version != SCHEMA_VERSION:
            raise self.error(
                f"unknown {self.name} schema version {version!r} "
                f"(this assay reads {SCHEMA_VERSION})",
                source=source,
                field="schema_version",
            )
        if self.fields is not None:
            self.fields.check(record, v.At(source, "", self.error))
        return record
