"""The record family: the baseline, a saved run and a shard part are read by one reader, with
one schema version and the same lines for the same problems, and each writer's record reads back.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from assay.agent import load_run
from assay.errors import BaselineError
from assay.gate import BASELINE, RUN_RECORD, load_baseline, read_shards, save_run
from assay.gate._partial import SHARD_PART
from assay.results import SCHEMA_VERSION, RecordType

MEMBERS = {"baseline": BASELINE, "run record": RUN_RECORD, "shard part": SHARD_PART}


def _write(path: Path, value: Any) -> Path:
    path.write_text(json.dumps(value), encoding="utf-8")
    return path


@pytest.mark.parametrize("name", MEMBERS)
def test_every_member_refuses_a_value_that_is_no_object(tmp_path: Path, name: str) -> None:
    member = MEMBERS[name]
    path = _write(tmp_path / "r.json", [1, 2])
    with pytest.raises(member.error) as info:
        member.read(path)
    assert str(info.value) == f"{path}: not a {name}: it must be a JSON object"


@pytest.mark.parametrize("name", MEMBERS)
@pytest.mark.parametrize("version", [3, "2", True, 2.5, None])
def test_every_member_refuses_an_unknown_version_in_one_form(
    tmp_path: Path, name: str, version: Any
) -> None:
    member = MEMBERS[name]
    record = {} if version is None else {"schema_version": version}
    path = _write(tmp_path / "r.json", record)
    with pytest.raises(member.error) as info:
        member.read(path)
    assert str(info.value) == (
        f"{path}: field 'schema_version': unknown {name} schema version {version!r} "
        f"(this assay reads {SCHEMA_VERSION})"
    )


@pytest.mark.parametrize("member", [BASELINE, RUN_RECORD], ids=["baseline", "run record"])
def test_a_version_an_older_assay_wrote_is_told_its_fix(tmp_path: Path, member: RecordType) -> None:
    path = _write(tmp_path / "r.json", {"schema_version": 1})
    with pytest.raises(member.error) as info:
        member.read(path)
    assert str(info.value) == f"{path}: field 'schema_version': {member.retired[1]}"
    assert "older assay" in member.retired[1] or "assay 0.1" in member.retired[1]


def test_a_shard_part_of_another_schema_version_is_refused_before_its_fields(
    tmp_path: Path,
) -> None:
    # A part is a --json document: another assay's could differ anywhere, so its version is
    # what the merge names, not the first field that reads differently.
    part = {"schema_version": 3, "results": "not a list", "partial": {"version": 1}}
    path = _write(tmp_path / "part.json", part)
    with pytest.raises(SHARD_PART.error, match="unknown shard part schema version 3"):
        read_shards([path])


def test_the_baseline_reads_back_what_it_writes(tmp_path: Path) -> None:
    path = tmp_path / "assay-baseline.json"
    record = {"schema_version": SCHEMA_VERSION, "kind": "gate", "summary": {}, "goldens": {}}
    BASELINE.write(path, record)
    assert load_baseline(path) == record
    assert path.read_text(encoding="utf-8").startswith('{\n  "schema_version": 2')  # reviewed


def test_a_saved_run_reads_back_what_it_writes(tmp_path: Path) -> None:
    run_id = save_run(tmp_path, {"kind": "agent", "results": [], "summary": {"total": 0}})
    text = (tmp_path / ".assay" / "runs" / f"{run_id}.json").read_text(encoding="utf-8")
    assert "\n" not in text.strip()  # one line: saved on every run
    assert load_run(tmp_path)["summary"] == {"total": 0}


def test_a_saved_run_without_a_summary_names_the_field(tmp_path: Path) -> None:
    path = _write(tmp_path / "r.json", {"schema_version": SCHEMA_VERSION, "results": []})
    with pytest.raises(RUN_RECORD.error) as info:
        RUN_RECORD.read(path)
    assert str(info.value) == f"{path}: field 'summary': not a run record: no summary"


def test_replacing_a_damaged_baseline_is_no_traceback(tmp_path: Path) -> None:
    # Writing a baseline that decides nothing reads the old one to refuse losing its decisions;
    # a damaged old one (entries that are no objects) crashed that read with AttributeError.
    from assay.gate import _baseline

    path = _write(tmp_path / "assay-baseline.json", {"schema_version": 2, "goldens": {"c": 5}})
    _baseline.write(path, {"schema_version": 2, "goldens": {}})
    assert json.loads(path.read_text(encoding="utf-8"))["goldens"] == {}


def test_a_baseline_that_decided_goldens_is_still_not_replaced_by_one_deciding_none(
    tmp_path: Path,
) -> None:
    entry = {
        "tier": "smoke",
        "status": "pass",
        "passed": True,
        "score": 1.0,
        "decided_by": "asserts",
    }
    old = {"schema_version": 2, "goldens": {"default": {"g": {**entry, "fingerprint": None}}}}
    path = _write(tmp_path / "assay-baseline.json", old)
    from assay.gate import _baseline

    with pytest.raises(BaselineError, match="refusing to replace a baseline that decided 1"):
        _baseline.write(path, {"schema_version": 2, "goldens": {}})
