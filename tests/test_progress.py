"""Progress by time, not by count: a terminal line redrawn at most every 0.1 s (and at the last
step), a plain log line every 5 s elsewhere; rate, time left and failures so far. The clock is
the test's own: nothing here depends on how fast the machine is."""

from __future__ import annotations

import io

from assay.models._progress import Progress


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_slow_run_shows_its_first_step_on_a_terminal() -> None:
    clock, out = Clock(), io.StringIO()
    bar = Progress(12, True, stream=out, clock=clock, tty=True)
    clock.now += 1.0  # one call of a 12-call, 12 s run
    bar.step()
    assert "1/12 calls, 1.0/s, 0 failed, about 11 s left" in out.getvalue()
    assert out.getvalue().startswith("\r[#")


def test_a_terminal_is_redrawn_at_most_every_tenth_of_a_second() -> None:
    clock, out = Clock(), io.StringIO()
    bar = Progress(1000, True, stream=out, clock=clock, tty=True)
    for _ in range(999):
        clock.now += 0.001  # 1,000 fast calls in about a second
        bar.step(failed=False)
    redraws = out.getvalue().count("\r")
    assert 8 <= redraws <= 10
    clock.now += 0.001
    bar.step(failed=True)  # the last is always drawn, and ends the line
    assert out.getvalue().endswith("\n")  # (padded to cover the longer line before it)
    assert out.getvalue().rstrip().endswith("1000/1000 calls, 1000.0/s, 1 failed, done in 1.0 s")


def test_a_log_gets_a_plain_line_every_five_seconds() -> None:
    clock, out = Clock(), io.StringIO()
    bar = Progress(30, True, stream=out, clock=clock, tty=False)
    for i in range(30):
        clock.now += 1.0
        bar.step(failed=i % 10 == 0)
    lines = out.getvalue().splitlines()
    assert lines[0] == "assay: 5/30 calls, 1.0/s, 1 failed, about 25 s left"
    assert lines[-1] == "assay: 25/30 calls, 1.0/s, 3 failed, about 5.0 s left"
    assert len(lines) == 5  # none at the end: the report follows
    assert "\r" not in out.getvalue()


def test_disabled_or_empty_progress_writes_nothing() -> None:
    out = io.StringIO()
    bar = Progress(3, False, stream=out, tty=True)
    bar.step()
    Progress(0, True, stream=out, tty=False)
    assert out.getvalue() == ""


def test_long_runs_say_minutes_and_hours() -> None:
    clock = Clock()
    bar = Progress(100, True, stream=io.StringIO(), clock=clock, tty=False)
    clock.now += 90
    bar.step()
    assert bar.line().endswith("about 2 h 28 min left")
