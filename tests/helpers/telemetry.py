"""Agent-run telemetry for the packaged smoke tier: every task passes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

# Telemetry that passes every packaged smoke task: all declared signals checked and passed,
# the expected files modified (inside owned_files), the final output passing its asserts.
PASSING_SMOKE: dict[str, dict[str, Any]] = {
    "smoke-add-slugify-test": {
        "completion_signals_checked": 2,
        "completion_signals_passed": 2,
        "files_modified": ["tests/test_text.py"],
    },
    "smoke-fix-off-by-one": {
        "completion_signals_checked": 2,
        "completion_signals_passed": 2,
        "files_modified": ["src/pages.py", "tests/test_pages.py"],
    },
    "smoke-fix-readme-typo": {
        "completion_signals_checked": 1,
        "completion_signals_passed": 1,
        "files_modified": ["README.md"],
        "output": "README now spells it RECEIVE",
    },
    "smoke-pin-dependency": {
        "completion_signals_checked": 1,
        "completion_signals_passed": 1,
        "files_modified": ["requirements.txt"],
        "output": "pinned requests>=2.31",
    },
    "smoke-rename-helper": {
        "completion_signals_checked": 2,
        "completion_signals_passed": 2,
        "files_modified": ["src/report.py", "src/cli/main.py"],
    },
}


def smoke_telemetry(
    folder: Path, overrides: dict[str, dict[str, Any]] | None = None, **common: Any
) -> Path:
    """A telemetry folder for the packaged smoke tier: cost $0.10 and 30 s per task."""
    overrides = overrides or {}
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("*.json"):
        old.unlink()
    for task_id, fields in PASSING_SMOKE.items():
        row = {"task_id": task_id, "cost_usd": 0.1, "duration_s": 30, **fields, **common}
        row.update(overrides.get(task_id, {}))
        (folder / f"{task_id}.json").write_text(json.dumps(row), encoding="utf-8")
    return folder
