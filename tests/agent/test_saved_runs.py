"""Saved agent runs: the schema version they carry; a run record of an older assay (schema version
1) is refused in one line naming the file (``assay report``, ``assay failures``), skipped with a
warning by ``assay runs list`` and passed over by ``--compare``, never read in today's shape."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from assay import results
from assay.agent import load_run, previous_run, runs_dir, save_run
from assay.errors import RunStoreError
from tests.helpers.cli import CliRunner
from tests.helpers.telemetry import smoke_telemetry

V1_ID = "eval_run_20250101T000000_000000Z"


def composite(score: float) -> dict[str, Any]:
    return {
        "score": score,
        "components": {
            "task_success": 0.6,
            "code_quality": 0.0,
            "efficiency": 1.0,
            "reliability": 0.5,
            "safety": 1.0,
        },
        "per_tier": {"smoke": 0.6, "standard": None, "stretch": None, "adversarial": None},
    }


def v1_task(task_id: str, passed: bool, **fields: Any) -> dict[str, Any]:
    """A task result exactly as assay 0.1 wrote it."""
    return {
        "id": task_id,
        "tier": "smoke",
        "title": f"title of {task_id}",
        "passed": passed,
        "telemetry": True,
        "cost_usd": 0.1,
        "duration_s": 30.0,
        "tests_failed": 0,
        "checks": [],
        **fields,
    }


def v1_record() -> dict[str, Any]:
    """An assay 0.1 run record of the packaged smoke tier: 3 pass, the readme task fails its
    assert, the rename task had no telemetry."""
    return {
        "schema_version": 1,
        "run_id": V1_ID,
        "assay_version": "0.1.0",
        "created_at": "2025-01-01T00:00:00.000000+00:00",
        "selection": {"tiers": ["smoke"], "goldens": "project + packaged", "telemetry": "tel"},
        "summary": {
            "tasks": 5,
            "passed": 3,
            "total_cost_usd": 0.4,
            "tiers": ["smoke"],
            "composite": composite(0.35),
        },
        "results": [
            v1_task("smoke-add-slugify-test", True),
            v1_task("smoke-fix-off-by-one", True),
            v1_task(
                "smoke-fix-readme-typo",
                False,
                checks=[{"op": "contains", "passed": False}],
                failure={
                    "category": "context_miss",
                    "details": "1 assert(s) on the final output failed",
                },
            ),
            v1_task("smoke-pin-dependency", True, checks=[{"op": "contains", "passed": True}]),
            v1_task(
                "smoke-rename-helper",
                False,
                telemetry=False,
                cost_usd=0.0,
                duration_s=0.0,
                failure={"category": "incomplete", "details": "no telemetry for this task"},
            ),
        ],
    }


def place(root: Path, record: dict[str, Any]) -> Path:
    """Put a record in .assay/runs/ the way assay 0.1 wrote it (compact, one line)."""
    path = runs_dir(root) / f"{record['run_id']}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, separators=(",", ":")) + "\n", encoding="utf-8")
    return path


def ok(result: tuple[int, str, str]) -> str:
    code, out, err = result
    assert code == 0, f"exit {code}\nstdout:\n{out}\nstderr:\n{err}"
    assert "Traceback" not in err
    return out


# ---------------------------------------------------------------------------- the version


def test_run_records_and_documents_share_one_schema_version() -> None:
    assert results.SCHEMA_VERSION == 2


def test_a_saved_record_leads_with_the_schema_version(tmp_path: Path) -> None:
    run_id = save_run(tmp_path, {"kind": "agent", "results": [], "summary": {}})
    text = (runs_dir(tmp_path) / f"{run_id}.json").read_text(encoding="utf-8")
    assert text.startswith('{"schema_version":2,')
    assert load_run(tmp_path)["schema_version"] == 2


@pytest.mark.parametrize("version", [0, 3, "2", None, "missing"])
def test_a_record_of_an_unknown_version_is_refused(tmp_path: Path, version: Any) -> None:
    record: dict[str, Any] = {"run_id": V1_ID, "summary": {}}
    if version != "missing":
        record["schema_version"] = version
    path = place(tmp_path, record)
    with pytest.raises(RunStoreError) as info:
        load_run(tmp_path)
    assert info.value.source == str(path)
    assert info.value.field == "schema_version"


# ------------------------------------------------------------ a v1 record: refused, not upgraded

OLD = (
    "field 'schema_version': a run record of schema version 1, written by an older assay, which "
    "this one no longer reads: move it out of .assay/runs/ or delete it"
)


def one_error_line(result: tuple[int, str, str], path: Path) -> str:
    code, out, err = result
    assert (code, out) == (1, "")
    assert "Traceback" not in err
    (line,) = err.splitlines()
    assert line == f"assay: error: {path}: {OLD}"
    return line


def test_a_v1_record_is_refused_naming_the_file_and_its_old_schema(tmp_path: Path) -> None:
    path = place(tmp_path, v1_record())
    before = path.read_bytes()
    with pytest.raises(RunStoreError) as info:
        load_run(tmp_path)
    assert (info.value.source, info.value.field) == (str(path), "schema_version")
    assert str(info.value) == f"{path}: {OLD}"
    assert path.read_bytes() == before  # never rewritten


@pytest.mark.parametrize("command", [["report"], ["report", "--json"], ["failures"]])
def test_report_and_failures_refuse_a_v1_record_in_one_line(
    cli: CliRunner, tmp_path: Path, command: list[str]
) -> None:
    path = place(tmp_path, v1_record())
    one_error_line(cli(*command), path.resolve())
    one_error_line(cli(*command, "--run", V1_ID), path.resolve())


def test_a_damaged_v1_record_is_refused_the_same_way(cli: CliRunner, tmp_path: Path) -> None:
    record = v1_record()
    del record["results"][0]["id"]
    path = place(tmp_path, record)
    one_error_line(cli("report"), path.resolve())


def test_runs_list_skips_a_v1_record_with_a_warning(cli: CliRunner, tmp_path: Path) -> None:
    path = place(tmp_path, v1_record())
    smoke_telemetry(tmp_path / "tel")
    ok(cli("bench", "--telemetry", "tel", "--tier", "smoke"))
    code, out, err = cli("runs", "list", "--json")
    assert code == 0, err
    (row,) = json.loads(out)["runs"]
    assert row["run_id"] != V1_ID and row["kind"] == "agent"
    assert err == f"assay: warning: skipped {V1_ID}: {path.resolve()}: {OLD}\n"


def test_compare_looks_past_a_v1_record(cli: CliRunner, tmp_path: Path) -> None:
    path = place(tmp_path, v1_record())
    assert previous_run(tmp_path) is None
    smoke_telemetry(tmp_path / "tel")
    document = json.loads(
        ok(cli("bench", "--telemetry", "tel", "--tier", "smoke", "--json", "--compare"))
    )
    # The run is scored and saved; there is no run of this assay's schema to compare with.
    assert "compare" not in document
    assert document["run_id"] != V1_ID
    assert sorted(p.stem for p in runs_dir(tmp_path).iterdir()) == [V1_ID, document["run_id"]]
    # The next run compares with that one, past the v1 record.
    second = json.loads(
        ok(cli("bench", "--telemetry", "tel", "--tier", "smoke", "--json", "--compare"))
    )
    assert second["compare"]["previous_run"] == document["run_id"]
    assert json.loads(path.read_text())["schema_version"] == 1


def test_a_record_with_no_summary_is_an_error_naming_the_file(tmp_path: Path) -> None:
    path = place(tmp_path, {"schema_version": 2, "run_id": V1_ID, "results": []})
    with pytest.raises(RunStoreError, match="no summary") as info:
        load_run(tmp_path)
    assert info.value.source == str(path)
