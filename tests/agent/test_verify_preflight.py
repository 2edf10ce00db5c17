"""Before any agent runs, every selected task's verify runs on its untouched fixture: one that
cannot run there (pytest missing, a command not found) stops the whole run with one line naming
the task, the command and what it said; a verify that runs and fails (the task's tests fail
before the fix, as they should) is the run's verify before, never run again."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.agent.test_execute import TASK, agent_run, make_task, telemetry
from tests.helpers.cli import run_cli

VERIFY = "python -m pytest -q -p no:cacheprovider"
BROKEN = TASK.replace(VERIFY, "python -m no_such_module_xyz")
STOPPED = re.compile(
    r"assay: error: task broken: its verify 'python -m no_such_module_xyz' cannot run on the "
    r"untouched fixture: \S*python\S*: No module named no_such_module_xyz"
)


def marker_agent(marker: Path) -> str:
    """An agent that leaves a mark outside its worktree (it runs without a sandbox)."""
    return f"touch {marker}; sed -i 's/return a - b/return a + b/' calc.py"


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_verify_that_cannot_run_stops_the_run_before_any_agent(tmp_path: Path, jobs: str) -> None:
    project = tmp_path / "project"
    make_task(project)  # its verify runs on the fixture (and fails there, as it should)
    make_task(project, "broken", BROKEN)
    marker = tmp_path / "the-agent-ran"
    args = ["bench", "goldens", "--agent", marker_agent(marker), "--tier", "smoke", "-j", jobs]
    code, out, err = run_cli([*args, "--isolation", "none", "--no-journal"], project, 180)
    assert (code, out) == (1, "") and "Traceback" not in err
    [line] = err.strip().splitlines()
    assert STOPPED.fullmatch(line), line
    assert not marker.exists()  # no agent ran, for any task
    assert not (project / ".assay" / "agent-runs").exists()
    # In the sandbox too (the default): stopped before any task started.
    code, out, err = run_cli(
        ["bench", "goldens", "--agent", "noop", "--tier", "smoke"], project, 180
    )
    assert code == 1 and STOPPED.fullmatch(err.strip()), err


def test_a_verify_that_runs_and_fails_on_the_fixture_runs_once_and_the_agent_runs(
    tmp_path: Path,
) -> None:
    project = tmp_path / "project"
    log = tmp_path / "verify-runs.log"
    make_task(project, task=TASK.replace(VERIFY, f"echo ran >> {log}; {VERIFY}"))
    marker = tmp_path / "the-agent-ran"
    document, _ = agent_run(project, marker_agent(marker), "--isolation", "none", "--no-journal")
    assert marker.exists()
    [result] = document["results"]
    assert result["status"] == "pass", result
    # Once on the untouched fixture (its failing test is not the agent's), once after it.
    assert log.read_text(encoding="utf-8").splitlines() == ["ran", "ran"]
    record = telemetry(project, "fix-add")
    assert (record["tests_run"], record["tests_failed"]) == (1, 0)


def test_a_command_not_found_cannot_run(tmp_path: Path) -> None:
    project = tmp_path / "project"
    make_task(project, "broken", TASK.replace(VERIFY, "no-such-test-runner-xyz --all"))
    code, _, err = run_cli(
        ["bench", "goldens", "--agent", "noop", "--tier", "smoke", "--no-journal"], project, 180
    )
    assert code == 1 and "Traceback" not in err
    [line] = err.strip().splitlines()
    assert line.startswith(
        "assay: error: task broken: its verify 'no-such-test-runner-xyz --all' cannot run on "
        "the untouched fixture: "
    )
    assert "not found" in line
