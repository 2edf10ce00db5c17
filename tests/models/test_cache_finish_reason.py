"""The cache keeps a completion's finish reason and latency; a cache from before them gains the
columns."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from assay.models import OutputCache
from assay.models.providers import Completion

OLD_SCHEMA = """
CREATE TABLE outputs (
    key TEXT PRIMARY KEY, text TEXT NOT NULL, input_tokens INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL, created REAL NOT NULL
)
"""


def test_the_finish_reason_round_trips(tmp_path: Path) -> None:
    with OutputCache(tmp_path / "c.sqlite") as cache:
        cache.put("k", Completion("Paris", 3, 1, "length"))
        assert cache.get("k") == Completion("Paris", 3, 1, "length")


def test_an_old_cache_gains_the_column_and_keeps_its_entries(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    db = sqlite3.connect(path)
    db.execute(OLD_SCHEMA)
    db.execute("INSERT INTO outputs VALUES ('old', 'Lyon', 2, 1, 0)")
    db.commit()
    db.close()
    with OutputCache(path) as cache:
        assert cache.get("old") == Completion("Lyon", 2, 1, None)
        assert cache.lookup("old") == (Completion("Lyon", 2, 1, None), None)
        cache.put("new", Completion("Nice", 1, 1, "stop"), 40.0)
        assert cache.get("new") is not None and cache.get("new").finish_reason == "stop"  # type: ignore[union-attr]
        assert cache.lookup("new") == (Completion("Nice", 1, 1, "stop"), 40.0)
