#!/usr/bin/env bash
# Reference solution: next_run() takes a clock (datetime.now by default) and test_next_run
# passes a fixed one at 23:59:59, so it no longer depends on the wall clock.
set -euo pipefail
python3 - <<'PY'
from pathlib import Path


def edit(name, old, new):
    path = Path(name)
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, f"{name} is not the fixture's"
    path.write_text(text.replace(old, new), encoding="utf-8")


edit(
    "src/schedule.py",
    '''from datetime import datetime, time, timedelta


def next_run(at: time) -> datetime:
    """The next moment, strictly after now, whose time of day is ``at``."""
    now = datetime.now()
''',
    '''from collections.abc import Callable
from datetime import datetime, time, timedelta

Clock = Callable[[], datetime]


def next_run(at: time, clock: Clock = datetime.now) -> datetime:
    """The next moment, strictly after ``clock()``, whose time of day is ``at``."""
    now = clock()
''',
)
edit(
    "tests/test_schedule.py",
    '''def test_next_run():
    # The midnight job runs next at tomorrow's 00:00.
    tomorrow = datetime.now().date() + timedelta(days=1)
    assert next_run(time(0, 0)) == datetime.combine(tomorrow, time(0, 0))
''',
    '''def test_next_run():
    # The midnight job runs next at tomorrow's 00:00, even one second before midnight (a
    # fixed clock: reading the wall clock twice made this fail around midnight).
    now = datetime(2024, 3, 9, 23, 59, 59)
    tomorrow = now.date() + timedelta(days=1)
    assert next_run(time(0, 0), clock=lambda: now) == datetime.combine(tomorrow, time(0, 0))
''',
)
PY
echo "next_run() takes a clock; test_next_run uses a fixed one at 23:59:59."
