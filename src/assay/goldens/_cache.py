"""A cache of parsed markdown frontmatter, keyed by a digest of each file's bytes.

YAML parsing dominates loading a large markdown suite (PyYAML's C loader spends ~50 µs per small
frontmatter); reading and hashing a file costs a few µs. Only frontmatter that survives a JSON
round trip unchanged is cached (dates, non-string keys and the like are re-parsed every time), so
a cache hit yields exactly what the YAML parser would. The file is rewritten atomically, holding
only the entries the last run used.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from pathlib import Path
from typing import Any

import yaml

from ..store import atomic_write_text

# Bump when parsing semantics change; the PyYAML version is part of the key as well.
_FORMAT = f"assay-frontmatter-v1/pyyaml-{yaml.__version__}"


def digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


class FrontmatterCache:
    """Parsed frontmatter by content digest, loaded from and saved to one JSON file."""

    def __init__(self, path: Path):
        self.path = path
        self._old: dict[str, Any] = {}
        self._used: dict[str, Any] = {}
        self._dirty = False
        try:
            document = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return  # no cache yet, or a damaged one: start afresh
        if isinstance(document, dict) and document.get("format") == _FORMAT:
            entries = document.get("entries")
            if isinstance(entries, dict):
                self._old = entries

    def get(self, key: str) -> tuple[Any, bool] | None:
        entry = self._old.get(key)
        if entry is None:
            entry = self._used.get(key)
            if entry is None:
                return None
        self._used[key] = entry
        return entry[0], bool(entry[1])

    def put(self, key: str, front: Any, has_origin: bool) -> None:
        try:
            if json.loads(json.dumps(front, allow_nan=False)) != front:
                return
        except (TypeError, ValueError):
            return
        self._used[key] = [front, has_origin]
        self._dirty = True

    def save(self) -> None:
        """Write the entries this run used, if anything changed."""
        if not self._dirty and len(self._used) == len(self._old):
            return
        document = {"format": _FORMAT, "entries": self._used}
        # A cache that cannot be written is only slower, never wrong.
        with contextlib.suppress(OSError):
            atomic_write_text(self.path, json.dumps(document, ensure_ascii=False))
