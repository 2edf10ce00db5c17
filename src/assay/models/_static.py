"""Candidate outputs from a file: ``{golden_id: output}``, ``{candidate: {golden_id: output}}``,
or JSONL rows ``{"id", "output", "candidate"?}``.

A JSON object is read per candidate when none of its keys is a golden id and every value is an
object; otherwise it is one candidate's map (candidate ``default``).
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path
from typing import Any, Final

from assay.errors import OutputsError
from assay.io import iter_jsonl_objects, read_json
from assay.results import DEFAULT_CANDIDATE
from assay.validate import At, Dict

Outputs = dict[str, dict[str, Any]]
_MISSING = "outputs file not found (nothing can be scored without candidate outputs)"
_OBJECT: Final = Dict(message="an outputs file must be a JSON object (or JSONL rows)")


def _from_jsonl(path: Path) -> Outputs:
    # Checked by hand, not with the validation layer's specs: this runs once per row of a
    # file that can hold 100,000, before the suite is split between the cores, and the specs
    # cost a third of the read (bench/big_suite.py's JSONL row).
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
    raw = read_outputs(path)
    return raw.shaped(raw.per_candidate(golden_ids))


class RawOutputs:
    """An outputs file read but not yet shaped: a JSON object's shape depends on the golden ids
    (:meth:`per_candidate`), so a run may read the file before it knows them.

    Attributes:
        data: the JSON object (empty for JSONL rows).
        rows: JSONL rows, per candidate (None for a JSON object).
    """

    __slots__ = ("data", "rows")

    def __init__(self, data: dict[str, Any], rows: Outputs | None = None):
        self.data = data
        self.rows = rows

    def per_candidate(self, golden_ids: Collection[str]) -> bool:
        """Whether the JSON object is ``{candidate: {golden_id: output}}`` for these ids: a
        non-empty object of objects is, unless one of its keys is a golden id (JSONL rows are
        always per candidate)."""
        if self.rows is not None:
            return True
        data = self.data
        if not data or not all(isinstance(v, dict) for v in data.values()):
            return False
        return set(golden_ids).isdisjoint(data)

    def shaped(self, per_candidate: bool) -> Outputs:
        """``{candidate: {golden_id: output}}`` in the shape given."""
        if self.rows is not None:
            return self.rows
        if per_candidate:
            return {str(k): dict(v) for k, v in self.data.items()}
        return {DEFAULT_CANDIDATE: self.data}


def read_outputs(path: Path | str) -> RawOutputs:
    """Read and check an outputs file, leaving the shape of a JSON object to
    :meth:`RawOutputs.per_candidate`.

    Raises:
        OutputsError: as :func:`load_outputs`.
    """
    path = Path(path)
    if path.suffix == ".jsonl":
        return RawOutputs({}, _from_jsonl(path))
    data = read_json(path, OutputsError, missing=_MISSING)
    return RawOutputs(_OBJECT.check(data, At(str(path), error=OutputsError)))
