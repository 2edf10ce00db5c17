"""The e-mail queue worker: send each job's message, report the failures."""

from collections.abc import Callable, Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Job:
    id: str
    to: str
    subject: str
    body: str


Send = Callable[[str, str, str], None]


def process(jobs: Iterable[Job], send: Send, *, attempts: int = 2) -> list[str]:
    """Send every job (``attempts`` tries each); the ids of the jobs that still failed."""
    failed = []
    for job in jobs:
        print(f"sending job {job.id} to {job.to}: {job.subject}")
        for attempt in range(1, attempts + 1):
            try:
                send(job.to, job.subject, job.body)
            except OSError as exc:
                print(f"job {job.id} attempt {attempt} failed: {exc}")
            else:
                print(f"sent job {job.id}")
                break
        else:
            print(f"giving up on job {job.id}")
            failed.append(job.id)
    return failed
