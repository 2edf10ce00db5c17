"""End to end through a real ``python -m assay`` process (every other CLI test runs in-process):
the exit codes a shell sees, the installed console script, and that the in-process runner gives
the same exit code, stdout and stderr as a real process for the same command."""

from __future__ import annotations

import difflib
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.cli import CliRunner, run_cli_in_process, run_cli_subprocess
from tests.helpers.goldens import GoldensProject


def test_the_packaged_example_from_an_empty_folder(cli_process: CliRunner, tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    code, out, err = cli_process("gate", "--example", cwd=empty)
    assert code == 0, err
    assert "smoke-sql-active-users" in out
    # A plain report writes nothing but its run record.
    assert [p.relative_to(empty).parts[:2] for p in empty.rglob("*") if p.is_file()] == [
        (".assay", "runs")
    ]


def test_console_script_runs_the_gate(project: GoldensProject) -> None:
    """The installed ``assay`` entry point behaves like ``python -m assay``."""
    exe = shutil.which("assay", path=str(Path(sys.executable).parent))
    if exe is None:
        pytest.skip("the assay console script is not installed next to this interpreter")
    proc = subprocess.run(
        [exe, "gate", "goldens", "--outputs", "broken.json"],
        cwd=project.root,
        capture_output=True,
        text=True,
        timeout=10,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert re.search(r"^  FAIL\s+sql-active-users\s", proc.stdout, re.MULTILINE), proc.stdout


@pytest.mark.parametrize(
    ("args", "code"),
    [
        pytest.param(["gate", "goldens", "--outputs", "good.json"], 0, id="report"),
        pytest.param(["gate", "goldens", "--outputs", "broken.json", "--json"], 0, id="json"),
        pytest.param(["gate", "goldens", "--outputs", "broken.json", "--check"], 2, id="regressed"),
        pytest.param(
            ["gate", "goldens", "--outputs", "good.json", "--check", "--baseline", "no.json"],
            1,
            id="error",
        ),
        # A usage error is 1, never click's 2 (which would read as "the gate failed").
        pytest.param(["gate", "goldens", "--tier", "gold"], 1, id="usage-error"),
        pytest.param([], 0, id="bare"),
    ],
)
def test_a_real_process_exits_and_prints_as_the_in_process_run(
    project: GoldensProject, args: list[str], code: int
) -> None:
    setup = ["gate", "goldens", "--outputs", "good.json", "--write-baseline"]
    assert run_cli_in_process(setup, project.root)[0] == 0
    real = run_cli_subprocess(args, project.root)
    assert real[0] == code, real[2]
    assert "Traceback" not in real[2]
    in_process = run_cli_in_process(args, project.root)
    assert in_process[0] == real[0]
    for name, mine, theirs in zip(("stdout", "stderr"), in_process[1:], real[1:], strict=True):
        diff = difflib.unified_diff(
            theirs.splitlines(), mine.splitlines(), "process", "in-process", lineterm=""
        )
        assert mine == theirs, f"{name}:\n" + "\n".join(diff)
