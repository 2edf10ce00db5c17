"""``--format outputs``: the run's answers as an outputs file that ``assay gate --outputs`` reads
back (JSONL rows ``{"id", "candidate", "output"}``), to inspect, keep, or re-score a live run
without calling the model again."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from assay.errors import AssayError
from assay.io import dump_json
from assay.results import ReportContent


def render_outputs(document: Mapping[str, Any], content: ReportContent | None) -> str:
    """One JSONL row per (candidate, golden) that has an answer (the first repeat's); an
    AssayError for an agent run, which has no outputs."""
    if document.get("kind") != "gate":
        raise AssayError("--format outputs applies to goldens runs, which have outputs")
    known = content.outputs if content is not None else {}
    lines = []
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
        row = {"id": result["id"], "candidate": result["candidate"], "output": output}
        lines.append(dump_json(row, compact=True))
    return "".join(lines)
