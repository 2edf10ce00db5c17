"""Daily schedules: when a job that runs at a time of day runs next."""

from datetime import datetime, time, timedelta


def next_run(at: time) -> datetime:
    """The next moment, strictly after now, whose time of day is ``at``."""
    now = datetime.now()
    candidate = datetime.combine(now.date(), at)
    if candidate <= now:
        candidate += timedelta(days=1)
    return candidate


def due(jobs: dict[str, time], last_check: datetime, now: datetime) -> list[str]:
    """The jobs whose time of day passed in (last_check, now], sorted by name."""
    out = []
    for name, at in jobs.items():
        day = last_check.date()
        while day <= now.date():
            moment = datetime.combine(day, at)
            if last_check < moment <= now:
                out.append(name)
                break
            day += timedelta(days=1)
    return sorted(out)
