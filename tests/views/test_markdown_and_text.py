"""The Markdown and text reports: snapshot tests on fixed runs, escaping, caps and verdicts.

The run builders here (``sample_run``, ``example_run``, ``agent_document``) are shared with the
JUnit and HTML tests. Regenerate the snapshots after an intended change with
``ASSAY_UPDATE_SNAPSHOTS=1 pytest tests/test_report_markdown.py tests/test_report_junit.py``
and review the diff.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest

from assay.agent import parse_record, run_document, score_tasks
from assay.asserts import CheckResult
from assay.baseline import Diff, Regression
from assay.config import load_config
from assay.gate import GateOptions, GateRun, run_gate
from assay.goldens import iter_goldens, packaged_root
from assay.results import Result, rank, summarize
from assay.views._markdown import MAX_ROWS, cell, render_agent_markdown, render_markdown
from assay.views._text import render_gate

SNAPSHOTS = Path(__file__).parent / "snapshots"
UPDATE = os.environ.get("ASSAY_UPDATE_SNAPSHOTS") == "1"

# A reason that tries every way text can break a report: markup, table pipes, code ticks,
# newlines, an entity, a Markdown link and emphasis.
NASTY = "</script><script>alert(1)</script> | `tick` *bold* [link](x) &amp;\nsecond line"


def check_snapshot(name: str, text: str) -> None:
    """Compare ``text`` with ``tests/snapshots/name`` byte for byte (or rewrite it on request)."""
    path = SNAPSHOTS / name
    if UPDATE:
        path.write_bytes(text.encode("utf-8"))
    assert path.is_file(), f"missing snapshot {path}; run with ASSAY_UPDATE_SNAPSHOTS=1"
    assert text == path.read_bytes().decode("utf-8")


def _checks(*items: tuple[str, bool, str | None]) -> tuple[CheckResult, ...]:
    out = []
    for text, passed, reason in items:
        op = text.split(":", 1)[0]
        evidence = None if passed else {"reason": "mismatch"}
        out.append(CheckResult(text, op, passed, reason, evidence))
    return tuple(out)


def sample_results() -> list[Result]:
    """Every status, two candidates (one with a pipe in its name), hostile text in reasons."""
    brief, verbose = "brief", "verbose|v2"
    sql_ok = _checks(("contains:FROM", True, None), ("contains:users", True, None))
    return [
        Result("sql-active-users", "smoke", brief, "pass", True, 1.0, "tier1-asserts", sql_ok),
        Result(
            "json-invoice",
            "smoke",
            brief,
            "fail",
            False,
            0.5,
            "tier1-asserts",
            _checks(
                ("is-json", True, None),
                ("equals:INV-1042 @/invoice", False, "expected 'INV-1042', got 'INV-1O42'"),
            ),
        ),
        Result("explain-cache", "standard", brief, "pass", True, 0.83, "tier2-rapidfuzz"),
        Result(
            "deploy-friday",
            "smoke",
            brief,
            "needs-judge",
            None,
            None,
            "tier3-judge",
            notes=("tier 3: needs a judge (not called in deterministic mode)",),
        ),
        Result(
            "summary-no-pii",
            "standard",
            brief,
            "no-output",
            False,
            0.0,
            None,
            notes=("no output for this golden",),
        ),
        Result(
            "xss-<script>",
            "adversarial",
            brief,
            "fail",
            False,
            0.0,
            "tier1-asserts",
            _checks(("not-contains:<script>", False, NASTY)),
        ),
        Result(
            "bad-output",
            "stretch",
            brief,
            "error",
            None,
            None,
            None,
            notes=("the output could not be decoded",),
        ),
        Result("sql-active-users", "smoke", verbose, "pass", True, 1.0, "tier1-asserts", sql_ok),
        Result(
            "explain-cache",
            "standard",
            verbose,
            "fail",
            False,
            0.42,
            "tier2-rapidfuzz",
            (),
            ("similarity 0.420 below threshold 0.6",),
        ),
        Result("deploy-friday", "smoke", verbose, "needs-judge", None, None, "tier3-judge"),
    ]


def sample_run() -> GateRun:
    """A ``--check`` run with three regressions, notes, and a failed gate."""
    results = sample_results()
    by_candidate: dict[str, list[Result]] = {}
    for r in results:
        by_candidate.setdefault(r.candidate, []).append(r)
    summaries = rank([summarize(c, rs) for c, rs in by_candidate.items()])
    diff = Diff(
        [
            Regression(
                "brief",
                "json-invoice",
                "passed in the baseline, now fail: "
                "equals:INV-1042 @/invoice (expected 'INV-1042', got 'INV-1O42')",
            ),
            Regression("brief", "summary-no-pii", "passed in the baseline, now no-output"),
            Regression("verbose|v2", "explain-cache", "score dropped 0.910 → 0.420"),
        ],
        ["1 golden(s) not in the baseline: brief/xss-<script>"],
    )
    return GateRun(
        results,
        summaries,
        golden_count=7,
        mode="check",
        baseline_path=Path("assay-baseline.json"),
        diff=diff,
        gate_failures=["3 regression(s) against assay-baseline.json"],
        notes=["candidate 'verbose|v2': 1 output(s) name no selected golden (e.g. old-id)"],
    )


def example_run(tmp_path: Path) -> GateRun:
    """The packaged example, scored as ``assay run --example`` does."""
    return run_gate(GateOptions(example=True), load_config(tmp_path))


def agent_document() -> dict[str, Any]:
    """A scored agent run over the packaged tasks: one pass, one test regression, the rest
    incomplete (no telemetry); fixed id, time and version so snapshots are stable."""
    tasks = list(iter_goldens(packaged_root()))
    records = {
        "smoke-fix-off-by-one": {
            "completion_signals_checked": 2,
            "completion_signals_passed": 2,
            "files_modified": ["src/pages.py", "tests/test_pages.py"],
            "cost_usd": 0.1,
            "duration_s": 30,
        },
        "smoke-pin-dependency": {"tests_failed": 2, "cost_usd": 0.2, "duration_s": 50},
    }
    telemetry = {k: parse_record({"task_id": k, **v}, k) for k, v in records.items()}
    document = run_document(score_tasks(tasks, telemetry), {"tiers": ["smoke", "standard"]})
    document.update(
        run_id="eval_run_20250101T000000_000000Z",
        created_at="2025-01-01T00:00:00.000000+00:00",
        assay_version="0.0.0-test",
    )
    return document


# ----------------------------------------------------------------------------------- snapshots


def test_sample_markdown_snapshot() -> None:
    check_snapshot("sample.md", render_markdown(sample_run()))


def test_sample_text_snapshot() -> None:
    check_snapshot("sample.txt", render_gate(sample_run()))


def test_example_markdown_snapshot(tmp_path: Path) -> None:
    check_snapshot("example.md", render_markdown(example_run(tmp_path)))


def test_example_text_snapshot(tmp_path: Path) -> None:
    check_snapshot("example.txt", render_gate(example_run(tmp_path)))


def test_agent_markdown_snapshot() -> None:
    check_snapshot("agent.md", render_agent_markdown(agent_document()))


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
    markdown = render_markdown(sample_run())
    blocks = _table_rows(markdown)
    assert len(blocks) == 3  # regressions, candidates, failing goldens
    for block in blocks:
        columns = len(_UNESCAPED_PIPE.findall(block[0]))
        for line in block:
            assert len(_UNESCAPED_PIPE.findall(line)) == columns, line


def test_hostile_text_is_escaped() -> None:
    markdown = render_markdown(sample_run())
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
            _checks(("contains:x", False, "output does not contain 'x'")),
        )
        for i in range(n)
    ]
    regs = [Regression("default", r.id, "passed in the baseline, now fail") for r in results]
    return GateRun(
        results,
        [summarize("default", results)],
        n,
        "check",
        Path("b.json"),
        Diff(regs, []),
        [f"{n} regression(s) against b.json"],
    )


def test_long_lists_are_capped() -> None:
    markdown = render_markdown(_failing_run(MAX_ROWS + 70))
    rows = re.findall(r"^\| g\d{3} \|", markdown, re.MULTILINE)
    assert len(rows) == 2 * MAX_ROWS  # regressions + failing goldens tables
    assert markdown.count("…and 70 more.") == 2
    assert "| g049 |" in markdown and "| g050 |" not in markdown


def test_verdict_lines(tmp_path: Path) -> None:
    assert render_markdown(sample_run()).startswith("❌ **assay gate: FAILED** (exit 2)")
    passed = _failing_run(0)
    passed.gate_failures.clear()
    assert render_markdown(passed).startswith("✅ **assay gate: passed**")
    report = render_markdown(example_run(tmp_path))
    assert report.startswith("**assay**: report only")
    assert "### Regressions" not in report


def test_regressions_come_first() -> None:
    markdown = render_markdown(sample_run())
    assert markdown.index("### Regressions (3)") < markdown.index("### Candidates")
    assert markdown.index("### Candidates") < markdown.index("### Failing goldens (5)")


def test_agent_markdown_lists_every_failure() -> None:
    document = agent_document()
    markdown = render_agent_markdown(document)
    failed = [t for t in document["results"] if t.get("failure")]
    assert f"### Failures ({len(failed)})" in markdown
    assert "test\\_regression" in markdown and "incomplete" in markdown
    assert "| task\\_success |" in markdown
