import logging

from src.worker import Job, process

JOBS = [
    Job("j1", "ana@example.com", "Your receipt", "Total: 12.00"),
    Job("j2", "bo@example.com", "Reset your password", "Code 493021"),
]


def flaky_send(fail_for):
    def send(to, subject, body):
        if to in fail_for:
            raise OSError("connection refused")

    return send


def test_process_returns_the_failed_ids():
    assert process(JOBS, flaky_send({"bo@example.com"})) == ["j2"]


def test_process_retries_before_giving_up():
    calls = []

    def send(to, subject, body):
        calls.append(to)
        if len(calls) == 1:
            raise OSError("timeout")

    assert process(JOBS[:1], send) == []
    assert calls == ["ana@example.com", "ana@example.com"]


def test_logs_job_ids_never_contents(caplog):
    caplog.set_level(logging.DEBUG)
    process(JOBS, flaky_send({"bo@example.com"}))
    records = [r for r in caplog.records if r.name == "src.worker"]
    info = " ".join(r.getMessage() for r in records if r.levelno >= logging.INFO)
    assert "j1" in info and "j2" in info
    for secret in ("ana@example.com", "bo@example.com", "Your receipt", "Code 493021"):
        assert secret not in info
    assert any(r.levelno >= logging.WARNING and "j2" in r.getMessage() for r in records)
