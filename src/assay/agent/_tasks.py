"""The agent tasks a project can run: its own (task folders, or goldens with agent-task fields)
and the packaged ones, for ``assay tasks list`` / ``show`` and for commands that take a task id."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from assay.errors import GoldenError
from assay.goldens import TASK_FILE, Golden, iter_goldens, packaged_root

# Fields only an agent task has: a golden with any of them is a task.
AGENT_FIELDS: Final = frozenset(
    """completion_signals expected_test_outcomes expected_files_modified owned_files
    max_cost_usd max_duration_s max_memory_mb reference_files verify""".split()
)


@dataclass(frozen=True, slots=True)
class TaskEntry:
    """One task and where it lives (``folder`` is set for an executable task folder)."""

    golden: Golden
    path: Path
    packaged: bool

    @property
    def folder(self) -> Path | None:
        return self.path.parent if self.path.name == TASK_FILE else None


def _is_task(golden: Golden) -> bool:
    return Path(golden.source).name == TASK_FILE or not AGENT_FIELDS.isdisjoint(golden.fields)


def _entries(goldens: Iterable[Golden], packaged: bool) -> list[TaskEntry]:
    return [TaskEntry(g, Path(g.source), packaged) for g in goldens if _is_task(g)]


def all_tasks(project: Path | None, tiers: Iterable[str] | None = None) -> list[TaskEntry]:
    """The project's tasks (when its goldens folder exists), then every packaged task whose id
    the project does not use, in suite order; only ``tiers`` when given."""
    own = _entries(iter_goldens(project), False) if project is not None and project.exists() else []
    ids = {t.golden.id for t in own}
    packaged = [t for t in _entries(iter_goldens(packaged_root()), True) if t.golden.id not in ids]
    wanted = set(tiers) if tiers else None
    return [t for t in [*own, *packaged] if wanted is None or t.golden.tier in wanted]


def find_task(task_id: str, project: Path | None) -> TaskEntry:
    """The task with ``task_id``: the project's first, else a packaged one.

    Raises:
        GoldenError: no task has that id (the message lists a few that exist).
    """
    tasks = all_tasks(project)
    for task in tasks:
        if task.golden.id == task_id:
            return task
    known = ", ".join(t.golden.id for t in tasks[:5])
    raise GoldenError(f"no task {task_id!r} (tasks include {known})", field="task")
