"""Agent-run telemetry: one record per task, from a folder of ``<task_id>.json`` or JSONL rows.

Only ``task_id`` is required; a missing field takes its zero value. Unknown fields are errors
(a typo such as ``test_failed`` must not silently read as zero), except extension fields named
``x_*``. Every error names the file (and line) and the field.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from assay.errors import TelemetryError
from assay.io import iter_jsonl_objects, read_json, require_regular_file
from assay.validate import is_number

_COUNTS: Final = (
    "turns_used",
    "input_tokens",
    "output_tokens",
    "tests_run",
    "tests_passed",
    "tests_failed",
    "completion_signals_checked",
    "completion_signals_passed",
    "crashes",
    "orphans",
    "merge_conflicts",
)
_AMOUNTS: Final = ("duration_s", "cost_usd")
# assay 0.1's names of the token counts, accepted for one release (one vocabulary: the model
# calls' statistics and the telemetry both say input_tokens / output_tokens now).
DEPRECATED_ALIASES: Final = {"tokens_input": "input_tokens", "tokens_output": "output_tokens"}
_PATH_LISTS: Final = ("files_read", "files_modified")
JUDGE_KEYS: Final = ("correctness", "style", "test_coverage", "safety")
_KNOWN: Final = frozenset(
    {
        "task_id",
        *_COUNTS,
        *_AMOUNTS,
        *_PATH_LISTS,
        *DEPRECATED_ALIASES,
        "compile_error",
        "judge",
        "output",
        "attestation",
        "error",
    }
)


@dataclass(frozen=True, slots=True)
class Telemetry:
    """What the orchestrator observed for one task (zero values where it said nothing)."""

    task_id: str
    source: str
    duration_s: float = 0.0
    cost_usd: float = 0.0
    turns_used: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    tests_run: int = 0
    tests_passed: int = 0
    tests_failed: int = 0
    completion_signals_checked: int = 0
    completion_signals_passed: int = 0
    crashes: int = 0
    orphans: int = 0
    merge_conflicts: int = 0
    compile_error: bool = False
    files_read: tuple[str, ...] = ()
    files_modified: tuple[str, ...] = ()
    judge: Mapping[str, float] | None = None
    output: Any = ""
    attestation: str | None = None
    error: str | None = None  # the task could not be run or measured (its cause, one line)
    extra: Mapping[str, Any] = field(default_factory=dict)


def parse_record(data: Any, source: str) -> Telemetry:
    """Validate one record.

    Raises:
        TelemetryError: naming ``source`` and the field at fault.
    """
    if not isinstance(data, dict):
        raise TelemetryError("a telemetry record must be a JSON object", source=source)
    task_id = data.get("task_id")
    if not isinstance(task_id, str) or not task_id:
        raise TelemetryError("required: a non-empty string", source=source, field="task_id")
    values: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    written: dict[str, str] = {}  # new name -> the deprecated name the record used
    for old, new in DEPRECATED_ALIASES.items():
        if old in data:
            if new in data:
                raise TelemetryError(
                    f"give {new} only ({old} is its deprecated name)", source=source, field=old
                )
            data = {**data, new: data[old]}
            del data[old]
            written[new] = old
    for key, value in data.items():
        if key not in _KNOWN:
            if key.startswith("x_"):
                extra[key] = value
                continue
            raise TelemetryError(
                "unknown field (extension fields must start with 'x_')", source=source, field=key
            )
    for key in _COUNTS:
        if key in data and data[key] is not None:
            value = data[key]
            if isinstance(value, float) and value.is_integer():
                value = int(value)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                field_ = written.get(key, key)  # name the field as the file spells it
                raise TelemetryError("must be an integer >= 0", source=source, field=field_)
            values[key] = value
    for key in _AMOUNTS:
        if key in data and data[key] is not None:
            if not is_number(data[key]) or data[key] < 0:
                raise TelemetryError("must be a number >= 0", source=source, field=key)
            values[key] = float(data[key])
    for key in _PATH_LISTS:
        if key in data and data[key] is not None:
            value = data[key]
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise TelemetryError("must be a list of paths", source=source, field=key)
            values[key] = tuple(value)
    if data.get("compile_error") is not None:
        if not isinstance(data["compile_error"], bool):
            raise TelemetryError("must be true or false", source=source, field="compile_error")
        values["compile_error"] = data["compile_error"]
    judge = data.get("judge")
    if judge is not None:
        if not isinstance(judge, dict):
            raise TelemetryError("must be an object of scores", source=source, field="judge")
        verdict: dict[str, float] = {}
        for key, value in judge.items():
            if key not in JUDGE_KEYS:
                raise TelemetryError(
                    f"unknown judge score (use {', '.join(JUDGE_KEYS)})",
                    source=source,
                    field=f"judge.{key}",
                )
            if not is_number(value):
                raise TelemetryError("must be a number (0..5)", source=source, field=f"judge.{key}")
            verdict[key] = float(value)
        values["judge"] = verdict
    if data.get("output") is not None:
        values["output"] = data["output"]
    attestation = data.get("attestation")
    if attestation is not None:
        if not isinstance(attestation, str) or not attestation.startswith("sha256:"):
            raise TelemetryError(
                "must be an attestation id 'sha256:...'", source=source, field="attestation"
            )
        values["attestation"] = attestation
    error = data.get("error")
    if error is not None:
        if not isinstance(error, str) or not error.strip():
            raise TelemetryError(
                "must be a non-empty text (the cause)", source=source, field="error"
            )
        values["error"] = error
    return Telemetry(task_id=task_id, source=source, extra=extra, **values)


def _iter_folder(folder: Path) -> Iterator[Telemetry]:
    for path in sorted(folder.glob("*.json")):
        if path.name.startswith((".", "_")):
            continue
        source = str(path)
        require_regular_file(path, TelemetryError)
        record = parse_record(read_json(path, TelemetryError), source)
        if record.task_id != path.stem:
            raise TelemetryError(
                f"task_id {record.task_id!r} does not match the file name",
                source=source,
                field="task_id",
            )
        yield record


def _iter_jsonl(path: Path) -> Iterator[Telemetry]:
    for source, data in iter_jsonl_objects(path, TelemetryError):
        yield parse_record(data, source)


def load_telemetry(path: Path, known_ids: Collection[str]) -> dict[str, Telemetry]:
    """All records under ``path`` (a folder of ``<task_id>.json`` or a JSONL file).

    Raises:
        TelemetryError: missing path, malformed record, duplicate or unknown task id.
    """
    if path.is_dir():
        records = _iter_folder(path)
    elif path.is_file():
        records = _iter_jsonl(path)
    else:
        raise TelemetryError("telemetry folder or file not found", source=str(path))
    out: dict[str, Telemetry] = {}
    for record in records:
        if record.task_id not in known_ids:
            raise TelemetryError(
                f"unknown task id {record.task_id!r} (no golden task has it)",
                source=record.source,
                field="task_id",
            )
        if record.task_id in out:
            raise TelemetryError(
                f"duplicate record for task {record.task_id!r} (first in "
                f"{out[record.task_id].source})",
                source=record.source,
                field="task_id",
            )
        out[record.task_id] = record
    return out
