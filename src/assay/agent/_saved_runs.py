"""Saved runs read back: the latest, a named one, the one before (the store itself, which
every run writes to, is :mod:`assay.gate._store`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

from assay import validate as v
from assay.errors import RunStoreError
from assay.gate import RUN_RECORD, list_runs, runs_dir, save_run
from assay.io import read_json

_DAMAGED: Final = "a damaged run record: missing or of the wrong type"

# What every view of a gate run's summary reads, with its type (a damaged or hand-edited
# record is one line naming the field).
_GATE_SUMMARY: Final = v.Table(
    {
        "total": v.Int(message=_DAMAGED, required=True),
        "counts": v.Dict(message=_DAMAGED, required=True),
        "pass_rate": v.Maybe(v.Num(), message=_DAMAGED, required=True),
        "candidates": v.List(message=_DAMAGED),
    },
    keep=lambda key: True,
)


def load_run(root: Path, run_id: str | None = None) -> dict[str, Any]:
    """The named run, or the latest.

    Raises:
        RunStoreError: no saved run, an unknown id, or an unreadable record.
    """
    ids = list_runs(root)
    if not ids:
        raise RunStoreError(
            "no saved run yet: run `assay gate`, `assay eval` or `assay bench` first",
            source=str(runs_dir(root)),
        )
    if run_id is None:
        run_id = ids[-1]
    elif run_id not in ids:
        raise RunStoreError(
            f"no saved run {run_id!r} (latest: {ids[-1]})",
            source=str(runs_dir(root)),
            field="--run",
        )
    path = runs_dir(root) / f"{run_id}.json"
    return _checked(read_json(path, RunStoreError), path)


def _checked(document: Any, path: Path) -> dict[str, Any]:
    """The record read from ``path``, checked (its schema version too), in the shape the views
    read (a gate run's rows expanded to result records)."""
    source = str(path)
    record = RUN_RECORD.check(document, source)
    if record.get("kind") == "gate":
        if "rows" in record:
            from assay.gate import expand_rows

            try:
                record["results"] = expand_rows(record.pop("rows"))
            except (TypeError, ValueError):
                raise RunStoreError(
                    "a damaged gate run record", source=source, field="rows"
                ) from None
        _GATE_SUMMARY.check(record["summary"], v.At(source, "", RunStoreError), "summary")
    if "results" not in record:
        raise RunStoreError("not a run record: no results", source=source, field="results")
    return record


def _is_gate_record(path: Path) -> bool:
    """Whether a record is a gate run's, from its first bytes (``save_run`` writes
    ``schema_version``, ``run_id``, then the document, whose first key is ``kind``)."""
    try:
        with path.open("rb") as handle:
            head = handle.read(256)
    except OSError:
        return False  # load_run says what is wrong with it
    return b'"kind":"gate"' in head


def previous_run(root: Path) -> dict[str, Any] | None:
    """The latest agent run saved: gate runs and agent runs share the store, and an agent run
    compares with agent runs. A record of an older assay is passed over: today's run has
    nothing to compare with in it."""
    for run_id in reversed(list_runs(root)):
        path = runs_dir(root) / f"{run_id}.json"
        if _is_gate_record(path):
            continue  # every CI job saves a gate run: not read whole to be passed over
        raw = read_json(path, RunStoreError)
        if RUN_RECORD.retired_version(raw) is not None:
            continue  # an older assay's record: nothing to compare with
        try:
            document = _checked(raw, path)
        except RunStoreError as exc:
            if exc.field == "rows":  # a damaged gate record: not the agent run looked for
                continue
            raise
        if document.get("kind", "agent") == "agent":
            return document
    return None


__all__ = [
    "list_runs",
    "load_run",
    "previous_run",
    "runs_dir",
    "save_run",
]
