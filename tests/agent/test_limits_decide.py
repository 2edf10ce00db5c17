"""A task's limits decide pass or fail: a run over its time or cost limit, or one that edits a
file outside owned_files, fails even when everything else passed (it scored PASS before)."""

from __future__ import annotations

from typing import Any

import pytest

from assay.agent._scoring import score_tasks
from assay.agent._telemetry import parse_record
from assay.goldens import build_goldens

TASK = {
    "id": "t",
    "tier": "smoke",
    "completion_signals": ["done"],
    "owned_files": ["src/**"],
    "max_duration_s": 180,
    "max_cost_usd": 0.1,
}
GOOD = {
    "task_id": "t",
    "duration_s": 30,
    "cost_usd": 0.05,
    "files_modified": ["src/a.py"],
    "completion_signals_checked": 1,
    "completion_signals_passed": 1,
}


def verdict(**changes: Any) -> tuple[str, str | None]:
    [task] = build_goldens(TASK, source="t.md", default_id=None, folder_tier=None)
    record = parse_record({**GOOD, **changes}, "t.json")
    [result] = score_tasks([task], {"t": record}, tiers=("smoke",)).tasks
    return result.status, result.failure[0] if result.failure else None


def test_within_its_limits_the_task_passes() -> None:
    assert verdict() == ("pass", None)


@pytest.mark.parametrize(
    ("changes", "category"),
    [
        ({"duration_s": 400}, "timeout"),
        ({"cost_usd": 5.0}, "over_budget"),
        ({"files_modified": ["src/a.py", "setup.py"]}, "scope_creep"),
    ],
)
def test_a_limit_broken_fails_the_task(changes: dict[str, Any], category: str) -> None:
    assert verdict(**changes) == ("fail", category)
