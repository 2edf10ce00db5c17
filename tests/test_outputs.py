"""Candidate outputs files: JSON maps, per-candidate maps, JSONL rows, and their errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.errors import AssayError, OutputsError
from assay.models._static import load_outputs
from assay.results import DEFAULT_CANDIDATE


def write_json(path: Path, data: object) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def write_jsonl(path: Path, rows: list[object]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_default_candidate_name() -> None:
    assert DEFAULT_CANDIDATE == "default"


def test_single_map(tmp_path: Path) -> None:
    path = write_json(tmp_path / "out.json", {"g1": "hello", "g2": "world"})
    assert load_outputs(path, ["g1", "g2"]) == {"default": {"g1": "hello", "g2": "world"}}


def test_single_map_accepts_str_path(tmp_path: Path) -> None:
    path = write_json(tmp_path / "out.json", {"g1": "hello"})
    assert load_outputs(str(path), {"g1"}) == {"default": {"g1": "hello"}}


def test_non_string_outputs_kept_as_json_values(tmp_path: Path) -> None:
    data = {
        "obj": {"answer": 42, "nested": {"k": [1, 2]}},
        "list": [1, "two", None],
        "num": 3.5,
        "int": 7,
        "bool": False,
        "null": None,
        "text": "plain",
    }
    path = write_json(tmp_path / "out.json", data)
    out = load_outputs(path, list(data))
    assert out == {"default": data}
    assert out["default"]["int"] == 7
    assert isinstance(out["default"]["int"], int)
    assert out["default"]["bool"] is False
    assert out["default"]["null"] is None


def test_per_candidate_map(tmp_path: Path) -> None:
    data = {"brief": {"g1": "a", "g2": "b"}, "verbose": {"g1": "aaa", "g2": {"x": 1}}}
    path = write_json(tmp_path / "out.json", data)
    assert load_outputs(path, ["g1", "g2"]) == data


def test_per_candidate_map_without_golden_ids(tmp_path: Path) -> None:
    data = {"brief": {"g1": "a"}, "verbose": {"g1": "b"}}
    path = write_json(tmp_path / "out.json", data)
    assert load_outputs(path) == data


def test_single_map_of_object_outputs_keyed_by_golden_ids(tmp_path: Path) -> None:
    data = {"g1": {"answer": "a"}, "g2": {"answer": "b"}}
    path = write_json(tmp_path / "out.json", data)
    assert load_outputs(path, ["g1", "g2", "g3"]) == {"default": data}


def test_one_golden_id_key_is_enough_for_single_candidate(tmp_path: Path) -> None:
    data = {"g1": {"answer": "a"}, "other": {"answer": "b"}}
    path = write_json(tmp_path / "out.json", data)
    assert load_outputs(path, ["g1"]) == {"default": data}


def test_map_with_a_non_object_value_is_single_candidate(tmp_path: Path) -> None:
    data = {"x": {"g1": "a"}, "y": "text"}
    path = write_json(tmp_path / "out.json", data)
    assert load_outputs(path, ["g1"]) == {"default": data}


def test_empty_object(tmp_path: Path) -> None:
    path = write_json(tmp_path / "out.json", {})
    assert load_outputs(path, ["g1"]) == {"default": {}}


def test_jsonl_rows(tmp_path: Path) -> None:
    path = tmp_path / "out.jsonl"
    path.write_text(
        json.dumps({"id": "g1", "output": "a"})
        + "\n\n"
        + json.dumps({"id": "g2", "output": {"k": [1]}, "candidate": "alt"})
        + "\n"
        + json.dumps({"id": "g1", "output": None, "candidate": "alt"})
        + "\n"
        + json.dumps({"id": "g2", "output": 5, "candidate": "default"})
        + "\n",
        encoding="utf-8",
    )
    assert load_outputs(path, ["g1", "g2"]) == {
        "default": {"g1": "a", "g2": 5},
        "alt": {"g2": {"k": [1]}, "g1": None},
    }


def test_jsonl_duplicate_candidate_and_id(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "out.jsonl",
        [
            {"id": "g1", "output": "a"},
            {"id": "g1", "output": "b", "candidate": "alt"},
            {"id": "g1", "output": "c", "candidate": "default"},
        ],
    )
    with pytest.raises(OutputsError) as excinfo:
        load_outputs(path, ["g1"])
    assert f"{path}:3" in str(excinfo.value)
    assert "g1" in str(excinfo.value)


def test_jsonl_invalid_line(tmp_path: Path) -> None:
    path = tmp_path / "out.jsonl"
    path.write_text('{"id": "g1", "output": "a"}\n{not json}\n', encoding="utf-8")
    with pytest.raises(OutputsError) as excinfo:
        load_outputs(path, ["g1"])
    assert f"{path}:2" in str(excinfo.value)


@pytest.mark.parametrize(
    ("row", "field"),
    [
        ({"output": "a"}, "id"),
        ({"id": 3, "output": "a"}, "id"),
        ({"id": "", "output": "a"}, "id"),
        ({"id": "g1"}, "output"),
        ({"id": "g1", "output": "a", "candidate": 5}, "candidate"),
        ({"id": "g1", "output": "a", "candidate": ""}, "candidate"),
    ],
)
def test_jsonl_bad_rows(tmp_path: Path, row: dict[str, object], field: str) -> None:
    path = write_jsonl(tmp_path / "out.jsonl", [{"id": "g0", "output": "ok"}, row])
    with pytest.raises(OutputsError) as excinfo:
        load_outputs(path, ["g0", "g1"])
    assert excinfo.value.field == field
    assert f"{path}:2" in str(excinfo.value)


def test_jsonl_row_not_an_object(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "out.jsonl", [["g1", "a"]])
    with pytest.raises(OutputsError) as excinfo:
        load_outputs(path, ["g1"])
    assert f"{path}:1" in str(excinfo.value)


def test_jsonl_bom_tolerated(tmp_path: Path) -> None:
    path = tmp_path / "out.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"id": "g1", "output": "a"}\n')
    assert load_outputs(path, ["g1"]) == {"default": {"g1": "a"}}


def test_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "nope.json"
    with pytest.raises(OutputsError) as excinfo:
        load_outputs(path, ["g1"])
    assert str(path) in str(excinfo.value)
    assert "not found" in str(excinfo.value)


def test_folder_is_error(tmp_path: Path) -> None:
    folder = tmp_path / "outputs.json"
    folder.mkdir()
    with pytest.raises(OutputsError) as excinfo:
        load_outputs(folder, ["g1"])
    assert str(folder) in str(excinfo.value)


def test_invalid_json(tmp_path: Path) -> None:
    path = tmp_path / "out.json"
    path.write_text('{"g1": "a",', encoding="utf-8")
    with pytest.raises(OutputsError) as excinfo:
        load_outputs(path, ["g1"])
    assert str(path) in str(excinfo.value)
    assert "invalid JSON" in str(excinfo.value)


def test_empty_file_is_invalid_json(tmp_path: Path) -> None:
    path = tmp_path / "out.json"
    path.write_text("", encoding="utf-8")
    with pytest.raises(OutputsError) as excinfo:
        load_outputs(path, ["g1"])
    assert str(path) in str(excinfo.value)


@pytest.mark.parametrize("data", [["a", "b"], "text", 3, None])
def test_not_an_object(tmp_path: Path, data: object) -> None:
    path = write_json(tmp_path / "out.json", data)
    with pytest.raises(OutputsError) as excinfo:
        load_outputs(path, ["g1"])
    assert str(path) in str(excinfo.value)
    assert "object" in str(excinfo.value)


def test_non_utf8(tmp_path: Path) -> None:
    path = tmp_path / "out.json"
    path.write_bytes(b'{"g1": "caf\xe9"}')
    with pytest.raises(OutputsError) as excinfo:
        load_outputs(path, ["g1"])
    assert not isinstance(excinfo.value, UnicodeDecodeError)
    assert str(path) in str(excinfo.value)
    assert "UTF-8" in str(excinfo.value)


def test_non_utf8_jsonl(tmp_path: Path) -> None:
    path = tmp_path / "out.jsonl"
    path.write_bytes(b'{"id": "g1", "output": "caf\xe9"}\n')
    with pytest.raises(OutputsError) as excinfo:
        load_outputs(path, ["g1"])
    assert str(path) in str(excinfo.value)


def test_bom_tolerated(tmp_path: Path) -> None:
    path = tmp_path / "out.json"
    path.write_bytes(b'\xef\xbb\xbf{"g1": "caf\xc3\xa9"}')
    assert load_outputs(path, ["g1"]) == {"default": {"g1": "café"}}


def test_unicode_outputs(tmp_path: Path) -> None:
    data = {"g1": "日本語 ✓ \u2028 emoji 🎉"}
    path = tmp_path / "out.json"
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    assert load_outputs(path, ["g1"]) == {"default": data}


def test_large_output_loads_intact(tmp_path: Path) -> None:
    big = ("0123456789abcdef" * 65536) * 10  # 10 MiB
    assert len(big) == 10 * 1024 * 1024
    path = write_json(tmp_path / "out.json", {"g1": big, "g2": "small"})
    out = load_outputs(path, ["g1", "g2"])
    assert out["default"]["g1"] == big
    assert out["default"]["g2"] == "small"


def test_outputs_error_is_assay_error() -> None:
    assert issubclass(OutputsError, AssayError)
