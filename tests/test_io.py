"""Atomic file writes: temp file, fsync, rename; never a half-written or leftover file."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from assay.io import atomic_create_text, atomic_write_text, dump_json


def names(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def boom(*args: Any, **kwargs: Any) -> None:
    raise OSError("simulated failure")


# --- atomic_write_text ------------------------------------------------------------------------


def test_write_creates_file(tmp_path: Path) -> None:
    path = tmp_path / "out.json"
    atomic_write_text(path, "hello\n")
    assert path.read_text(encoding="utf-8") == "hello\n"
    assert names(tmp_path) == ["out.json"]


def test_write_replaces_content(tmp_path: Path) -> None:
    path = tmp_path / "out.txt"
    path.write_text("old content that is longer than the new one\n", encoding="utf-8")
    atomic_write_text(path, "new\n")
    assert path.read_text(encoding="utf-8") == "new\n"
    assert names(tmp_path) == ["out.txt"]


def test_write_many_times_leaves_no_temp_files(tmp_path: Path) -> None:
    path = tmp_path / "out.txt"
    for i in range(20):
        atomic_write_text(path, f"version {i}\n")
    assert path.read_text(encoding="utf-8") == "version 19\n"
    assert names(tmp_path) == ["out.txt"]


def test_write_creates_parent_folders(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "c.txt"
    atomic_write_text(path, "deep")
    assert path.read_text(encoding="utf-8") == "deep"
    assert names(path.parent) == ["c.txt"]


def test_write_accepts_str_path(tmp_path: Path) -> None:
    path = tmp_path / "s.txt"
    atomic_write_text(str(path), "ok")  # type: ignore[arg-type]
    assert path.read_text(encoding="utf-8") == "ok"


def test_write_is_utf8_and_keeps_newlines(tmp_path: Path) -> None:
    path = tmp_path / "u.txt"
    text = "café ✓ 日本\nline2\r\nline3"
    atomic_write_text(path, text)
    assert path.read_bytes() == text.encode("utf-8")


def test_write_empty_text(tmp_path: Path) -> None:
    path = tmp_path / "empty.txt"
    path.write_text("something", encoding="utf-8")
    atomic_write_text(path, "")
    assert path.read_bytes() == b""


def test_write_large_text(tmp_path: Path) -> None:
    path = tmp_path / "big.txt"
    text = "x" * (5 * 1024 * 1024) + "end"
    atomic_write_text(path, text)
    assert path.read_text(encoding="utf-8") == text


def test_write_failure_at_rename_keeps_old_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "state.json"
    path.write_text('{"old": true}\n', encoding="utf-8")
    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError, match="simulated failure"):
        atomic_write_text(path, '{"new": true}\n')
    assert path.read_text(encoding="utf-8") == '{"old": true}\n'
    assert names(tmp_path) == ["state.json"]


def test_write_failure_at_fsync_keeps_old_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "state.json"
    path.write_text("old\n", encoding="utf-8")
    monkeypatch.setattr(os, "fsync", boom)
    with pytest.raises(OSError, match="simulated failure"):
        atomic_write_text(path, "new\n")
    assert path.read_text(encoding="utf-8") == "old\n"
    assert names(tmp_path) == ["state.json"]


def test_write_failure_when_no_old_file_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "state.json"
    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError):
        atomic_write_text(path, "new\n")
    assert names(tmp_path) == []


def test_write_interrupted_keeps_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "state.json"
    path.write_text("old\n", encoding="utf-8")

    def interrupt(*args: Any, **kwargs: Any) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", interrupt)
    with pytest.raises(KeyboardInterrupt):
        atomic_write_text(path, "new\n")
    assert path.read_text(encoding="utf-8") == "old\n"
    assert names(tmp_path) == ["state.json"]


def test_write_unencodable_text_keeps_old_file(tmp_path: Path) -> None:
    path = tmp_path / "state.txt"
    path.write_text("old\n", encoding="utf-8")
    with pytest.raises(UnicodeEncodeError):
        atomic_write_text(path, "lone surrogate \udc80")
    assert path.read_text(encoding="utf-8") == "old\n"
    assert names(tmp_path) == ["state.txt"]


# --- atomic_create_text ---------------------------------------------------------------------------


def test_create_new_file(tmp_path: Path) -> None:
    path = tmp_path / "runs" / "eval_run_1.json"
    assert atomic_create_text(path, "first\n") is True
    assert path.read_text(encoding="utf-8") == "first\n"
    assert names(path.parent) == ["eval_run_1.json"]


def test_create_refuses_to_overwrite(tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    path.write_text("original\n", encoding="utf-8")
    assert atomic_create_text(path, "intruder\n") is False
    assert path.read_text(encoding="utf-8") == "original\n"
    assert names(tmp_path) == ["run.json"]


def test_create_twice(tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    assert atomic_create_text(path, "one") is True
    assert atomic_create_text(path, "two") is False
    assert path.read_text(encoding="utf-8") == "one"
    assert names(tmp_path) == ["run.json"]


def test_create_failure_leaves_no_temp_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "run.json"
    monkeypatch.setattr(os, "fsync", boom)
    with pytest.raises(OSError, match="simulated failure"):
        atomic_create_text(path, "data")
    assert names(tmp_path) == []


def test_create_accepts_str_path(tmp_path: Path) -> None:
    path = tmp_path / "s.txt"
    assert atomic_create_text(str(path), "ok") is True  # type: ignore[arg-type]
    assert path.read_text(encoding="utf-8") == "ok"


# --- dump_json ----------------------------------------------------------------------------------


def test_dump_json_format() -> None:
    text = dump_json({"b": 1, "a": "café", "list": [1, 2]})
    assert text.endswith("}\n")
    assert "café" in text
    assert text.startswith('{\n  "b": 1,')
    assert json.loads(text) == {"b": 1, "a": "café", "list": [1, 2]}
