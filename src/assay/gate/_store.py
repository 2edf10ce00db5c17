"""Saved runs under ``.assay/runs/``: one JSON file per run (gate, live or agent), never
overwritten.

File names carry the UTC time to the microsecond (``eval_run_20261130T120000_123456Z.json``);
two runs in the same microsecond still get two files (``..._2.json``), because each file is
created exclusively. Reading them back (and refusing an older assay's records) is
:mod:`assay.agent._saved_runs`; this module is what every run needs to save one, and imports
nothing heavy.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from assay import validate as v
from assay.errors import RunStoreError
from assay.io import atomic_create_text
from assay.results import SCHEMA_VERSION, RecordType

_PREFIX: Final = "eval_run_"

# A saved run, declared: what every view of one reads. A gate run keeps its results as rows
# (``assay.gate._record``), which the reader expands; the rest is the run's own.
RUN_RECORD: Final = RecordType(
    "run record",
    RunStoreError,
    fields=v.Table(
        {
            "results": v.List(message="must be a list (found {found})"),
            "rows": v.List(message="must be a list (found {found})"),
            "summary": v.Dict(
                message="must be an object (found {found})", required="not a run record: no summary"
            ),
        },
        keep=lambda key: True,
    ),
    retired={
        1: "a run record of schema version 1, written by an older assay, which this one no "
        "longer reads: move it out of .assay/runs/ or delete it"
    },
    compact=True,
)


def runs_dir(root: Path) -> Path:
    return root / ".assay" / "runs"


def save_run(root: Path, document: dict[str, Any], now: datetime | None = None) -> str:
    """Save a run record; returns its run id (the file stem)."""
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%dT%H%M%S_%fZ")
    folder = runs_dir(root)
    for attempt in range(1, 1000):
        run_id = f"{_PREFIX}{stamp}" + ("" if attempt == 1 else f"_{attempt}")
        record = {"schema_version": SCHEMA_VERSION, "run_id": run_id, **document}
        if atomic_create_text(folder / f"{run_id}.json", RUN_RECORD.dump(record), RunStoreError):
            return run_id
    raise RunStoreError("could not find a free run file name", source=str(folder))


def list_runs(root: Path) -> list[str]:
    """Saved run ids, oldest first."""
    try:
        names = os.listdir(runs_dir(root))  # not Path.glob: a Path per record, to cut its name
    except OSError:  # no folder yet (or none readable): no runs, as glob found none
        return []
    return sorted(
        (n[:-5] for n in names if n.startswith(_PREFIX) and n.endswith(".json")), key=run_order
    )


def run_order(run_id: str) -> tuple[str, int]:
    """Time stamp first, then the numeric suffix of same-microsecond runs (_2 < _10)."""
    if run_id.endswith("Z"):
        return run_id, 1
    base, _, suffix = run_id.rpartition("_")
    return (base, int(suffix)) if suffix.isdigit() else (run_id, 0)


def prune_runs(root: Path, keep: int) -> list[str]:
    """Remove the oldest saved runs beyond the ``keep`` newest (0: keep every run); returns
    the ids removed. A record already gone (another run pruned it) is not an error."""
    if keep <= 0:
        return []
    ids = list_runs(root)
    removed = ids[: max(0, len(ids) - keep)]
    folder = runs_dir(root)
    for run_id in removed:
        try:
            (folder / f"{run_id}.json").unlink(missing_ok=True)
        except OSError as exc:
            raise RunStoreError(
                f"cannot remove an old run: {exc.strerror}", source=str(folder)
            ) from None
    return removed
