"""Reading a verify run's test counts from pytest's summary line or a JUnit XML report."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.agent._verify import VerifyCounts, counts_of, from_junit, from_summary


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        ("..\n2 passed in 0.01s\n", VerifyCounts(2, 0)),
        ("F.\n=== 1 failed, 1 passed in 0.03s ===\n", VerifyCounts(1, 1)),
        ("== 1 failed, 2 passed, 1 error, 3 skipped in 0.5s ==", VerifyCounts(2, 2, 3)),
        ("tests: 7 passed, 2 failed\nbye\n", VerifyCounts(7, 2)),
        ("1 xfailed, 4 passed", VerifyCounts(4, 0, 1)),
    ],
)
def test_the_last_summary_line_counts(output: str, expected: VerifyCounts) -> None:
    assert from_summary(output) == expected


def test_no_summary_is_none() -> None:
    assert from_summary("nothing to see\n") is None


def test_a_junit_report_wins_over_the_summary(tmp_path: Path) -> None:
    report = tmp_path / "junit.xml"
    report.write_text(
        '<testsuites><testsuite tests="5" failures="1" errors="1" skipped="1"/>'
        '<testsuite tests="2" failures="0" errors="0" skipped="0"/></testsuites>'
    )
    assert from_junit(report) == VerifyCounts(passed=4, failed=2, skipped=1)
    assert counts_of("9 passed", report) == VerifyCounts(4, 2, 1)
    assert counts_of("9 passed", tmp_path / "missing.xml") == VerifyCounts(9, 0)
    (tmp_path / "bad.xml").write_text("<html/>")
    assert from_junit(tmp_path / "bad.xml") is None
    assert VerifyCounts(4, 2, 1).ran == 6
