"""What a task's ``verify`` command says about the tests it ran: from a JUnit XML report it wrote
(the most exact source), else from a pytest-style summary line (``3 passed, 1 failed in 0.2s``,
or any ``N passed, N failed`` line)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Final

# "== 1 failed, 2 passed, 1 error in 0.51s ==", "5 passed", "2 failed, 3 passed"
_COUNT: Final = re.compile(r"(\d+) (passed|failed|errors?|skipped|xfailed|xpassed)\b")


@dataclass(frozen=True, slots=True)
class VerifyCounts:
    """Tests a verify run reported: ran = passed + failed (errors count as failed)."""

    passed: int = 0
    failed: int = 0
    skipped: int = 0

    @property
    def ran(self) -> int:
        return self.passed + self.failed


def from_summary(output: str) -> VerifyCounts | None:
    """The counts of the last line of ``output`` that reports any, or None."""
    for line in reversed(output.splitlines()):
        found = _COUNT.findall(line)
        if not found:
            continue
        counts: dict[str, int] = {}
        for number, word in found:
            key = "failed" if word.startswith("error") else word
            counts[key] = counts.get(key, 0) + int(number)
        return VerifyCounts(
            passed=counts.get("passed", 0) + counts.get("xpassed", 0),
            failed=counts.get("failed", 0),
            skipped=counts.get("skipped", 0) + counts.get("xfailed", 0),
        )
    return None


def from_junit(path: Path) -> VerifyCounts | None:
    """The counts of a JUnit XML report (``<testsuites>`` or one ``<testsuite>``), or None when
    the file is missing or not a JUnit report."""
    import xml.etree.ElementTree as ET

    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError):
        return None
    suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
    if root.tag not in ("testsuite", "testsuites"):
        return None
    tests = failed = skipped = 0
    for suite in suites:
        try:
            tests += int(suite.get("tests", 0))
            failed += int(suite.get("failures", 0)) + int(suite.get("errors", 0))
            skipped += int(suite.get("skipped", 0))
        except ValueError:
            return None
    return VerifyCounts(passed=tests - failed - skipped, failed=failed, skipped=skipped)


def counts_of(output: str, junit: Path | None = None) -> VerifyCounts | None:
    """The verify run's counts: the JUnit report when there is one, else the summary line."""
    if junit is not None:
        counts = from_junit(junit)
        if counts is not None:
            return counts
    return from_summary(output)


def failed_tests(path: Path) -> frozenset[str] | None:
    """The ids (``classname::name``) of the tests a JUnit XML report says failed or erred, or
    None when there is no readable report."""
    import xml.etree.ElementTree as ET

    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError):
        return None
    failed = set()
    for case in root.iter("testcase"):
        if case.find("failure") is not None or case.find("error") is not None:
            failed.add(f"{case.get('classname', '')}::{case.get('name', '')}")
    return frozenset(failed)
