"""Saved agent runs: the schema version they carry, and run records of assay 0.1 (schema version
1) read in today's shape, so ``assay report``, ``assay failures`` and ``--compare`` keep working
across the upgrade."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from assay import results
from assay.agent import RUN_SCHEMA_VERSION, load_run, previous_run, runs_dir, save_run
from assay.errors import RunStoreError
from assay.vocabulary import STATUSES
from tests.helpers.cli import CliRunner
from tests.helpers.telemetry import smoke_telemetry

V1_ID = "eval_run_20250101T000000_000000Z"
CHECK_KEYS = {"text", "op", "passed", "reason", "evidence"}
RESULT_KEYS = {"id", "tier", "candidate", "status", "passed", "score", "decided_by", "checks"}


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
    assert RUN_SCHEMA_VERSION == 2 == results.DOCUMENT_SCHEMA_VERSION


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


# ------------------------------------------------------------------- a v1 record, upgraded


def test_a_v1_record_reads_as_a_v2_results_document(tmp_path: Path) -> None:
    place(tmp_path, v1_record())
    document = load_run(tmp_path)
    assert document["schema_version"] == 2
    assert document["kind"] == "agent"
    assert document["run_id"] == V1_ID
    assert document["assay_version"] == "0.1.0"
    assert document["selection"]["tiers"] == ["smoke"]
    by_id = {r["id"]: r for r in document["results"]}
    for result in document["results"]:
        assert set(result) >= RESULT_KEYS
        assert result["candidate"] == "agent"
        for check in result["checks"]:
            assert set(check) == CHECK_KEYS
        # No v1 key is left at the top level of a result.
        assert not {"cost_usd", "duration_s", "tests_failed"} & set(result)
    passed = by_id["smoke-add-slugify-test"]
    assert (passed["status"], passed["passed"], passed["score"], passed["decided_by"]) == (
        "pass",
        True,
        1.0,
        "agent-telemetry",
    )
    assert passed["telemetry"] == {"cost_usd": 0.1, "duration_s": 30.0, "tests_failed": 0}
    assert passed["title"] == "title of smoke-add-slugify-test"
    failed = by_id["smoke-fix-readme-typo"]
    assert (failed["status"], failed["passed"], failed["score"]) == ("fail", False, 0.0)
    assert failed["decided_by"] == "agent-telemetry"
    assert failed["checks"] == [
        {"text": "contains", "op": "contains", "passed": False, "reason": None, "evidence": None}
    ]
    assert failed["failure"] == {
        "category": "context_miss",
        "details": "1 assert(s) on the final output failed",
    }
    missing = by_id["smoke-rename-helper"]
    assert (missing["status"], missing["passed"], missing["score"]) == ("no-output", False, 0.0)
    assert missing["decided_by"] is None
    assert "telemetry" not in missing
    assert missing["failure"]["category"] == "incomplete"

    summary = document["summary"]
    assert "tasks" not in summary and "passed" not in summary
    counts = {"pass": 3, "fail": 1, "needs-judge": 0, "no-output": 1, "error": 0}
    assert summary["total"] == 5
    assert summary["counts"] == counts
    assert list(summary["counts"]) == list(STATUSES)
    assert summary["pass_rate"] == pytest.approx(0.6)
    assert summary["mean_score"] == pytest.approx(0.6)
    assert summary["candidates"] == [
        {
            "candidate": "agent",
            "total": 5,
            "counts": counts,
            "pass_rate": pytest.approx(0.6),
            "mean_score": pytest.approx(0.6),
        }
    ]
    # What v1 stored besides is kept as it was.
    assert summary["composite"] == composite(0.35)
    assert summary["tiers"] == ["smoke"]
    assert summary["total_cost_usd"] == 0.4


def test_the_upgrade_does_not_rewrite_the_file(tmp_path: Path) -> None:
    path = place(tmp_path, v1_record())
    before = path.read_bytes()
    load_run(tmp_path)
    assert path.read_bytes() == before


def test_a_v1_record_is_the_previous_run(tmp_path: Path) -> None:
    place(tmp_path, v1_record())
    previous = previous_run(tmp_path)
    assert previous is not None
    assert previous["schema_version"] == 2 and previous["run_id"] == V1_ID


def test_assay_report_reads_a_v1_record(cli: CliRunner, tmp_path: Path) -> None:
    place(tmp_path, v1_record())
    document = json.loads(ok(cli("report", "--json")))
    assert document["schema_version"] == 2
    assert document["run_id"] == V1_ID
    assert document["summary"]["total"] == 5
    assert document["summary"]["counts"]["pass"] == 3
    assert document["summary"]["composite"]["score"] == 0.35
    text = ok(cli("report"))
    assert text.startswith(f"run {V1_ID} (")
    assert "score 0.350  (3/5 tasks passed, cost $0.40, tiers smoke)" in text


@pytest.mark.parametrize("fmt", ["markdown", "junit", "html"])
def test_every_report_format_reads_a_v1_record(cli: CliRunner, tmp_path: Path, fmt: str) -> None:
    place(tmp_path, v1_record())
    out = ok(cli("report", "--format", fmt))
    assert "smoke-fix-readme-typo" in out


def test_assay_failures_reads_a_v1_record(cli: CliRunner, tmp_path: Path) -> None:
    place(tmp_path, v1_record())
    table = json.loads(ok(cli("failures", "--json")))
    assert table["run_id"] == V1_ID
    assert table["failures"] == [
        {
            "id": "smoke-fix-readme-typo",
            "tier": "smoke",
            "category": "context_miss",
            "details": "1 assert(s) on the final output failed",
        },
        {
            "id": "smoke-rename-helper",
            "tier": "smoke",
            "category": "incomplete",
            "details": "no telemetry for this task",
        },
    ]
    assert table["counts"]["context_miss"] == 1
    assert table["counts"]["incomplete"] == 1
    assert sum(table["counts"].values()) == 2
    text = ok(cli("failures"))
    assert text.startswith(f"failures in run {V1_ID}: 2\n")


def test_compare_against_a_v1_record(cli: CliRunner, tmp_path: Path) -> None:
    place(tmp_path, v1_record())
    smoke_telemetry(tmp_path / "tel")
    document = json.loads(
        ok(cli("run", "--telemetry", "tel", "--tier", "smoke", "--json", "--compare"))
    )
    compare = document["compare"]
    assert compare["previous_run"] == V1_ID
    # Every smoke task passes now: 0.7 (see test_agent_benchmark) against the stored 0.35.
    assert compare["score"] == {
        "before": 0.35,
        "after": pytest.approx(0.7),
        "delta": pytest.approx(0.35),
    }
    assert compare["components"]["reliability"] == {
        "before": 0.5,
        "after": 1.0,
        "delta": pytest.approx(0.5),
    }
    assert compare["per_tier"]["smoke"]["before"] == 0.6
    assert compare["flipped"] == [
        {"id": "smoke-fix-readme-typo", "before": "fail", "after": "pass"},
        {"id": "smoke-rename-helper", "before": "fail", "after": "pass"},
    ]
    # The new run is saved as v2 next to the v1 record, which stays as it was.
    assert document["run_id"] != V1_ID
    saved = sorted(p.stem for p in runs_dir(tmp_path).iterdir())
    assert saved == [V1_ID, document["run_id"]]
    assert load_run(tmp_path)["run_id"] == document["run_id"]
    assert json.loads((runs_dir(tmp_path) / f"{V1_ID}.json").read_text())["schema_version"] == 1


def test_compare_text_against_a_v1_record(cli: CliRunner, tmp_path: Path) -> None:
    place(tmp_path, v1_record())
    smoke_telemetry(tmp_path / "tel")
    out = ok(cli("run", "--telemetry", "tel", "--tier", "smoke", "--compare", "--no-save"))
    assert f"compare with {V1_ID}: score 0.350 → 0.700 (+0.350)" in out
    assert "flipped smoke-fix-readme-typo: fail → pass" in out


def test_a_damaged_v1_record_is_an_error_naming_the_file(cli: CliRunner, tmp_path: Path) -> None:
    record = v1_record()
    del record["results"][0]["id"]
    path = place(tmp_path, record)
    code, out, err = cli("report")
    assert out == ""
    assert code == 1
    assert "Traceback" not in err
    assert str(Path(".assay") / "runs" / path.name) in err or str(path) in err


def test_a_record_with_no_summary_is_an_error_naming_the_file(tmp_path: Path) -> None:
    path = place(tmp_path, {"schema_version": 2, "run_id": V1_ID, "results": []})
    with pytest.raises(RunStoreError, match="no summary") as info:
        load_run(tmp_path)
    assert info.value.source == str(path)
