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
    # A project of its own (goldens, outputs, baseline under tmp_path), one golden failing.
    code, _, err = run_cli(["init", "p"], tmp_path)
    assert code == 0, err
    project = tmp_path / "p"
    code, _, err = run_cli(["gate", "--outputs", "outputs.json", "-w"], project)
    assert code == 0, err
    outputs = project / "outputs.json"
    outputs.write_text(outputs.read_text().replace("30 days", "3 days"), encoding="utf-8")
    code, out, err = run_cli(["gate", "--outputs", "outputs.json", "-c", "-f", fmt], project)
    assert code == 2, err
    assert "assay-baseline.json" in out
    assert str(tmp_path) not in out
