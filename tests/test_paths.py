"""Reports name the project's files relative to it: a CI runner's absolute paths never leak into
Markdown, JUnit, HTML or the text report; a file outside the project keeps its path."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.paths import shown_path
from tests.helpers.cli import run_cli


def test_a_path_inside_the_working_directory_is_shown_relative(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert shown_path(tmp_path / "sub" / "b.json") == "sub/b.json"
    assert shown_path("already/relative.json") == "already/relative.json"
    outside = tmp_path.parent / "elsewhere.json"
    assert shown_path(outside) == str(outside)


@pytest.mark.parametrize("fmt", ["text", "markdown", "junit", "html", "json"])
def test_no_report_holds_the_projects_absolute_path(tmp_path: Path, fmt: str) -> None:
    code, _, err = run_cli(["gate", "--example", "-w"], tmp_path)
    assert code == 0, err
    code, out, err = run_cli(["gate", "--example", "-c", "-f", fmt], tmp_path)
    assert code == 0, err
    assert "assay-baseline.json" in out
    assert str(tmp_path) not in out
