"""``--environment docker``: every step in the image the task names (or ``--image``), in real
containers where a daemon answers (scripts/test.sh starts one and builds the image offline:
ASSAY_REQUIRE_DOCKER=1 then turns a missing daemon into a failure), or one clear line saying
why not."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from assay.agent._box import Limits
from assay.agent._docker import container_name, run_argv
from assay.agent._sandbox import World
from tests.agent.test_execute import TASK, make_task, running
from tests.helpers.cli import run_cli

ARGS = ["bench", "goldens", "--agent", "noop", "--tier", "smoke", "--environment", "docker"]
IMAGE = os.environ.get("ASSAY_TASK_IMAGE", "assay-task-python:local")


def _daemon_answers() -> bool:
    if shutil.which("docker") is None:
        return False
    try:
        done = subprocess.run(["docker", "info"], capture_output=True, timeout=20)
    except subprocess.TimeoutExpired:
        return False
    return done.returncode == 0


@pytest.fixture(scope="module")
def image() -> str:
    """The task image, built by scripts/task_image.sh (cached); a skip, or with
    ASSAY_REQUIRE_DOCKER=1 a failure, where no daemon answers."""
    if not _daemon_answers():
        if os.environ.get("ASSAY_REQUIRE_DOCKER") == "1":
            pytest.fail("no Docker daemon answers (and ASSAY_REQUIRE_DOCKER=1)", pytrace=False)
        pytest.skip("no Docker daemon answers here")
    script = Path(__file__).parents[2] / "scripts" / "task_image.sh"
    done = subprocess.run(["bash", str(script)], capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stdout + done.stderr
    return IMAGE


def test_the_container_is_hardened_and_gets_only_assays_variables(tmp_path: Path) -> None:
    world = World(tmp_path / "wt", tmp_path / "io", no_network=True)
    env = {
        "ASSAY_WORKTREE": str(world.worktree),
        "HOME": str(world.private / "home"),
        "PATH": "/host/only/bin",
        "AWS_SECRET_ACCESS_KEY": "not for the container",
    }
    argv = run_argv(image="img", name="assay-t-1", world=world, env=env, limits=Limits(5))
    assert argv[:2] == ["docker", "run"] and argv[-3:] == ["img", "sleep", "2147483647"]
    assert {"--rm", "--init", "--read-only"} <= set(argv)
    assert argv[argv.index("--cap-drop") + 1] == "ALL"
    assert argv[argv.index("--security-opt") + 1] == "no-new-privileges"
    assert argv[argv.index("--network") + 1] == "none"
    assert argv[argv.index("--memory") + 1] == argv[argv.index("--memory-swap") + 1]
    assert f"{world.worktree}:{world.worktree}" in argv
    assert f"ASSAY_WORKTREE={world.worktree}" in argv
    assert not any("AWS_SECRET" in a or a.startswith("PATH=") for a in argv)
    networked = run_argv(
        image="i", name="n", world=World(world.worktree, world.private), env={}, limits=Limits(5)
    )
    assert "--network" not in networked


def bench(root: Path, agent: str, *extra: str) -> dict[str, object]:
    args = ["bench", "--agent", agent, "--environment", "docker", "--image", IMAGE]
    code, out, err = run_cli([*args, "--no-journal", "--json", *extra], root, 600)
    assert code in (0, 2) and "Traceback" not in err, out + err
    return json.loads(out)  # type: ignore[no-any-return]


def test_the_oracle_passes_and_noop_fails_the_packaged_smoke_tier_in_real_containers(
    tmp_path: Path, image: str
) -> None:
    passed = bench(tmp_path, "oracle", "--tier", "smoke", "--no-save")
    statuses = {r["id"]: r["status"] for r in passed["results"]}  # type: ignore[index, union-attr]
    assert len(statuses) == 5 and set(statuses.values()) == {"pass"}, statuses
    failed = bench(tmp_path, "noop", "--tier", "smoke", "--no-save")
    for result in failed["results"]:  # type: ignore[union-attr]
        assert result["status"] == "fail" and result["failure"]["category"], result


def test_a_container_sees_no_host_file_and_its_orphans_are_counted_and_gone(
    tmp_path: Path, image: str
) -> None:
    make_task(tmp_path)
    secret = tmp_path.parent / f"{tmp_path.name}-secret.txt"
    secret.write_text("not for the container\n", encoding="utf-8")
    agent = (
        f"cat {secret} 2>/dev/null || echo unseen; "
        "setsid sleep 31.4159 > /dev/null 2>&1 < /dev/null & echo started"
    )
    bench(tmp_path, agent, "goldens", "--tier", "smoke")
    [run] = sorted((tmp_path / ".assay" / "agent-runs").iterdir())
    record = json.loads((run / "fix-add.json").read_text(encoding="utf-8"))
    assert record["output"] == "unseen\nstarted\n"
    assert record["orphans"] == 1
    assert running("31.4159") == []
    left = subprocess.run(
        ["docker", "ps", "-q", "--filter", "name=assay-fix-add-"], capture_output=True, text=True
    )
    assert left.stdout.strip() == ""


def test_a_container_past_its_limit_is_killed_as_a_timeout(tmp_path: Path, image: str) -> None:
    make_task(tmp_path)
    # A marker no other run on the machine uses: another test run's sleep is not this one's.
    sleeper = f"sleep 60.{os.getpid()}"
    document = bench(tmp_path, sleeper, "goldens", "--tier", "smoke", "--no-save")
    [result] = document["results"]  # type: ignore[misc]
    assert result["failure"]["category"] == "timeout", result
    assert running(sleeper) == []


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
    code, _, err = run_cli(["bench", "--telemetry", "tel", "--environment", "docker"], tmp_path)
    assert code == 1 and "--environment: these run the agent; with --telemetry it ran" in err


def test_variables_an_agent_block_names_reach_its_container(tmp_path: Path) -> None:
    world = World(tmp_path / "wt", tmp_path / "io")
    env = {"MY_API_KEY": "k", "OTHER": "o", "HOME": str(tmp_path / "io" / "home")}
    argv = run_argv(
        image="i", name="n", world=world, env=env, limits=Limits(5), passed=("MY_API_KEY",)
    )
    assert "MY_API_KEY=k" in argv and not any(a.startswith("OTHER=") for a in argv)


def test_a_verify_that_cannot_run_in_its_image_stops_the_run_before_any_agent(
    tmp_path: Path, image: str
) -> None:
    # verify runs first, in the task's container, for every task: no agent starts.
    make_task(tmp_path)
    broken = TASK.replace("python -m pytest", "python -m no_such_module_xyz")
    make_task(tmp_path, "broken", broken)
    code, out, err = run_cli([*ARGS, "--image", image, "--no-journal", "-j", "2"], tmp_path, 600)
    assert (code, out) == (1, "") and "Traceback" not in err
    [line] = err.strip().splitlines()
    assert line.startswith(
        "assay: error: task broken: its verify 'python -m no_such_module_xyz -q -p "
        "no:cacheprovider' cannot run on the untouched fixture: "
    )
    assert line.endswith("No module named no_such_module_xyz"), line
    assert not (tmp_path / ".assay" / "agent-runs").exists()
