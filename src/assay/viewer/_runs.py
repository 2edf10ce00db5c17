"""The saved runs as the viewer serves them: run ids checked and resolved inside the runs folder,
records read when asked for (never all at start-up), summaries and rows in the API's shape.

A run id from a URL is only ever a name ``save_run`` makes (:data:`RUN_ID`): anything else
(``..``, an encoded slash, an absolute path) is no run, and a record whose real path (symlinks
followed) is outside the runs folder is no run either. Summaries are kept by the record's
modification time and size, so ``/api/runs`` reads each record once while it is unchanged.
"""

from __future__ import annotations

import json
import os
import re
import stat
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from assay.errors import AssayError, RunStoreError

# Exactly what save_run names a record: the UTC stamp to the microsecond, then a same-microsecond
# suffix (``_2`` ... ``_999``).
RUN_ID: Final = re.compile(r"eval_run_[0-9]{8}T[0-9]{6}_[0-9]{6}Z(?:_[0-9]{1,3})?")
# The id of the one document of ``assay view RUN.json`` when it names no run id of its own.
DOCUMENT_ID: Final = "document"
BASELINE_ID: Final = "baseline"

_STATUS_KEYS: Final = {
    "pass": "pass",
    "fail": "fail",
    "error": "error",
    "needs-judge": "needs_judge",
    "no-output": "no_output",
}


class NoRun(LookupError):
    """No run of that id here (an unknown, malformed or escaping id): a 404."""


def started_at(run_id: str) -> str | None:
    """The ISO 8601 UTC time a run id's stamp says (``eval_run_20261204T032232_447888Z``)."""
    match = re.match(r"eval_run_(\d{4})(\d\d)(\d\d)T(\d\d)(\d\d)(\d\d)_(\d{6})Z", run_id)
    if match is None:
        return None
    y, mo, d, h, mi, s, us = match.groups()
    return f"{y}-{mo}-{d}T{h}:{mi}:{s}.{us}Z"


def summary_of(run_id: str, record: dict[str, Any]) -> dict[str, Any]:
    """A record's RunSummary (see docs/viewer.md)."""
    summary = record.get("summary") or {}
    selection = record.get("selection") or {}
    kind = _kind(record)
    counts = summary.get("counts") or {}
    totals = {"results": summary.get("total", len(record.get("results") or ()))}
    totals |= {key: int(counts.get(status, 0)) for status, key in _STATUS_KEYS.items()}
    mode = summary.get("mode") or selection.get("mode") or "report"
    patterns = selection.get("filter") or summary.get("filter")
    shard = selection.get("shard") or summary.get("shard")
    composite = summary.get("composite")
    return {
        "run_id": run_id,
        "kind": kind,
        "mode": "shard" if shard else str(mode),  # a shard decides nothing: `assay merge` does
        "started_at": started_at(run_id) or record.get("created_at"),
        "suite": selection.get("goldens") or record.get("suite"),
        "selection": {
            **({"filter": [str(p) for p in patterns]} if patterns else {}),
            **({"shard": str(shard)} if shard else {}),
        },
        "candidates": [str(c.get("candidate")) for c in summary.get("candidates") or ()],
        "totals": totals,
        "pass_rate": summary.get("pass_rate"),
        "mean_score": summary.get("mean_score"),
        "score": composite.get("score") if isinstance(composite, dict) else None,
        "gate": summary.get("gate"),
        "exit_code": {"passed": 0, "failed": 2, "undecided": 1}.get(str(summary.get("gate"))),
        "git": record.get("git") if isinstance(record.get("git"), dict) else None,
    }


def _kind(record: dict[str, Any]) -> str:
    """gate, eval or bench: an agent record is bench's; a gate record says which command saved
    it (an older one without ``command``: eval when it made model calls)."""
    if record.get("kind", "agent") != "gate":
        return "bench"
    command = record.get("command")
    if command in ("gate", "eval"):
        return str(command)
    return "eval" if "model_calls" in (record.get("summary") or {}) else "gate"


def _text(value: Any) -> str | None:
    """An output as text: a string as it is, a JSON value as indented JSON, None as None."""
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, indent=2, ensure_ascii=False)


def run_attestation(record: dict[str, Any]) -> dict[str, Any] | None:
    """An agent run's attestation verdict (None: no task was sealed, or not an agent run):
    ``CLEAN`` or ``DIRTY``, how many tasks were sealed and verified clean, and why each task
    that was not had its Safety zeroed."""
    summary = record.get("summary") or {}
    given = summary.get("attestation") if isinstance(summary, dict) else None
    if not isinstance(given, dict) or given.get("verdict") not in ("CLEAN", "DIRTY"):
        return None
    reasons = [
        f"{result.get('id')}: {result['safety']}"
        for result in record.get("results") or ()
        if isinstance(result, dict) and isinstance(result.get("safety"), str)
    ]
    return {
        "verdict": given["verdict"],
        "sealed": _count(given.get("sealed")),
        "clean": _count(given.get("clean")),
        "reasons": reasons,
    }


