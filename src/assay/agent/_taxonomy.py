"""The failure taxonomy: every failed task gets exactly one category, first match wins.

1. ``test_regression``  tests_failed > 0
2. ``timeout``          duration_s > max_duration_s
3. ``over_budget``      cost_usd > max_cost_usd
4. ``scope_creep``      a modified file outside ``owned_files``
5. ``conflict``         merge_conflicts > 0
6. ``hallucination``    compile_error (code that references things that do not exist)
7. ``orientation_miss`` the task names expected_files_modified and none of them was modified
8. ``incomplete``       no telemetry, or completion signals not all checked and passed
9. ``context_miss``     anything else (e.g. the final output failed its asserts)
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from typing import Any, Final

from assay.agent._telemetry import Telemetry
from assay.goldens import Golden

CATEGORIES: Final = (
    "test_regression",
    "timeout",
    "over_budget",
    "scope_creep",
    "conflict",
    "hallucination",
    "orientation_miss",
    "incomplete",
    "context_miss",
)


# A glob's wildcards, longest first, and the regex each stands for; any other run of
# characters matches itself.
_WILDCARDS: Final = {"**/": "(?:.*/)?", "**": ".*", "*": "[^/]*", "?": "[^/]"}
_GLOB_TOKEN: Final = re.compile(r"\*\*/|\*\*|\*|\?|[^*?]+")


@lru_cache(maxsize=1024)
def glob_regex(pattern: str) -> re.Pattern[str]:
    """Path globs: ``**`` spans folders, ``*`` and ``?`` stay within one path segment."""
    parts = [_WILDCARDS.get(t) or re.escape(t) for t in _GLOB_TOKEN.findall(pattern)]
    return re.compile("".join(parts) + r"\Z")


def _normal(path: str) -> str:
    path = path.replace("\\", "/")
    while path.startswith("./"):
        path = path[2:]
    return path


def owned(path: str, globs: Sequence[str]) -> bool:
    target = _normal(path)
    return any(glob_regex(_normal(g)).match(target) for g in globs)


def over_limit(task: Golden, record: Telemetry) -> tuple[str, str] | None:
    """The first of the task's limits broken (its duration, its cost, a modified file not
    owned), as a category and its details; None when they all hold. A limit decides pass or
    fail (a run of 400 s against a 180 s limit is not a pass)."""
    limit = task.fields.get("max_duration_s")
    if limit is not None and record.duration_s > limit:
        return "timeout", f"took {record.duration_s:g} s, limit {limit:g} s"
    budget = task.fields.get("max_cost_usd")
    if budget is not None and record.cost_usd > budget:
        return "over_budget", f"cost ${record.cost_usd:g}, limit ${budget:g}"
    globs: Any = task.fields.get("owned_files")
    outside = [p for p in record.files_modified if not owned(p, globs)] if globs else []
    if outside:
        more = f" and {len(outside) - 3} more" if len(outside) > 3 else ""
        return "scope_creep", "modified outside owned_files: " + ", ".join(outside[:3]) + more
    return None


def classify(
    task: Golden, record: Telemetry | None, output_failures: int, signals_declared: bool
) -> tuple[str, str]:
    """The category and the details of a failed task."""
    if record is None:
        return "incomplete", "no telemetry for this task"
    if record.tests_failed > 0:
        return "test_regression", f"{record.tests_failed} test(s) failed of {record.tests_run} run"
    broken = over_limit(task, record)
    if broken is not None:
        return broken
    if record.merge_conflicts > 0:
        return "conflict", f"{record.merge_conflicts} merge conflict(s)"
    if record.compile_error:
        return "hallucination", "the change did not compile"
    expected: Any = task.fields.get("expected_files_modified")
    if expected:
        touched = {_normal(p) for p in record.files_modified}
        if not any(_normal(e) in touched for e in expected):
            return "orientation_miss", f"modified none of the {len(expected)} expected file(s)"
    checked, passed = record.completion_signals_checked, record.completion_signals_passed
    if checked > 0 and passed != checked:
        return "incomplete", f"{passed} of {checked} completion signal(s) passed"
    if signals_declared and checked == 0:
        return "incomplete", "no completion signal was checked"
    if output_failures:
        return "context_miss", f"{output_failures} assert(s) on the final output failed"
    return "context_miss", "the task did not pass for another reason"
