"""The on-disk cache of model outputs: SQLite in WAL mode, safe under concurrent processes.

Keyed by the SHA-256 of the canonical JSON of (provider identity, rendered prompt, repeat index,
purpose), so a changed model, setting, prompt or repeat is a different entry. Only successful
completions are stored; errors never are. ``assay cache clear`` empties it.

An entry keeps what the call measured besides its answer: the token counts, why the model
stopped, and how long the call took (``latency_ms``), so that a ``latency`` assert gives a
cached answer the verdict it gave when the answer was made. Entries written before latencies
were kept have none (NULL).

A damaged cache (not a database, a malformed page, a folder in its place) stops the run with one
line saying ``assay cache clear`` resets it. It is not reset behind the user's back: another
process may be using it, and SQLite's verdict is better read by a person than acted on alone.
``assay cache clear`` then deletes the files (:func:`remove_cache_files`) instead of emptying the
table, which a damaged file cannot do.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final

from assay.errors import AssayError
from assay.models.providers import Completion, ProviderConfig

_SCHEMA = """
CREATE TABLE IF NOT EXISTS outputs (
    key TEXT PRIMARY KEY,
    text TEXT NOT NULL,
    input_tokens INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    created REAL NOT NULL,
    finish_reason TEXT,
    latency_ms REAL
)
"""


def provider_identity(config: ProviderConfig, root: Path | None = None) -> dict[str, Any]:
    """The provider's part of a cache key: :meth:`ProviderConfig.cache_identity`, and for a
    python provider the sha256 of its function's module file (:func:`source_digest`, found with
    the project root ``root``) and, when it loaded other modules of the project, their paths
    and sha256 (``project_modules``, :func:`project_module_digests`: the module is imported to
    find them), so an edited function or helper is a cache miss; a module that cannot be
    found or imported is a ValueError naming the ``function`` setting. An http provider's
    ``transform_response`` file is hashed the same way. A provider that loads
    no other module of the project, and every other type, keeps the identity it had (their
    existing entries still hit)."""
    identity = config.cache_identity()
    if config.type == "python":
        # Imported here: only a run with a python provider pays for it.
        from assay.models.providers.python import project_module_digests, source_digest

        function = config.function or ""
        identity["source_sha256"] = source_digest(function, root)
        helpers = project_module_digests(function, root)
        if helpers:
            identity["project_modules"] = helpers
    if config.type == "http" and config.transform_response:
        # The code that reads the app's answer decides the output as much as the app does.
        from assay.models.providers.http import transform_digest

        identity["transform_sha256"] = transform_digest(config, root)
    return identity


def cache_key(
    config: ProviderConfig,
    prompt: str,
    repeat: int,
    purpose: str = "output",
    *,
    identity: Mapping[str, Any] | None = None,
) -> str:
    """The key of one call's entry. ``identity`` is ``provider_identity(config, root)`` when
    the caller has it already (a run computes it once per provider, not once per call); by
    default it is computed here, with the working directory as the project root."""
    material = {
        "provider": dict(identity) if identity is not None else provider_identity(config),
        "prompt": prompt,
        "repeat": repeat,
        "purpose": purpose,
    }
    text = json.dumps(material, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def default_cache_path(root: Path) -> Path:
    return root / ".assay" / "cache" / "outputs.sqlite"


# SQLite's own files beside the database: the write-ahead log, its index, a rollback journal.
_SIDE_FILES: Final = ("-wal", "-shm", "-journal")
# What SQLite says of a file that is not a database or is damaged.
_DAMAGED: Final = frozenset({"SQLITE_CORRUPT", "SQLITE_NOTADB"})
_RESET: Final = "`assay cache clear` resets it (or run with --no-cache)"


class DamagedCacheError(AssayError):
    """The cache file is not a usable database: only deleting it helps."""

    def __init__(self, reason: str, *, source: str):
        super().__init__(f"{reason}: {_RESET}", source=source)
        self.reason = reason


@contextmanager
def _cache_errors(path: Path) -> Iterator[None]:
    """OSError and sqlite errors as one AssayError line naming the cache file."""
    try:
        yield
    except FileExistsError:  # from mkdir: a file sits where a folder of the path should be
        raise AssayError("cannot use the cache: Not a directory", source=str(path)) from None
    except OSError as exc:
        raise AssayError(f"cannot use the cache: {exc.strerror or exc}", source=str(path)) from None
    except sqlite3.DatabaseError as exc:
        name = getattr(exc, "sqlite_errorname", "")
        if name in _DAMAGED:
            raise DamagedCacheError(f"the cache is damaged ({exc})", source=str(path)) from None
        if name == "SQLITE_FULL":  # the write was rolled back: the cache is as it was
            raise AssayError(
                f"cannot write the cache: {exc} (free some space, or run with --no-cache)",
                source=str(path),
            ) from None
        raise AssayError(f"cache error: {exc}", source=str(path)) from None


def remove_cache_files(path: Path) -> list[str]:
    """Delete the cache at ``path`` whatever state it is in: the database and SQLite's files
    beside it, or an empty folder in its place. Returns the names removed.

    Raises:
        AssayError: a file cannot be removed, or a folder in its place holds files (a folder
            with content may be a mount or someone's data: it is left for a person to remove).
    """
    removed = []
    for candidate in (path, *(path.with_name(path.name + s) for s in _SIDE_FILES)):
        try:
            if candidate.is_dir() and not candidate.is_symlink():
                if any(candidate.iterdir()):
                    raise AssayError(
                        "a folder with files in it where the cache file should be: "
                        "move it away, then clear the cache again",
                        source=str(candidate),
                    )
                candidate.rmdir()
            else:
                candidate.unlink()
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise AssayError(
                f"cannot remove the cache: {exc.strerror or exc}", source=str(candidate)
            ) from None
        removed.append(candidate.name)
    return removed


def _open(path: Path) -> sqlite3.Connection:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_dir():  # SQLite would only say "unable to open database file"
        raise DamagedCacheError("a folder, not a cache file", source=str(path))
    db = sqlite3.connect(path, timeout=30.0, isolation_level=None)
    try:
        _prepare(db)
    except BaseException:
        db.close()
        raise
    return db


def _add_columns(db: sqlite3.Connection) -> None:
    """Caches written before finish reasons or latencies were kept gain the columns (NULL:
    not recorded)."""
    columns = {row[1] for row in db.execute("PRAGMA table_info(outputs)")}
    for name, kind in (("finish_reason", "TEXT"), ("latency_ms", "REAL")):
        if name in columns:
            continue
        try:
            db.execute(f"ALTER TABLE outputs ADD COLUMN {name} {kind}")
        except sqlite3.OperationalError as exc:  # another process added it first
            if "duplicate column" not in str(exc):
                raise


def _prepare(db: sqlite3.Connection) -> None:
    db.execute("PRAGMA busy_timeout=30000")
    # Switching a new file to WAL needs an exclusive lock and does not wait on the busy
    # handler: another process creating the same cache at the same moment makes it fail at
    # once. Retry for a while, as any other write would wait.
    for attempt in range(200):
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute(_SCHEMA)
            _add_columns(db)
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
        found = self.lookup(key)
        return None if found is None else found[0]

    def lookup(self, key: str) -> tuple[Completion, float | None] | None:
        """The entry of ``key``: its completion and the latency measured when it was made
        (None: an entry written before latencies were kept)."""
        with _cache_errors(self.path):
            row = self._db.execute(
                "SELECT text, input_tokens, output_tokens, finish_reason, latency_ms"
                " FROM outputs WHERE key = ?",
                (key,),
            ).fetchone()
        if row is None:
            return None
        latency = float(row[4]) if isinstance(row[4], int | float) else None
        return Completion(row[0], int(row[1]), int(row[2]), row[3]), latency

    def put(self, key: str, completion: Completion, latency_ms: float | None = None) -> None:
        row = (
            key,
            completion.text,
            completion.input_tokens,
            completion.output_tokens,
            time.time(),
            completion.finish_reason,
            latency_ms,
        )
        with _cache_errors(self.path):
            self._db.execute(
                "INSERT OR REPLACE INTO outputs"
                " (key, text, input_tokens, output_tokens, created, finish_reason, latency_ms)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                row,
            )

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
