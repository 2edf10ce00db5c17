"""`assay report` / `assay failures` / agent `assay bench` in every --format, on a saved run."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.helpers.cli import CliRunner
from tests.helpers.telemetry import smoke_telemetry


@pytest.fixture
def saved_run(cli: CliRunner, tmp_path: Path) -> Path:
    tel = tmp_path / "tel"
    smoke_telemetry(tel, {"smoke-fix-readme-typo": {"tests_failed": 2, "tests_run": 5}})
    code, _out, err = cli("bench", "--telemetry", "tel", "--tier", "smoke")
    assert code == 0, err
    return tmp_path


@pytest.mark.parametrize("command", ["report", "failures"])
def test_markdown_view_of_a_saved_run(cli: CliRunner, saved_run: Path, command: str) -> None:
    code, out, err = cli(command, "--format", "markdown")
    assert code == 0, err
    assert "smoke-fix-readme-typo" in out
    assert "test\\_regression" in out  # Markdown-escaped
    assert "|" in out  # a table


@pytest.mark.parametrize("command", ["report", "failures"])
def test_junit_view_of_a_saved_run(cli: CliRunner, saved_run: Path, command: str) -> None:
    code, out, err = cli(command, "--format", "junit")
    assert code == 0, err
    root = ET.fromstring(out)
    cases = {c.get("name"): c for c in root.iter("testcase")}
    failure = cases["smoke-fix-readme-typo"].find("failure")
    assert failure is not None and "test_regression" in (failure.get("message") or "")
    assert int(root.get("failures") or 0) >= 1


@pytest.mark.parametrize("command", ["report", "failures"])
def test_html_view_of_a_saved_run(cli: CliRunner, saved_run: Path, command: str) -> None:
    code, _out, err = cli(command, "--format", "html", "--output", "view.html")
    assert code == 0, err
    page = (saved_run / "view.html").read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and "smoke-fix-readme-typo" in page
    assert "http://" not in page and "https://" not in page


def test_json_and_format_json_agree(cli: CliRunner, saved_run: Path) -> None:
    _, a, _ = cli("failures", "--json")
    _, b, _ = cli("failures", "--format", "json")
    assert json.loads(a) == json.loads(b)


def test_json_with_another_format_is_a_usage_error(cli: CliRunner, saved_run: Path) -> None:
    code, _out, err = cli("report", "--json", "--format", "html")
    assert code == 1 and "cannot be used together" in err


def test_agent_run_appends_its_markdown_to_the_github_step_summary(
    cli: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n", encoding="utf-8")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    smoke_telemetry(tmp_path / "tel", {})
    code, _out, err = cli("bench", "--telemetry", "tel", "--tier", "smoke", "--no-save")
    assert code == 0, err
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("earlier step\n") and "assay agent run" in text
