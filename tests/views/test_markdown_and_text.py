"""The Markdown and text reports: snapshot tests on fixed runs, escaping, caps and verdicts.

The fixed runs and the snapshot check are in :mod:`tests.helpers.runs` (shared with the JUnit and
HTML tests).
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

from assay.gate import Diff, Regression, Verdict
from assay.gate._run import GateRun
from assay.results import Result, summarize
from assay.views._markdown import MAX_ROWS, cell, render_markdown
from assay.views._text import render_text
from tests.helpers.runs import (
    agent_document,
    check_snapshot,
    checks,
    example_run,
    sample_run,
)

# ----------------------------------------------------------------------------------- snapshots


def test_sample_markdown_snapshot() -> None:
    check_snapshot("sample.md", render_markdown(sample_run().to_dict()))


def test_sample_text_snapshot() -> None:
    check_snapshot("sample.txt", render_text(sample_run().to_dict()))


def test_example_markdown_snapshot(tmp_path: Path) -> None:
    check_snapshot("example.md", render_markdown(example_run(tmp_path).to_dict()))


def test_example_text_snapshot(tmp_path: Path) -> None:
    check_snapshot("example.txt", render_text(example_run(tmp_path).to_dict()))


def test_agent_markdown_snapshot() -> None:
    check_snapshot("agent.md", render_markdown(agent_document()))


# ------------------------------------------------------------------------------------ escaping

_UNESCAPED_PIPE = re.compile(r"(?<!\\)\|")


def _table_rows(markdown: str) -> list[list[str]]:
    """Each table block as its lines; every line starts with '|'."""
    blocks: list[list[str]] = []
    current: list[str] = []
    for line in markdown.splitlines():
        if line.startswith("|"):
            current.append(line)
        elif current:
            blocks.append(current)
            current = []
    if current:
        blocks.append(current)
    return blocks


def test_every_table_row_has_the_header_column_count() -> None:
    markdown = render_markdown(sample_run().to_dict())
    blocks = _table_rows(markdown)
    assert len(blocks) == 3  # regressions, candidates, failing goldens
    for block in blocks:
        columns = len(_UNESCAPED_PIPE.findall(block[0]))
        for line in block:
            assert len(_UNESCAPED_PIPE.findall(line)) == columns, line


def test_hostile_text_is_escaped() -> None:
    markdown = render_markdown(sample_run().to_dict())
    assert "<script>" not in markdown
    assert "\\<script\\>" in markdown
    assert "`tick`" not in markdown and "\\`tick\\`" in markdown
    assert "[link](x)" not in markdown
    assert "verbose\\|v2" in markdown
    assert "\\</script\\>" in markdown and "<br>second line" in markdown


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("a|b", "a\\|b"),
        ("`x`", "\\`x\\`"),
        ("one\ntwo\r\nthree", "one<br>two<br>three"),
        ("<b>&</b>", "\\<b\\>\\&\\</b\\>"),
        ("C:\\path", "C:\\\\path"),
        ("", " "),
        ("tab\there\x00\x1b[0m", "tab here\\[0m"),
        ("lone \udcff byte", "lone \ufffd byte"),
    ],
)
def test_cell(value: str, expected: str) -> None:
    assert cell(value) == expected


def test_cell_caps_long_values() -> None:
    text = cell("x" * 1000)
    assert len(text) == 300 and text.endswith("…")


# --------------------------------------------------------------------------------- caps, verdict


def _failing_run(n: int) -> GateRun:
    results = [
        Result(
            f"g{i:03d}",
            "standard",
            "default",
            "fail",
            False,
            0.0,
            "tier1-asserts",
            checks(("contains:x", False, "output does not contain 'x'")),
        )
        for i in range(n)
    ]
    regs = [Regression("default", r.id, "passed in the baseline, now fail") for r in results]
    failures = (f"{n} regression(s) against b.json",)
    verdict = Verdict("check", failures=failures, diff=Diff(regs, []), baseline_path=Path("b.json"))
    return GateRun(results, [summarize("default", results)], n, verdict)


def test_long_lists_are_capped() -> None:
    markdown = render_markdown(_failing_run(MAX_ROWS + 70).to_dict())
    rows = re.findall(r"^\| g\d{3} \|", markdown, re.MULTILINE)
    assert len(rows) == 2 * MAX_ROWS  # regressions + failing goldens tables
    assert markdown.count("…and 70 more.") == 2
    assert "| g049 |" in markdown and "| g050 |" not in markdown


def test_verdict_lines(tmp_path: Path) -> None:
    assert render_markdown(sample_run().to_dict()).startswith("❌ **assay gate: FAILED** (exit 2)")
    failed = _failing_run(0)
    passed = replace(failed, verdict=replace(failed.verdict, failures=()))
    assert render_markdown(passed.to_dict()).startswith("✅ **assay gate: passed**")
    report = render_markdown(example_run(tmp_path).to_dict())
    assert report.startswith("**assay**: report only")
    assert "### Regressions" not in report


def test_regressions_come_first() -> None:
    markdown = render_markdown(sample_run().to_dict())
    assert markdown.index("### Regressions (3)") < markdown.index("### Candidates")
    assert markdown.index("### Candidates") < markdown.index("### Failing goldens (5)")


def test_agent_markdown_lists_every_failure() -> None:
    document = agent_document()
    markdown = render_markdown(document)
    failed = [t for t in document["results"] if t.get("failure")]
    assert f"### Failing goldens ({len(failed)})" in markdown
    assert "test\\_regression" in markdown and "incomplete" in markdown
    assert "| task\\_success |" in markdown
