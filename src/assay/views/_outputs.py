"""``--format outputs``: the run's answers as an outputs file that ``assay gate --outputs`` reads
back (JSONL rows ``{"id", "candidate", "output"}``, or a JSON object when the file it is
written to is named ``.json``), to inspect, keep, or re-score a live run
without calling the model again."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from assay.errors import AssayError
from assay.io import dump_json
from assay.results import DEFAULT_CANDIDATE, ReportContent


def render_outputs(
    document: Mapping[str, Any], content: ReportContent | None, *, as_object: bool = False
) -> str:
    """One JSONL row per (candidate, golden) that has an answer (the first repeat's), or with
    ``as_object`` (a file named ``.json``) the JSON object ``--outputs`` reads: ``{id: output}``
    for the one default candidate, else ``{candidate: {id: output}}``; an AssayError for an
    agent run, which has no outputs."""
    if document.get("kind") != "gate":
        raise AssayError("--format outputs applies to goldens runs, which have outputs")
    known = content.outputs if content is not None else {}
    rows = []
    for result in document["results"]:
        if result["status"] in ("error", "no-output"):  # no answer: "output" is the error
            continue
        produced = known.get(result["candidate"], {})
        if result["id"] in produced:
            output = produced[result["id"]]
        elif "output" in result:
            output = result["output"]
        else:
            continue
        rows.append({"id": result["id"], "candidate": result["candidate"], "output": output})
    if not as_object:
        return "".join(dump_json(row, compact=True) for row in rows)
    per: dict[str, dict[str, Any]] = {}
    for row in rows:
        per.setdefault(row["candidate"], {})[row["id"]] = row["output"]
    flat = list(per) == [DEFAULT_CANDIDATE] or not per
    return dump_json(per.get(DEFAULT_CANDIDATE, {}) if flat else per)
