"""Saved runs read back: the latest, a named one, the one before (the store itself, which
every run writes to, is :mod:`assay.gate._store`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

from assay.errors import RunStoreError
from assay.gate import RUN_SCHEMA_VERSION, list_runs, runs_dir, save_run
from assay.io import read_json

# Schema versions of run records an older assay wrote: refused, naming the file (never read in
# today's shape); a listing skips them with a warning, --compare looks past them.
OLD_SCHEMA_VERSIONS: Final = (1,)


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


def _old_version(document: Any) -> int | None:
    """The schema version of a record an older assay wrote, else None."""
    version = document.get("schema_version") if isinstance(document, dict) else None
    return version if type(version) is int and version in OLD_SCHEMA_VERSIONS else None


def _checked(document: Any, path: Path) -> dict[str, Any]:
    """The record read from ``path``, in the shape the views read.

    Raises:
        RunStoreError: a record of an older or unknown schema version, or a damaged one.
    """
    old = _old_version(document)
    if old is not None:
        raise RunStoreError(
            f"a run record of schema version {old}, written by an older assay, which this one "
            "no longer reads: move it out of .assay/runs/ or delete it",
            source=str(path),
            field="schema_version",
        )
    if isinstance(document, dict) and document.get("kind") == "gate" and "rows" in document:
        from assay.gate import expand_rows

        try:  # a gate run keeps its results as rows: the views read result records
            document["results"] = expand_rows(document.pop("rows"))
        except (TypeError, ValueError):
            raise RunStoreError(
                "a damaged gate run record", source=str(path), field="rows"
            ) from None
    if not isinstance(document, dict) or document.get("schema_version") != RUN_SCHEMA_VERSION:
        raise RunStoreError(
            "unknown run record schema version", source=str(path), field="schema_version"
        )
    for key, kind in (("results", list), ("summary", dict)):
        if not isinstance(document.get(key), kind):
            raise RunStoreError(f"not a run record: no {key}", source=str(path), field=key)
    if document.get("kind") == "gate":  # what the views of a gate record read
        _check_summary(document["summary"], str(path))
    return document


def _is_gate_record(path: Path) -> bool:
    """Whether a record is a gate run's, from its first bytes (``save_run`` writes
    ``schema_version``, ``run_id``, then the document, whose first key is ``kind``)."""
    try:
        with path.open("rb") as handle:
            head = handle.read(256)
    except OSError:
        return False  # load_run says what is wrong with it
    return b'"kind":"gate"' in head


def _check_summary(summary: dict[str, Any], source: str) -> None:
    """The summary fields every view of a saved run reads, with their types.

    Raises:
        RunStoreError: one missing or of another type (a damaged or hand-edited record).
    """
    from assay.validate import is_number

    rate = summary.get("pass_rate")
    checks = (
        ("total", isinstance(summary.get("total"), int)),
        ("counts", isinstance(summary.get("counts"), dict)),
        ("pass_rate", rate is None or is_number(rate)),
        ("candidates", isinstance(summary.get("candidates", []), list)),
    )
    for name, ok in checks:
        if not ok:
            raise RunStoreError(
                "a damaged run record: missing or of the wrong type",
                source=source,
                field=f"summary.{name}",
            )


def previous_run(root: Path) -> dict[str, Any] | None:
    """The latest agent run saved: gate runs and agent runs share the store, and an agent run
    compares with agent runs. A record of an older assay is passed over: today's run has
    nothing to compare with in it."""
    for run_id in reversed(list_runs(root)):
        path = runs_dir(root) / f"{run_id}.json"
        if _is_gate_record(path):
            continue  # every CI job saves a gate run: not read whole to be passed over
        raw = read_json(path, RunStoreError)
        if _old_version(raw) is not None:  # an older assay's record: nothing to compare with
            continue
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
    "RUN_SCHEMA_VERSION",
    "list_runs",
    "load_run",
    "previous_run",
    "runs_dir",
    "save_run",
]
