"""Saved agent runs under ``.assay/runs/``: one JSON file per run, never overwritten.

File names carry the UTC time to the microsecond (``eval_run_20261130T120000_123456Z.json``);
two runs in the same microsecond still get two files (``..._2.json``), because each file is
created exclusively.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from assay.agent._record import upgrade_record
from assay.errors import RunStoreError
from assay.io import atomic_create_text, read_json

RUN_SCHEMA_VERSION: Final = 2  # = results.DOCUMENT_SCHEMA_VERSION (a test checks it)
_PREFIX: Final = "eval_run_"


def runs_dir(root: Path) -> Path:
    return root / ".assay" / "runs"


def save_run(root: Path, document: dict[str, Any], now: datetime | None = None) -> str:
    """Save a run record; returns its run id (the file stem)."""
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%dT%H%M%S_%fZ")
    folder = runs_dir(root)
    for attempt in range(1, 1000):
        run_id = f"{_PREFIX}{stamp}" + ("" if attempt == 1 else f"_{attempt}")
        record = {"schema_version": RUN_SCHEMA_VERSION, "run_id": run_id, **document}
        # Compact: run records are read by assay, and big runs are 10x faster to write so.
        text = json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"
        if atomic_create_text(folder / f"{run_id}.json", text, RunStoreError):
            return run_id
    raise RunStoreError("could not find a free run file name", source=str(folder))


def list_runs(root: Path) -> list[str]:
    """Saved run ids, oldest first."""
    folder = runs_dir(root)
    if not folder.is_dir():
        return []
    return sorted((p.stem for p in folder.glob(f"{_PREFIX}*.json")), key=_order)


def _order(run_id: str) -> tuple[str, int]:
    """Time stamp first, then the numeric suffix of same-microsecond runs (_2 < _10)."""
    if run_id.endswith("Z"):
        return run_id, 1
    base, _, suffix = run_id.rpartition("_")
    return (base, int(suffix)) if suffix.isdigit() else (run_id, 0)


def load_run(root: Path, run_id: str | None = None) -> dict[str, Any]:
    """The named run, or the latest.

    Raises:
        RunStoreError: no saved run, an unknown id, or an unreadable record.
    """
    ids = list_runs(root)
    if not ids:
        raise RunStoreError("no saved run yet: run `assay bench` first", source=str(runs_dir(root)))
    if run_id is None:
        run_id = ids[-1]
    elif run_id not in ids:
        raise RunStoreError(
            f"no saved run {run_id!r} (latest: {ids[-1]})",
            source=str(runs_dir(root)),
            field="--run",
        )
    path = runs_dir(root) / f"{run_id}.json"
    document = read_json(path, RunStoreError)
    if isinstance(document, dict) and document.get("schema_version") == 1:
        try:  # a record of assay 0.1: read it in today's shape
            document = upgrade_record(document)
        except (KeyError, TypeError, AttributeError, ValueError):
            raise RunStoreError(
                "a damaged run record (schema version 1) cannot be read", source=str(path)
            ) from None
    if not isinstance(document, dict) or document.get("schema_version") != RUN_SCHEMA_VERSION:
        raise RunStoreError(
            "unknown run record schema version", source=str(path), field="schema_version"
        )
    for key, kind in (("results", list), ("summary", dict)):
        if not isinstance(document.get(key), kind):
            raise RunStoreError(f"not a run record: no {key}", source=str(path), field=key)
    return document


def previous_run(root: Path, before: str | None = None) -> dict[str, Any] | None:
    """The latest run saved before ``before`` (or the latest of all when None)."""
    ids = list_runs(root)
    if before is not None:
        ids = [i for i in ids if _order(i) < _order(before)]
    return load_run(root, ids[-1]) if ids else None
