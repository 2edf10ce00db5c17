"""An executed agent run (``--agent``) cut into shards and merged: every task's verdict and
failure category, in suite order, are the unsharded run's (durations are measured, so the
composite's efficiency differs run to run; exact equality of the whole document, regressions
and baseline bytes is tested on recorded telemetry in tests/test_merge.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.agent.test_execute import TASK, make_task
from tests.helpers.cli import run_cli

NAMES = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot"]
FIXED = {"alpha", "charlie", "echo", "foxtrot"}
# Fixes calc.py only when the instruction says "please": some tasks pass, the others fail.
AGENT = (
    'cd "$ASSAY_WORKTREE" && if grep -q please "$ASSAY_TASK_PROMPT_FILE"; '
    "then sed -i 's/return a - b/return a + b/' calc.py; fi"
)


def _project(root: Path) -> None:
    for name in NAMES:
        ask = "please make it add" if name in FIXED else "leave it"
        make_task(root, name, TASK.replace("Make it add.", ask))


def _run(root: Path, *extra: str) -> tuple[int, dict[str, Any]]:
    args = ["bench", "goldens", "--agent", AGENT, "--tier", "smoke", "--no-journal", "--json"]
    code, out, err = run_cli([*args, *extra], root, 180)
    assert "Traceback" not in err, err
    assert out, err
    return code, json.loads(out)


def _verdicts(document: dict[str, Any]) -> list[tuple[str, str, Any]]:
    return [
        (r["id"], r["status"], (r.get("failure") or {}).get("category"))
        for r in document["results"]
    ]


def test_an_executed_agent_run_merged_from_shards_has_the_whole_runs_verdicts(
    tmp_path: Path,
) -> None:
    _project(tmp_path)
    code, whole = _run(tmp_path, "--no-save")
    assert code == 0
    assert {r["id"] for r in whole["results"] if r["status"] == "pass"} == FIXED
    names = []
    for spec in ("1/3", "2/3", "3/3"):
        code, document = _run(tmp_path, "--no-save", "--shard", spec)
        assert code == 0
        name = f"shard-{spec[0]}.json"
        (tmp_path / name).write_text(json.dumps(document), encoding="utf-8")
        names.append(name)
    code, out, err = run_cli(["merge", *names, "--json"], tmp_path)
    assert code == 0, err
    merged = json.loads(out)
    assert _verdicts(merged) == _verdicts(whole)
    assert merged["summary"]["counts"] == whole["summary"]["counts"]
    task_success = merged["summary"]["composite"]["components"]["task_success"]
    assert task_success == whole["summary"]["composite"]["components"]["task_success"]
