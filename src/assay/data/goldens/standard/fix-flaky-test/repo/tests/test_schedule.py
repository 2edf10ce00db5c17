from datetime import datetime, time, timedelta

from src.schedule import due, next_run


def test_next_run():
    # The midnight job runs next at tomorrow's 00:00.
    tomorrow = datetime.now().date() + timedelta(days=1)
    assert next_run(time(0, 0)) == datetime.combine(tomorrow, time(0, 0))


def test_next_run_takes_an_injected_clock():
    # One second before midnight the midnight job is one second away.
    clock = lambda: datetime(2024, 3, 9, 23, 59, 59)  # noqa: E731
    assert next_run(time(0, 0), clock=clock) == datetime(2024, 3, 10, 0, 0)
    assert next_run(time(23, 59, 59), clock=clock) == datetime(2024, 3, 10, 23, 59, 59)


def test_due_spans_midnight():
    jobs = {"backup": time(23, 30), "report": time(0, 15), "digest": time(12, 0)}
    last = datetime(2024, 3, 9, 23, 0)
    assert due(jobs, last, datetime(2024, 3, 10, 0, 30)) == ["backup", "report"]
