"""An agent run's attestation verdict is where a user looks: ``assay bench`` says CLEAN when every
seal is, and a run that is not says why in the text report (the task's row), in ``--json`` and
in ``assay failures``, a task that passed included. An honest script agent is CLEAN: Python lists
the folder of the script it runs, which the sandbox holds only as the way to the script's mount
(and without a sandbox, the folder of the script it was given)."""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.agent.test_execute import TASK, make_task
from tests.agent.test_sandbox_world import FIX
from tests.helpers.cli import run_cli

SCRIPT = f"""\
import subprocess

subprocess.run({FIX!r}, shell=True, check=True)
print("done")
"""
RUBRIC = "the fix turns the minus sign into a plus sign and nothing else"


@pytest.fixture
def outside_tmp() -> Iterator[Path]:
    """A folder outside /tmp (the sandbox's own /tmp holds the agent's script there)."""
    folder = Path(tempfile.mkdtemp(prefix="assay-test-agent-", dir="/var/tmp"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def bench(project: Path, agent: str, *extra: str) -> tuple[dict[str, object], str]:
    args = ["bench", "goldens", "--agent", agent, "--tier", "smoke", *extra]
    code, out, err = run_cli(args, project, 180)
    assert code == 0 and "Traceback" not in err, out + err
    return (json.loads(out) if "--json" in extra else {}), out


@pytest.mark.parametrize("isolation", ["bubblewrap", "none"])
def test_a_python_script_agent_is_clean_and_the_report_says_so(
    tmp_path: Path, outside_tmp: Path, isolation: str
) -> None:
    project = tmp_path / "project"
    make_task(project)
    # Sandboxed, a script outside /tmp; without a sandbox, /tmp itself is no allowance.
    folder = outside_tmp if isolation == "bubblewrap" else tmp_path / "agent"
    folder.mkdir(exist_ok=True)
    script = folder / "fix.py"
    script.write_text(SCRIPT, encoding="utf-8")
    agent = f"python3 {script}"
    document, _ = bench(project, agent, "--isolation", isolation, "--json", "--no-save")
    [result] = document["results"]  # type: ignore[misc]
    assert result["status"] == "pass" and "safety" not in result, result
    assert document["summary"]["attestation"] == {  # type: ignore[index]
        "verdict": "CLEAN",
        "sealed": 1,
        "clean": 1,
    }
    assert result["telemetry"]["attestation"].startswith("sha256:")
    _, out = bench(project, agent, "--isolation", isolation, "--no-save")
    assert "  attestation: CLEAN (1 of 1 sealed task(s) verified CLEAN)\n" in out


def test_a_run_that_is_not_clean_says_why_in_the_row_json_and_failures(tmp_path: Path) -> None:
    project = tmp_path / "project"
    make_task(project, task=TASK + f"rubric: {RUBRIC!r}\n")
    # The task passes; the agent said the rubric, which it never saw: DIRTY, Safety 0.
    agent = f"{FIX}; echo {RUBRIC!r}"
    document, _ = bench(project, agent, "--json")
    [result] = document["results"]  # type: ignore[misc]
    assert result["status"] == "pass"
    why = result["safety"]
    # The command that said it, then what it said (its stdout), each an event of the journal.
    assert re.fullmatch(
        r"attestation sha256:\w+… is DIRTY: ground_truth_shingle: exec, event \d+; "
        r"ground_truth_shingle: message, event \d+",
        why,
    ), why
    assert document["summary"]["attestation"] == {  # type: ignore[index]
        "verdict": "DIRTY",
        "sealed": 1,
        "clean": 0,
    }
    _, out = bench(project, agent, "--no-save")
    row = next(line for line in out.splitlines() if "fix-add" in line)
    assert row.startswith("  PASS ") and "[safety 0: attestation sha256:" in row
    assert "is DIRTY: ground_truth_shingle: exec, event " in row
    assert "  attestation: DIRTY (0 of 1 sealed task(s) verified CLEAN)\n" in out
    # assay failures: the task passed, yet it zeroed the run's score; it says so, and why.
    code, out, err = run_cli(["failures"], project)
    assert code == 0, err
    assert "safety 0 (attestation not CLEAN): 1\n  fix-add: attestation sha256:" in out
    code, out, _ = run_cli(["failures", "--json"], project)
    table = json.loads(out)
    assert table["failures"] == []
    assert table["unsafe"] == [{"id": "fix-add", "tier": "smoke", "safety": why}]
