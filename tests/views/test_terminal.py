"""The text report on a terminal: statuses and the verdict in colour, wrapped to the width;
never colour with NO_COLOR, on a dumb terminal or off a terminal (pipes keep the plain text)."""

from __future__ import annotations

import io
import re

from assay.views._terminal import styled, use_colour

REPORT = (
    "assay: 2 goldens\n"
    "  PASS         capital  tier1-asserts\n"
    "  FAIL         poem     tier1-asserts  contains:line three: output does not contain "
    "'line three' and this reason goes on for a good while longer than forty columns\n"
    "check against assay-baseline.json: 1 regression(s)\n"
    "gate: FAILED (exit 2)\n"
)
ANSI = re.compile(r"\x1b\[[0-9;]*m")


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_statuses_and_the_verdict_are_coloured() -> None:
    text = styled(REPORT, width=200, colour=True)
    assert "\x1b[32mPASS\x1b[0m" in text
    assert "\x1b[1;31mFAIL\x1b[0m" in text
    assert "\x1b[1;31mFAILED\x1b[0m" in text
    assert "\x1b[1;31m1 regression(s)\x1b[0m" in text
    assert ANSI.sub("", text) == REPORT  # the same words, only coloured


def test_lines_wrap_to_the_terminal_and_nothing_is_lost() -> None:
    text = styled(REPORT, width=40, colour=False)
    assert "\x1b[" not in text
    assert max(len(line) for line in text.splitlines()) <= 40
    assert text.replace("\n", " ").split() == REPORT.replace("\n", " ").split()


def test_colour_only_on_a_terminal_without_no_color() -> None:
    assert use_colour(Tty(), {}) is True
    assert use_colour(Tty(), {"NO_COLOR": "1"}) is False
    assert use_colour(Tty(), {"TERM": "dumb"}) is False
    assert use_colour(io.StringIO(), {}) is False
