"""Runs in progress, for ``assay view``'s live page: each running gate, eval or bench command
keeps a small progress file under ``.assay/live/`` (written atomically, at most a few times a
second) and removes it when it ends; the viewer lists the files of processes still running.

A progress file holds counts and, per result so far, what a run record holds (id, candidate,
status, score, a task's failure category and measured telemetry): no prompt, expected answer or
error message, and an output only with ``keep_outputs``. It keeps the last ``LIVE_ROWS`` rows
and the count of every status, so a run of 100,000 calls rewrites a small file.

- A bench run with ``--agent`` counts its tasks: each finished task's row, scored.
- An eval or gate counts its model calls, the candidates' then the judge's (``phase``): each
  candidate call's row says ``answered`` or ``error``. Its verdict comes when the run scores,
  after the calls: a check (a user's python, an embedding) never runs twice for the view.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

WRITE_EVERY_S: Final = 0.25  # a browser polls about once a second: four writes are plenty
LIVE_ROWS: Final = 500  # the live page shows the newest 200


def live_dir(root: Path) -> Path:
    return root / ".assay" / "live"


class LiveRun:
    """One running command's progress file (``update`` as it goes, ``close`` at the end)."""

    def __init__(self, root: Path, kind: str, clock: Any = time.monotonic) -> None:
        self.path = live_dir(root) / f"{os.getpid()}_{time.time_ns()}.json"
        self._clock = clock
        self._written = -WRITE_EVERY_S
        self.state: dict[str, Any] = {
            "pid": os.getpid(),
            "kind": kind,
            "started_at": datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
            "phase": None,
            "done": 0,
            "total": None,
            "counts": {},
            "results_so_far": [],
        }
        self.written = False  # the file is made by the first update: a run with none leaves none
        self._lock = threading.Lock()  # a bench run's tasks end in threads of their own

    def update(
        self,
        done: int,
        total: int | None,
        result: dict[str, Any] | None = None,
        force: bool = False,
        phase: str | None = None,
    ) -> None:
        """The progress now; written when the last write is old enough (or ``force``)."""
        with self._lock:
            state = self.state
            state["done"], state["total"] = done, total
            if phase is not None:
                state["phase"] = phase
            if result is not None:
                counts, rows = state["counts"], state["results_so_far"]
                counts[result["status"]] = counts.get(result["status"], 0) + 1
                rows.append(result)
                if len(rows) > LIVE_ROWS:
                    del rows[0]
            if force or self._clock() - self._written >= WRITE_EVERY_S or done == total:
                self._write()

    def _write(self) -> None:
        from assay.errors import AssayError
        from assay.io import atomic_write_text

        self._written = self._clock()
        with contextlib.suppress(AssayError, OSError):  # progress is a courtesy, never a failure
            atomic_write_text(self.path, json.dumps(self.state))
            self.written = True

    def close(self) -> None:
        """Remove the progress file (and the live folder, when no other run is in it)."""
        if not self.written:
            return
        with contextlib.suppress(OSError):
            self.path.unlink(missing_ok=True)
        with contextlib.suppress(OSError):
            self.path.parent.rmdir()


class AgentProgress:
    """The task watcher of a bench run with ``--agent`` (an ``assay.agent.TaskWatcher``): as
    each task ends, its row joins the progress file of ``live``."""

    def __init__(self, live: LiveRun, config: Any) -> None:
        self._live, self._config = live, config
        self._done = 0
        self._count: int | None = None
        self._count_lock = threading.Lock()

    def started(self, count: int) -> None:
        self._count = count
        self._live.update(0, count, force=True, phase="tasks")  # on the live page at once

    def ended(self, task: Any, run: Any) -> None:
        row = agent_row(task, run, self._config)
        with self._count_lock:
            self._done += 1
            self._live.update(self._done, self._count, row, force=True)  # tasks end seconds apart


class CallProgress:
    """The call watcher of an eval or gate run (``assay.models.CALL_WATCHERS``): counts every
    call; each candidate call's row says whether it was answered, how fast, and from the
    cache."""

    def __init__(self, live: LiveRun, keep_outputs: bool) -> None:
        self._live, self._keep_outputs = live, keep_outputs

    def __call__(self, ended: Any) -> None:
        call, outcome = ended.call, ended.outcome
        row = None
        if call.purpose == "output":
            answered = outcome.completion is not None
            row = {
                "id": call.golden,
                "candidate": call.candidate,
                "repeat": call.repeat,
                "status": "answered" if answered else "error",
                "cached": outcome.cached,
                "latency_ms": outcome.latency_ms,
                "output": outcome.completion.text if answered and self._keep_outputs else None,
            }
        self._live.update(ended.done, ended.total, row, phase=call.purpose)


def agent_row(task: Any, run: Any, config: Any) -> dict[str, Any]:
    """A finished task's Row as the run will score it (the attestation's Safety aside): id,
    status, score, failure category, telemetry; its output only with ``keep_outputs``."""
    from assay.agent import parse_record, score_tasks
    from assay.cascade import check_context
    from assay.errors import AssayError

    row: dict[str, Any] = {"id": task.id, "candidate": "agent", "tier": task.tier}
    row.update(title=task.fields.get("title"), telemetry=None, output=None)
    try:
        record = parse_record(run.record, f"{task.id}.json")
        [result] = score_tasks(
            [task], {task.id: record}, tiers=(task.tier,), ctx=check_context(config)
        ).tasks
    except AssayError as exc:  # the final scoring says it in full; here the row is an error
        return {**row, "status": "error", "score": None, "failure_category": None, "note": str(exc)}
    row.update(
        status=result.status,
        score=result.score,
        failure_category=result.failure[0] if result.failure else None,
        telemetry=result.telemetry,
        output=_text(record.output) if config.keep_outputs else None,
    )
    return row


def _text(output: Any) -> str:
    return output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)


@contextlib.contextmanager
def live_run(root: Path, kind: str) -> Iterator[LiveRun]:
    """A progress file for the duration of the block (removed however the block ends)."""
    run = LiveRun(root, kind)
    try:
        yield run
    finally:
        run.close()


def _running(pid: Any) -> bool:
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process, alive
    return True


def live_runs(root: Path) -> list[dict[str, Any]]:
    """The runs in progress, oldest first: files of processes that ended (a killed run leaves
    its file) and files that cannot be read are passed over."""
    folder = live_dir(root)
    try:
        names = sorted(n for n in os.listdir(folder) if n.endswith(".json"))
    except OSError:
        return []
    out: list[dict[str, Any]] = []
    for name in names:
        try:
            state = json.loads((folder / name).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue  # being replaced this instant, or not ours
        if not isinstance(state, dict) or not _running(state.get("pid")):
            continue
        counts = state.get("counts")
        out.append(
            {
                "run_id": state.get("run_id"),
                "pid": state.get("pid"),  # the live page tells runs apart by it
                "kind": state.get("kind"),
                "started_at": state.get("started_at"),
                "phase": state.get("phase"),
                "done": state.get("done"),
                "total": state.get("total"),
                "counts": counts if isinstance(counts, dict) else {},
                "results_so_far": [
                    r for r in state.get("results_so_far") or () if isinstance(r, dict)
                ],
            }
        )
    return out
