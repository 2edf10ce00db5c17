"""Agent-run telemetry: zero values, folder vs JSONL, and every validation error naming the
file and the field at fault (``TelemetryError.source`` / ``.field``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from assay.agent import Telemetry, load_telemetry, parse_record
from assay.errors import AssayError, TelemetryError

SRC = "telemetry/t.json"
KNOWN = {"a", "b", "c"}


def write(path: Path, value: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(value if isinstance(value, str) else json.dumps(value), encoding="utf-8")
    return path


def jsonl(path: Path, rows: list[Any]) -> Path:
    lines = [r if isinstance(r, str) else json.dumps(r) for r in rows]
    return write(path, "\n".join(lines) + "\n")


FULL: dict[str, Any] = {
    "task_id": "a",
    "duration_s": 12.5,
    "turns_used": 7,
    "files_read": ["src/a.py", "README.md"],
    "files_modified": ["src/a.py"],
    "input_tokens": 1200,
    "output_tokens": 340,
    "cost_usd": 0.03,
    "tests_run": 10,
    "tests_passed": 9,
    "tests_failed": 1,
    "completion_signals_checked": 2,
    "completion_signals_passed": 1,
    "crashes": 1,
    "orphans": 2,
    "merge_conflicts": 3,
    "compile_error": True,
    "judge": {"correctness": 4, "style": 3.5, "test_coverage": 2, "safety": 5},
    "output": "the final answer",
}


# ---------------------------------------------------------------------------- zero values


def test_only_task_id_is_required_everything_else_is_zero() -> None:
    rec = parse_record({"task_id": "a"}, SRC)
    assert rec.task_id == "a"
    assert rec.source == SRC
    assert rec.duration_s == 0.0
    assert rec.cost_usd == 0.0
    for name in (
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
    ):
        assert getattr(rec, name) == 0, name
    assert rec.compile_error is False
    assert rec.files_read == ()
    assert rec.files_modified == ()
    assert rec.judge is None
    assert rec.output == ""
    assert rec.attestation is None
    assert dict(rec.extra) == {}


def test_null_fields_take_zero_values() -> None:
    rec = parse_record(
        {
            "task_id": "a",
            "tests_failed": None,
            "cost_usd": None,
            "files_modified": None,
            "compile_error": None,
            "judge": None,
            "output": None,
        },
        SRC,
    )
    assert rec.tests_failed == 0
    assert rec.cost_usd == 0.0
    assert rec.files_modified == ()
    assert rec.compile_error is False
    assert rec.judge is None
    assert rec.output == ""


def test_every_field_is_read() -> None:
    rec = parse_record(FULL, SRC)
    assert rec == Telemetry(
        task_id="a",
        source=SRC,
        duration_s=12.5,
        cost_usd=0.03,
        turns_used=7,
        input_tokens=1200,
        output_tokens=340,
        tests_run=10,
        tests_passed=9,
        tests_failed=1,
        completion_signals_checked=2,
        completion_signals_passed=1,
        crashes=1,
        orphans=2,
        merge_conflicts=3,
        compile_error=True,
        files_read=("src/a.py", "README.md"),
        files_modified=("src/a.py",),
        judge={"correctness": 4.0, "style": 3.5, "test_coverage": 2.0, "safety": 5.0},
        output="the final answer",
    )


def test_integral_numbers_are_accepted_and_typed() -> None:
    rec = parse_record({"task_id": "a", "tests_failed": 2.0, "duration_s": 3, "cost_usd": 1}, SRC)
    assert rec.tests_failed == 2 and isinstance(rec.tests_failed, int)
    assert rec.duration_s == 3.0 and isinstance(rec.duration_s, float)
    assert rec.cost_usd == 1.0 and isinstance(rec.cost_usd, float)


def test_structured_output_is_kept() -> None:
    rec = parse_record({"task_id": "a", "output": {"answer": [1, 2]}}, SRC)
    assert rec.output == {"answer": [1, 2]}


def test_extension_fields_are_kept_apart() -> None:
    rec = parse_record({"task_id": "a", "x_model": "m-1", "x_run": {"n": 1}}, SRC)
    assert dict(rec.extra) == {"x_model": "m-1", "x_run": {"n": 1}}


def test_attestation_id() -> None:
    rec = parse_record({"task_id": "a", "attestation": "sha256:abc"}, SRC)
    assert rec.attestation == "sha256:abc"


def test_judge_scores_out_of_range_are_accepted_for_clamping() -> None:
    rec = parse_record({"task_id": "a", "judge": {"correctness": 9, "style": -1}}, SRC)
    assert rec.judge == {"correctness": 9.0, "style": -1.0}


# ---------------------------------------------------------------- retired token field names


@pytest.mark.parametrize(
    ("old", "new"), [("tokens_input", "input_tokens"), ("tokens_output", "output_tokens")]
)
@pytest.mark.parametrize("value", [77, -1, 1.5, "3", True])
def test_old_token_names_are_an_error_naming_the_new_one(old: str, new: str, value: Any) -> None:
    with pytest.raises(TelemetryError) as info:
        parse_record({"task_id": "a", old: value}, SRC)
    assert_error(info.value, SRC, old)
    assert info.value.message == f"renamed to {new!r} (the old name is no longer read)"
    assert getattr(parse_record({"task_id": "a", new: 77}, SRC), new) == 77


def test_a_record_of_assay_0_1_is_refused_at_its_first_old_name() -> None:
    old = {**FULL, "tokens_input": 1200, "tokens_output": 340}
    del old["input_tokens"], old["output_tokens"]
    with pytest.raises(TelemetryError) as info:
        parse_record(old, SRC)
    assert_error(info.value, SRC, "tokens_input")


def test_old_token_names_in_jsonl(tmp_path: Path) -> None:
    path = jsonl(tmp_path / "tel.jsonl", [{"task_id": "a", "tokens_input": 3, "tokens_output": 4}])
    with pytest.raises(TelemetryError) as info:
        load_telemetry(path, KNOWN)
    assert_error(info.value, f"{path}:1", "tokens_input")
    assert "'input_tokens'" in info.value.message


# ----------------------------------------------------------------------- validation errors


def assert_error(exc: TelemetryError, source: str, field: str | None) -> None:
    assert isinstance(exc, AssayError)
    assert exc.source == source
    assert exc.field == field
    assert source in str(exc)
    if field is not None:
        assert f"field '{field}'" in str(exc)


COUNTS = [
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
]


@pytest.mark.parametrize("name", COUNTS)
@pytest.mark.parametrize("bad", [-1, 1.5, "3", True, [1], {"n": 1}])
def test_counts_must_be_non_negative_integers(name: str, bad: Any) -> None:
    with pytest.raises(TelemetryError) as info:
        parse_record({"task_id": "a", name: bad}, SRC)
    assert_error(info.value, SRC, name)


@pytest.mark.parametrize("name", ["duration_s", "cost_usd"])
@pytest.mark.parametrize("bad", [-0.01, -5, "1.0", False, float("nan"), float("inf"), [1]])
def test_amounts_must_be_non_negative_finite_numbers(name: str, bad: Any) -> None:
    with pytest.raises(TelemetryError) as info:
        parse_record({"task_id": "a", name: bad}, SRC)
    assert_error(info.value, SRC, name)


@pytest.mark.parametrize("name", ["files_read", "files_modified"])
@pytest.mark.parametrize("bad", ["src/a.py", ["src/a.py", 3], {"a": 1}, 1])
def test_path_lists_must_be_lists_of_strings(name: str, bad: Any) -> None:
    with pytest.raises(TelemetryError) as info:
        parse_record({"task_id": "a", name: bad}, SRC)
    assert_error(info.value, SRC, name)


@pytest.mark.parametrize("bad", [1, 0, "true", "yes"])
def test_compile_error_must_be_a_boolean(bad: Any) -> None:
    with pytest.raises(TelemetryError) as info:
        parse_record({"task_id": "a", "compile_error": bad}, SRC)
    assert_error(info.value, SRC, "compile_error")


@pytest.mark.parametrize("bad", [4, "good", [4, 4, 4, 4]])
def test_judge_must_be_an_object(bad: Any) -> None:
    with pytest.raises(TelemetryError) as info:
        parse_record({"task_id": "a", "judge": bad}, SRC)
    assert_error(info.value, SRC, "judge")


def test_judge_unknown_score() -> None:
    with pytest.raises(TelemetryError) as info:
        parse_record({"task_id": "a", "judge": {"correctness": 4, "elegance": 5}}, SRC)
    assert_error(info.value, SRC, "judge.elegance")


@pytest.mark.parametrize("bad", ["4", True, None, float("nan")])
def test_judge_scores_must_be_numbers(bad: Any) -> None:
    with pytest.raises(TelemetryError) as info:
        parse_record({"task_id": "a", "judge": {"style": bad}}, SRC)
    assert_error(info.value, SRC, "judge.style")


@pytest.mark.parametrize("bad", ["abc", "md5:abc", 12])
def test_attestation_must_be_a_sha256_id(bad: Any) -> None:
    with pytest.raises(TelemetryError) as info:
        parse_record({"task_id": "a", "attestation": bad}, SRC)
    assert_error(info.value, SRC, "attestation")


@pytest.mark.parametrize("data", [{}, {"task_id": ""}, {"task_id": 3}, {"task_id": None}])
def test_task_id_is_required(data: dict[str, Any]) -> None:
    with pytest.raises(TelemetryError) as info:
        parse_record({**data, "tests_failed": 0}, SRC)
    assert_error(info.value, SRC, "task_id")


@pytest.mark.parametrize("data", [[{"task_id": "a"}], "a", 3, None])
def test_record_must_be_an_object(data: Any) -> None:
    with pytest.raises(TelemetryError) as info:
        parse_record(data, SRC)
    assert_error(info.value, SRC, None)


@pytest.mark.parametrize("name", ["test_failed", "cost", "Task_ID", "xmodel", "judge_score"])
def test_unknown_fields_are_errors(name: str) -> None:
    with pytest.raises(TelemetryError) as info:
        parse_record({"task_id": "a", name: 1}, SRC)
    assert_error(info.value, SRC, name)
    assert "x_" in info.value.message


# -------------------------------------------------------------------------- folder of files


def test_folder_of_task_files(tmp_path: Path) -> None:
    folder = tmp_path / "tel"
    write(folder / "a.json", {**FULL, "task_id": "a"})
    write(folder / "b.json", {"task_id": "b", "cost_usd": 0.5})
    records = load_telemetry(folder, KNOWN)
    assert sorted(records) == ["a", "b"]
    assert records["a"] == parse_record(FULL, str(folder / "a.json"))
    assert records["a"].source == str(folder / "a.json")
    assert records["b"].cost_usd == 0.5
    assert records["b"].tests_failed == 0


def test_folder_skips_hidden_underscored_and_non_json_files(tmp_path: Path) -> None:
    folder = tmp_path / "tel"
    write(folder / "a.json", {"task_id": "a"})
    write(folder / ".b.json", "not json at all")
    write(folder / "_c.json", {"task_id": "zzz"})
    write(folder / "notes.txt", "hello")
    assert list(load_telemetry(folder, KNOWN)) == ["a"]


def test_empty_folder_has_no_records(tmp_path: Path) -> None:
    (tmp_path / "tel").mkdir()
    assert load_telemetry(tmp_path / "tel", KNOWN) == {}


def test_folder_file_name_must_match_the_task_id(tmp_path: Path) -> None:
    path = write(tmp_path / "tel" / "a.json", {"task_id": "b"})
    with pytest.raises(TelemetryError) as info:
        load_telemetry(tmp_path / "tel", KNOWN)
    assert_error(info.value, str(path), "task_id")
    assert "file name" in info.value.message


def test_folder_invalid_json_names_the_file(tmp_path: Path) -> None:
    write(tmp_path / "tel" / "a.json", {"task_id": "a"})
    path = write(tmp_path / "tel" / "b.json", '{"task_id": "b",')
    with pytest.raises(TelemetryError) as info:
        load_telemetry(tmp_path / "tel", KNOWN)
    assert_error(info.value, str(path), None)
    assert "invalid JSON" in info.value.message


def test_folder_invalid_utf8_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "tel" / "a.json"
    path.parent.mkdir()
    path.write_bytes(b'{"task_id": "a", "output": "\xff"}')
    with pytest.raises(TelemetryError) as info:
        load_telemetry(tmp_path / "tel", KNOWN)
    assert_error(info.value, str(path), None)
    assert "UTF-8" in info.value.message


def test_folder_field_error_names_the_file_and_field(tmp_path: Path) -> None:
    path = write(tmp_path / "tel" / "c.json", {"task_id": "c", "orphans": -2})
    with pytest.raises(TelemetryError) as info:
        load_telemetry(tmp_path / "tel", KNOWN)
    assert_error(info.value, str(path), "orphans")


def test_folder_unknown_task_id(tmp_path: Path) -> None:
    path = write(tmp_path / "tel" / "nope.json", {"task_id": "nope"})
    with pytest.raises(TelemetryError) as info:
        load_telemetry(tmp_path / "tel", KNOWN)
    assert_error(info.value, str(path), "task_id")
    assert "'nope'" in info.value.message


# -------------------------------------------------------------------------------- JSONL


def test_jsonl_rows(tmp_path: Path) -> None:
    path = jsonl(tmp_path / "tel.jsonl", [FULL, "", "   ", {"task_id": "c", "crashes": 2}])
    records = load_telemetry(path, KNOWN)
    assert sorted(records) == ["a", "c"]
    assert records["a"] == parse_record(FULL, f"{path}:1")
    assert records["a"].source == f"{path}:1"
    assert records["c"].source == f"{path}:4"
    assert records["c"].crashes == 2


def test_jsonl_of_any_file_name(tmp_path: Path) -> None:
    path = jsonl(tmp_path / "run.log", [{"task_id": "b"}])
    assert list(load_telemetry(path, KNOWN)) == ["b"]


def test_jsonl_folder_and_jsonl_agree(tmp_path: Path) -> None:
    rows = [{"task_id": "a", "cost_usd": 0.1, "tests_failed": 1}, {"task_id": "b", "turns_used": 4}]
    for row in rows:
        write(tmp_path / "tel" / f"{row['task_id']}.json", row)
    from_folder = load_telemetry(tmp_path / "tel", KNOWN)
    from_jsonl = load_telemetry(jsonl(tmp_path / "tel.jsonl", rows), KNOWN)
    assert {k: (v.cost_usd, v.tests_failed, v.turns_used) for k, v in from_folder.items()} == {
        k: (v.cost_usd, v.tests_failed, v.turns_used) for k, v in from_jsonl.items()
    }


def test_jsonl_duplicate_task_names_both_lines(tmp_path: Path) -> None:
    path = jsonl(tmp_path / "tel.jsonl", [{"task_id": "a"}, {"task_id": "b"}, {"task_id": "a"}])
    with pytest.raises(TelemetryError) as info:
        load_telemetry(path, KNOWN)
    assert_error(info.value, f"{path}:3", "task_id")
    assert "duplicate" in info.value.message
    assert f"{path}:1" in info.value.message


def test_jsonl_unknown_task_id(tmp_path: Path) -> None:
    path = jsonl(tmp_path / "tel.jsonl", [{"task_id": "a"}, {"task_id": "ghost"}])
    with pytest.raises(TelemetryError) as info:
        load_telemetry(path, KNOWN)
    assert_error(info.value, f"{path}:2", "task_id")
    assert "'ghost'" in info.value.message


def test_jsonl_field_error_names_the_line_and_field(tmp_path: Path) -> None:
    path = jsonl(tmp_path / "tel.jsonl", [{"task_id": "a"}, {"task_id": "b", "cost_usd": "free"}])
    with pytest.raises(TelemetryError) as info:
        load_telemetry(path, KNOWN)
    assert_error(info.value, f"{path}:2", "cost_usd")


def test_jsonl_unknown_field(tmp_path: Path) -> None:
    path = jsonl(tmp_path / "tel.jsonl", [{"task_id": "a", "test_failed": 1}])
    with pytest.raises(TelemetryError) as info:
        load_telemetry(path, KNOWN)
    assert_error(info.value, f"{path}:1", "test_failed")


def test_jsonl_extension_field_is_fine(tmp_path: Path) -> None:
    path = jsonl(tmp_path / "tel.jsonl", [{"task_id": "a", "x_anything": [1, "two"]}])
    assert dict(load_telemetry(path, KNOWN)["a"].extra) == {"x_anything": [1, "two"]}


def test_jsonl_invalid_json_names_the_line(tmp_path: Path) -> None:
    path = jsonl(tmp_path / "tel.jsonl", [{"task_id": "a"}, "{oops"])
    with pytest.raises(TelemetryError) as info:
        load_telemetry(path, KNOWN)
    assert_error(info.value, f"{path}:2", None)
    assert "invalid JSON" in info.value.message


def test_jsonl_row_must_be_an_object(tmp_path: Path) -> None:
    path = jsonl(tmp_path / "tel.jsonl", ["[1, 2]"])
    with pytest.raises(TelemetryError) as info:
        load_telemetry(path, KNOWN)
    assert_error(info.value, f"{path}:1", None)


def test_jsonl_invalid_utf8_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "tel.jsonl"
    path.write_bytes(b'{"task_id": "a"}\n{"task_id": "b", "output": "\xfe"}\n')
    with pytest.raises(TelemetryError) as info:
        load_telemetry(path, KNOWN)
    assert_error(info.value, f"{path}:2", None)
    assert "UTF-8" in info.value.message


def test_missing_path(tmp_path: Path) -> None:
    with pytest.raises(TelemetryError) as info:
        load_telemetry(tmp_path / "nowhere", KNOWN)
    assert_error(info.value, str(tmp_path / "nowhere"), None)
    assert "not found" in info.value.message
