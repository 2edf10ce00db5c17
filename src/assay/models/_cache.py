"""The on-disk cache of model outputs: SQLite in WAL mode, safe under concurrent processes.

Keyed by the SHA-256 of the canonical JSON of (provider identity, rendered prompt, repeat index,
purpose), so a changed model, setting, prompt or repeat is a different entry. Only successful
completions are stored; errors never are. ``assay cache clear`` empties it.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from assay.errors import AssayError
from assay.models.providers import Completion, ProviderConfig

_SCHEMA = """
CREATE TABLE IF NOT EXISTS outputs (
    key TEXT PRIMARY KEY,
    text TEXT NOT NULL,
    input_tokens INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    created REAL NOT NULL
)
"""


def cache_key(config: ProviderConfig, prompt: str, repeat: int, purpose: str = "output") -> str:
    material = {
        "provider": config.cache_identity(),
        "prompt": prompt,
        "repeat": repeat,
        "purpose": purpose,
    }
    text = json.dumps(material, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def default_cache_path(root: Path) -> Path:
    return root / ".assay" / "cache" / "outputs.sqlite"


@contextmanager
def _cache_errors(path: Path) -> Iterator[None]:
    """OSError and sqlite errors as one AssayError line naming the cache file."""
    try:
        yield
    except FileExistsError:  # from mkdir: a file sits where a folder of the path should be
        raise AssayError("cannot use the cache: Not a directory", source=str(path)) from None
    except OSError as exc:
        raise AssayError(f"cannot use the cache: {exc.strerror or exc}", source=str(path)) from None
    except sqlite3.DatabaseError as exc:  # "unable to open", "not a database", "disk is full"
        raise AssayError(
            f"cache error: {exc} (deleting the file resets the cache)", source=str(path)
        ) from None


def _open(path: Path) -> sqlite3.Connection:
    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path, timeout=30.0, isolation_level=None)
    try:
        _prepare(db)
    except BaseException:
        db.close()
        raise
    return db


def _prepare(db: sqlite3.Connection) -> None:
    db.execute("PRAGMA busy_timeout=30000")
    # Switching a new file to WAL needs an exclusive lock and does not wait on the busy
    # handler: another process creating the same cache at the same moment makes it fail at
    # once. Retry for a while, as any other write would wait.
    for attempt in range(200):
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute(_SCHEMA)
            break
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or attempt == 199:
                raise
            time.sleep(0.05)
    db.execute("PRAGMA synchronous=NORMAL")


class OutputCache:
    """A small key → completion store.

    Raises:
        AssayError: the cache file cannot be opened, read or written (naming the file).
    """

    def __init__(self, path: Path):
        self.path = path
        with _cache_errors(path):
            self._db = _open(path)

    def get(self, key: str) -> Completion | None:
        with _cache_errors(self.path):
            row = self._db.execute(
                "SELECT text, input_tokens, output_tokens FROM outputs WHERE key = ?", (key,)
            ).fetchone()
        return None if row is None else Completion(row[0], int(row[1]), int(row[2]))

    def put(self, key: str, completion: Completion) -> None:
        row = (key, completion.text, completion.input_tokens, completion.output_tokens, time.time())
        with _cache_errors(self.path):
            self._db.execute("INSERT OR REPLACE INTO outputs VALUES (?, ?, ?, ?, ?)", row)

    def count(self) -> int:
        with _cache_errors(self.path):
            return int(self._db.execute("SELECT COUNT(*) FROM outputs").fetchone()[0])

    def clear(self) -> int:
        removed = self.count()
        with _cache_errors(self.path):
            self._db.execute("DELETE FROM outputs")
            self._db.execute("VACUUM")
        return removed

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> OutputCache:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
