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
from pathlib import Path
from typing import Any

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


class OutputCache:
    """A small key → completion store."""

    def __init__(self, path: Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._db = sqlite3.connect(path, timeout=30.0, isolation_level=None)
        self._db.execute("PRAGMA busy_timeout=30000")
        # Switching a new file to WAL needs an exclusive lock and does not wait on the busy
        # handler: another process creating the same cache at the same moment makes it fail at
        # once. Retry for a while, as any other write would wait.
        for attempt in range(200):
            try:
                self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute(_SCHEMA)
                break
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or attempt == 199:
                    raise
                time.sleep(0.05)
        self._db.execute("PRAGMA synchronous=NORMAL")

    def get(self, key: str) -> Completion | None:
        row = self._db.execute(
            "SELECT text, input_tokens, output_tokens FROM outputs WHERE key = ?", (key,)
        ).fetchone()
        return None if row is None else Completion(row[0], int(row[1]), int(row[2]))

    def put(self, key: str, completion: Completion) -> None:
        self._db.execute(
            "INSERT OR REPLACE INTO outputs VALUES (?, ?, ?, ?, ?)",
            (key, completion.text, completion.input_tokens, completion.output_tokens, time.time()),
        )

    def count(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM outputs").fetchone()[0])

    def clear(self) -> int:
        removed = self.count()
        self._db.execute("DELETE FROM outputs")
        self._db.execute("VACUUM")
        return removed

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> OutputCache:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
