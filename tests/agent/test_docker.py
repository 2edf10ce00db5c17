"""``--environment docker``: every step in the image the task names, or one clear line saying why
not. No Docker daemon runs on the machines these tests were written on: the container run itself
is covered by the argv it is given; a daemon, where one answers, is not assumed."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from assay.agent._docker import PASSED_ENV, container_name, wrap
from tests.agent.test_execute import TASK, make_task
from tests.helpers.cli import run_cli

ARGS = ["run", "goldens", "--agent", "noop", "--tier", "smoke", "--environment", "docker"]


def _daemon_answers() -> bool:
    if shutil.which("docker") is None:
        return False
    try:
        done = subprocess.run(["docker", "info"], capture_output=True, timeout=20)
    except subprocess.TimeoutExpired:
        return False
    return done.returncode == 0


def test_the_container_gets_the_worktree_assays_variables_and_no_network(tmp_path: Path) -> None:
    worktree, private = tmp_path / "wt", tmp_path / "io"
    env = {
        "ASSAY_WORKTREE": str(worktree),
        "ASSAY_TASK_PROMPT_FILE": str(private / "prompt.txt"),
        "HOME": "/root",
        "AWS_SECRET_ACCESS_KEY": "not for the container",
    }
    argv = wrap(
        ["sh", "-c", "make test"],
        image="python:3.12-slim",
        name="assay-t-1",
        mounts=[worktree, private],
        workdir=worktree,
        env=env,
        no_network=True,
    )
    assert argv[:2] == ["docker", "run"]
    assert {"--rm", "--init", "-i"} <= set(argv)
    assert argv[argv.index("--name") + 1] == "assay-t-1"
    assert argv[argv.index("-w") + 1] == str(worktree)
    assert f"{worktree}:{worktree}" in argv and f"{private}:{private}" in argv
    assert f"ASSAY_WORKTREE={worktree}" in argv
    assert not any("AWS_SECRET" in a or a.startswith("HOME=") for a in argv)
    assert argv[argv.index("--network") + 1] == "none"
    assert argv[-4:] == ["python:3.12-slim", "sh", "-c", "make test"]
    assert "ASSAY_USAGE_FILE" in PASSED_ENV
    networked = wrap(
        ["true"], image="i", name="n", mounts=[], workdir=worktree, env={}, no_network=False
    )
    assert "--network" not in networked


def test_container_names_are_safe_and_distinct() -> None:
    first, second = container_name("smoke fix/x"), container_name("smoke fix/x")
    assert first != second and first.startswith("assay-smoke-fix-x-")


def test_a_task_without_an_image_is_named(tmp_path: Path) -> None:
    make_task(tmp_path)
    code, out, err = run_cli([*ARGS, "--no-journal"], tmp_path)
    assert code == 1 and out == ""
    assert "field 'image'" in err and "task.md" in err and "Traceback" not in err


def test_the_journal_is_refused_inside_a_container(tmp_path: Path) -> None:
    make_task(tmp_path, task=TASK + "image: python:3.12-slim\n")
    code, _, err = run_cli(ARGS, tmp_path)
    assert code == 1 and "--no-journal" in err


@pytest.mark.skipif(_daemon_answers(), reason="a Docker daemon answers here")
def test_no_daemon_is_one_clear_line_before_any_task_runs(tmp_path: Path) -> None:
    make_task(tmp_path, task=TASK + "image: python:3.12-slim\n")
    code, out, err = run_cli([*ARGS, "--no-journal"], tmp_path)
    assert code == 1 and out == ""
    assert "--environment docker:" in err
    assert "no Docker daemon answer" in err or "docker is not installed" in err
    assert len(err.strip().splitlines()) == 1
    assert not (tmp_path / ".assay" / "agent-runs").exists()


def test_an_image_must_be_text(tmp_path: Path) -> None:
    make_task(tmp_path, task=TASK + "image: 3\n")
    code, _, err = run_cli(["tasks", "list"], tmp_path)
    assert code == 1 and "field 'image'" in err


def test_environment_needs_an_agent(tmp_path: Path) -> None:
    code, _, err = run_cli(["run", "--example", "--environment", "docker"], tmp_path)
    assert code == 1 and "apply to --agent runs" in err