def _count(value: Any) -> int | None:
    """A count from a record, None when it is not one (a damaged record is shown, not trusted)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def rows_of(record: dict[str, Any]) -> list[dict[str, Any]]:
    """Every result of a record as an API Row (outputs only where the record kept them)."""
    outputs = record.get("outputs") or {}
    repeats = record.get("failing_outputs") or {}
    out = []
    for result in record.get("results") or ():
        golden_id, candidate = str(result.get("id")), str(result.get("candidate"))
        kept = outputs.get(candidate) or {}
        output = result.get("output", kept.get(golden_id))
        failing = (repeats.get(candidate) or {}).get(golden_id) or [
            (f.get("output"), f.get("count"))  # a --json report's own list
            for f in result.get("failing_outputs") or ()
            if isinstance(f, dict)
        ]
        failure = result.get("failure")
        out.append(
            {
                "id": golden_id,
                "candidate": candidate,
                "tier": result.get("tier"),
                "status": result.get("status"),
                "score": result.get("score"),
                "decided_by": result.get("decided_by"),
                "title": result.get("title"),
                "checks": [_check(c) for c in result.get("checks") or ()],
                "output": _text(output),
                "repeats": None
                if not failing
                else [
                    {"output": _text(o), "passed": False, "score": None, "count": n}
                    for o, n in failing
                ],
                "telemetry": result.get("telemetry"),
                "failure_category": failure.get("category") if isinstance(failure, dict) else None,
            }
        )
    return out


def checked_record(document: Any, source: str) -> dict[str, Any]:
    """A run record (or a run's ``--json`` document) checked as every view reads it, a gate
    run's rows expanded to results (RunStoreError: one line saying what is wrong)."""
    from assay.gate import RUN_RECORD, expand_rows

    record = RUN_RECORD.check(document, source)
    if "rows" in record:
        try:
            record["results"] = expand_rows(record.pop("rows"))
        except (TypeError, ValueError):
            raise RunStoreError("a damaged gate run record", source=source, field="rows") from None
    results = record.get("results")
    if not isinstance(results, list) or not all(isinstance(r, dict) for r in results):
        raise RunStoreError("not a run record: no results", source=source, field="results")
    return record


def _check(check: dict[str, Any]) -> dict[str, Any]:
    row = {"op": check.get("op"), "passed": check.get("passed"), "reason": check.get("reason")}
    if check.get("evidence") is not None:
        row["evidence"] = check["evidence"]
    return row


@dataclass
class RunStore:
    """The runs the viewer serves: the project's saved runs under ``root``, or (``document``
    given) that one run document alone."""

    root: Path
    document: Path | None = None
    _summaries: dict[str, tuple[tuple[int, int], dict[str, Any] | str]] = field(
        default_factory=dict
    )
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def folder(self) -> Path:
        from assay.gate import runs_dir

        return runs_dir(self.root)

    def ids(self) -> list[str]:
        """Run ids, newest first."""
        if self.document is not None:
            return [self._document_id()]
        from assay.gate import list_runs

        return list_runs(self.root)[::-1]

    def path_of(self, run_id: str, folder: Path | None = None) -> Path:
        """The record of ``run_id``, inside the runs folder (``folder``: that folder resolved,
        when the caller has it); NoRun if there is none or it is a symlink out of the folder."""
        if self.document is not None:
            if run_id != self._document_id():
                raise NoRun(run_id)
            return self.document
        if RUN_ID.fullmatch(run_id) is None:
            raise NoRun(run_id)
        folder = folder or self.folder.resolve()
        path = folder / f"{run_id}.json"
        try:
            mode = path.lstat().st_mode
        except OSError:
            raise NoRun(run_id) from None
        if stat.S_ISLNK(mode):  # only a link that stays in the folder is one of its records
            path = path.resolve()
            if path.parent != folder:
                raise NoRun(run_id)
        elif not stat.S_ISREG(mode):
            raise NoRun(run_id)
        return path

    def record(self, run_id: str, folder: Path | None = None) -> dict[str, Any]:
        """The checked record of ``run_id``, a gate run's rows expanded (RunStoreError: damaged;
        NoRun: none)."""
        from assay.io import read_json

        path = self.path_of(run_id, folder)
        return checked_record(read_json(path, RunStoreError), str(path))

    def summaries(self) -> tuple[list[dict[str, Any]], list[dict[str, str]]]:
        """Every run's summary, newest first, and one line per record that could not be read."""
        runs, problems = [], []
        folder = self.folder.resolve()
        for run_id in self.ids():
            found = self._summary(run_id, folder)
            if isinstance(found, str):
                problems.append({"run_id": run_id, "error": found})
            elif found is not None:
                runs.append(found)
        return runs, problems

    def _summary(self, run_id: str, folder: Path) -> dict[str, Any] | str | None:
        try:
            path = self.path_of(run_id, folder)
            info = path.stat()
        except (NoRun, OSError):
            return None  # pruned since it was listed, or a symlink out: not ours to show
        key = (info.st_mtime_ns, info.st_size)
        with self._lock:
            cached = self._summaries.get(run_id)
        if cached is not None and cached[0] == key:
            return cached[1]
        found: dict[str, Any] | str
        try:
            found = summary_of(run_id, self.record(run_id, folder))
        except AssayError as exc:
            found = str(exc)
        except (AttributeError, TypeError, ValueError):  # a field of the wrong type
            found = f"{path}: a damaged run record: a field of the wrong type"
        with self._lock:
            self._summaries[run_id] = (key, found)
        return found

    def _document_id(self) -> str:
        assert self.document is not None
        try:
            with self.document.open("rb") as handle:
                head = handle.read(512).decode("utf-8", "replace")
        except OSError:
            return DOCUMENT_ID
        match = re.search(r'"run_id"\s*:\s*"([^"]+)"', head)
        found = match.group(1) if match else ""
        return found if RUN_ID.fullmatch(found) else DOCUMENT_ID


def is_safe_name(text: str) -> bool:
    """A golden id or static file name from a URL that names nothing but itself."""
    return (
        bool(text)
        and len(text) <= 1000
        and text not in (".", "..")
        and not any(c in text for c in "/\\\x00")
        and not os.path.isabs(text)
    )
