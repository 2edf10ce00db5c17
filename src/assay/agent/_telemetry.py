"""Agent-run telemetry: one record per task, from a folder of ``<task_id>.json`` or JSONL rows.

Only ``task_id`` is required; a missing (or null) field takes its zero value. Unknown fields are
errors (a typo such as ``test_failed`` must not silently read as zero; its near miss is named),
except extension fields named ``x_*``. assay 0.1's ``tokens_input`` and ``tokens_output`` are no
longer read: a record using them is an error naming the field's new name. Every error names the
file (and line) and the field.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from assay.errors import TelemetryError
from assay.io import iter_jsonl_objects, read_json, require_regular_file
from assay.validate import At, Bool, Int, List, Num, Spec, Str, Table, rule

JUDGE_KEYS: Final = ("correctness", "style", "test_coverage", "safety")
_COUNT: Final = Int(at_least=0, integral=True, message="must be an integer >= 0")
_AMOUNT: Final = Num(at_least=0)
_PATHS: Final = List(Str(message="must be a list of paths"), message="must be a list of paths")
_JUDGE: Final = Table(
    dict.fromkeys(JUDGE_KEYS, Num(message="must be a number (0..5)")),
    unknown=f"unknown judge score (use {', '.join(JUDGE_KEYS)})",
    message="must be an object of scores",
)


@dataclass(frozen=True, slots=True)
class Telemetry:
    """What the orchestrator observed for one task (zero values where it said nothing); each
    field a record may hold is declared here with its rule."""

    task_id: str = field(
        metadata={"rule": Str(pattern=".+", message="required: a non-empty string", required=True)}
    )
    source: str
    duration_s: float = rule(_AMOUNT, 0.0)
    cost_usd: float = rule(_AMOUNT, 0.0)
    turns_used: int = rule(_COUNT, 0)
    input_tokens: int = rule(_COUNT, 0)
    output_tokens: int = rule(_COUNT, 0)
    tests_run: int = rule(_COUNT, 0)
    tests_passed: int = rule(_COUNT, 0)
    tests_failed: int = rule(_COUNT, 0)
    completion_signals_checked: int = rule(_COUNT, 0)
    completion_signals_passed: int = rule(_COUNT, 0)
    crashes: int = rule(_COUNT, 0)
    orphans: int = rule(_COUNT, 0)
    merge_conflicts: int = rule(_COUNT, 0)
    compile_error: bool = rule(Bool(), False)
    files_read: tuple[str, ...] = rule(_PATHS, ())
    files_modified: tuple[str, ...] = rule(_PATHS, ())
    judge: Mapping[str, float] | None = rule(_JUDGE, None)
    output: Any = rule(Spec(), "")  # noqa: RUF009 (a Field)
    attestation: str | None = rule(
        Str(pattern="sha256:.*", message="must be an attestation id 'sha256:...'"), None
    )
    # The task could not be run or measured (its cause, one line).
    error: str | None = rule(
        Str(pattern=r"\s*\S.*", message="must be a non-empty text (the cause)"), None
    )
    extra: Mapping[str, Any] = field(default_factory=dict)


_RECORD: Final = Table.of(
    Telemetry,
    unknown="unknown field (extension fields must start with 'x_')",
    keep=lambda key: key.startswith("x_"),
    renamed={"tokens_input": "input_tokens", "tokens_output": "output_tokens"},
    null_absent=True,
    message="a telemetry record must be a JSON object",
)


def parse_record(data: Any, source: str) -> Telemetry:
    """Validate one record.

    Raises:
        TelemetryError: naming ``source`` and the field at fault.
    """
    values = _RECORD.check(data, At(source, "", TelemetryError))
    extra = {key: value for key, value in data.items() if key.startswith("x_")}
    return Telemetry(source=source, extra=extra, **values)


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


def load_telemetry(path: Path, known_ids: Collection[str]) -> dict[str, Telemetry]:
    """All records under ``path`` (a folder of ``<task_id>.json`` or a JSONL file).

    Raises:
        TelemetryError: missing path, malformed record, duplicate or unknown task id.
    """
    if path.is_dir():
        records = _iter_folder(path)
    elif path.is_file():
        rows = iter_jsonl_objects(path, TelemetryError)
        records = (parse_record(data, source) for source, data in rows)
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
