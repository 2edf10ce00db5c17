"""Candidate outputs from a file: ``{golden_id: output}``, ``{candidate: {golden_id: output}}``,
or JSONL rows ``{"id", "output", "candidate"?}``.

A JSON object is read per candidate when none of its keys is a golden id and every value is an
object; otherwise it is one candidate's map (candidate ``default``).
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path
from typing import Any

from assay.errors import OutputsError
from assay.io import iter_jsonl_objects, read_json
from assay.results import DEFAULT_CANDIDATE

Outputs = dict[str, dict[str, Any]]


_MISSING = "outputs file not found (nothing can be scored without candidate outputs)"


def _from_jsonl(path: Path) -> Outputs:
    out: Outputs = {}
    for where, row in iter_jsonl_objects(path, OutputsError, missing=_MISSING):
        golden_id = row.get("id")
        if not isinstance(golden_id, str) or not golden_id:
            raise OutputsError("each row needs a string id", source=where, field="id")
        if "output" not in row:
            raise OutputsError("each row needs an output", source=where, field="output")
        candidate = row.get("candidate", DEFAULT_CANDIDATE)
        if not isinstance(candidate, str) or not candidate:
            raise OutputsError(
                "candidate must be a non-empty string", source=where, field="candidate"
            )
        per = out.setdefault(candidate, {})
        if golden_id in per:
            raise OutputsError(
                f"duplicate output for golden '{golden_id}' (candidate '{candidate}')",
                source=where,
                field="id",
            )
        per[golden_id] = row["output"]
    return out


def load_outputs(path: Path | str, golden_ids: Collection[str] = ()) -> Outputs:
    """Read an outputs file into ``{candidate: {golden_id: output}}``.

    Raises:
        OutputsError: the file is missing, unreadable, not UTF-8, or not a valid outputs file.
    """
    path = Path(path)
    source = str(path)
    if path.suffix == ".jsonl":
        return _from_jsonl(path)
    data = read_json(path, OutputsError, missing=_MISSING)
    if not isinstance(data, dict):
        raise OutputsError("an outputs file must be a JSON object (or JSONL rows)", source=source)
    ids = set(golden_ids)
    per_candidate = (
        bool(data)
        and all(isinstance(v, dict) for v in data.values())
        and not any(k in ids for k in data)
    )
    if per_candidate:
        return {str(k): dict(v) for k, v in data.items()}
    return {DEFAULT_CANDIDATE: data}
