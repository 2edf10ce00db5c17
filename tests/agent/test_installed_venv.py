"""assay installed into a venv (not editable: its package, data and all, inside the venv's
site-packages, as ``pip install .`` leaves it) runs the agent with that venv: inside the sandbox
``python`` is the venv's (its ``sys.prefix``, its packages), and assay's package data in it (the
packaged tasks and their reference solutions) is an empty folder."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from assay.agent._sandbox import package_folder
from tests.agent.test_execute import TASK, make_task, telemetry
from tests.agent.test_sandbox_world import FIX

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or shutil.which("bwrap") is None,
    reason="needs Linux and bubblewrap",
)

ONLY_IN_VENV = "assay_test_only_in_this_venv"
# The copy's dependencies (pytest among them) are this test run's, outside the sandbox: the
# task's verify needs none of them, and says how many tests it ran.
VERIFY = (
    'python -c "from calc import add; ok = add(2, 3) == 5; '
    "print('1 passed' if ok else '1 failed'); raise SystemExit(0 if ok else 1)\""
)


def installed_venv(root: Path) -> tuple[Path, Path]:
    """A venv holding a copy of assay's package (data included) in its site-packages, and a
    module no other Python has; assay's dependencies come from this test run's environment (a
    ``.pth`` line: a folder, not an install of assay). Returns the venv and its assay package."""
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    site = venv / "lib" / version / "site-packages"
    package = site / "assay"
    shutil.copytree(package_folder(), package, ignore=shutil.ignore_patterns("__pycache__"))
    (site / f"{ONLY_IN_VENV}.py").write_text("HERE = True\n", encoding="utf-8")
    ours = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (site / "test-dependencies.pth").write_text("\n".join(sorted(ours)) + "\n", encoding="utf-8")
    return venv, package


def test_the_agent_runs_with_the_venv_assay_is_installed_in(tmp_path: Path) -> None:
    venv, package = installed_venv(tmp_path)
    project = tmp_path / "project"
    make_task(
        project, task=TASK.replace('"python -m pytest -q -p no:cacheprovider"', json.dumps(VERIFY))
    )
    data = package / "data"
    assert (data / "goldens" / "smoke").is_dir()  # the packaged tasks are there, outside
    agent = (
        f'python -c "import sys, {ONLY_IN_VENV}; print(sys.prefix)"; '
        f"ls -A {data} | wc -l; ls {data / 'goldens'} 2>&1 | grep -c 'No such file'; "
        f"{FIX}"
    )
    env = {**os.environ, "PATH": f"{venv / 'bin'}{os.pathsep}/usr/bin:/bin"}
    env.pop("VIRTUAL_ENV", None)
    argv = [str(venv / "bin" / "python"), "-m", "assay", "bench", "goldens", "--agent", agent]
    argv += ["--tier", "smoke", "--json", "--no-journal"]
    done = subprocess.run(argv, cwd=project, env=env, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stdout + done.stderr
    assert json.loads(done.stdout)["results"][0]["status"] == "pass"
    output = telemetry(project, "fix-add")["output"]
    # The venv's interpreter, with the venv's packages (not the base Python behind its link),
    # and assay's data, inside the mounted venv, an empty folder: nothing of it is there.
    assert output.split() == [os.path.realpath(venv), "0", "1"], output


def test_the_toolchain_holds_a_venv_with_assays_data_never_one_with_the_project(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from assay.agent import _sandbox

    venv = tmp_path / "venv"
    package = venv / "lib" / "site-packages" / "assay"
    data = package / "data" / "goldens" / "smoke" / "a-task"
    data.mkdir(parents=True)
    monkeypatch.setattr(_sandbox, "package_folder", lambda: package)
    monkeypatch.setattr(sys, "prefix", str(venv))
    monkeypatch.setenv("PATH", "/usr/bin")
    # assay's data and a packaged task's folder are masked inside it, not a reason to leave it out.
    fenced = [str(package / "data"), str(data)]
    assert str(venv) in _sandbox.toolchain(fenced)
    world = _sandbox.World(tmp_path / "wt", tmp_path / "io", (str(venv),), tuple(fenced))
    assert world.masked() == [str(package / "data")]  # the task's folder is inside that mask
    # A venv holding the project, a goldens folder or the home is never mounted.
    for held in (venv / "project", venv / "goldens", venv / "home"):
        assert str(venv) not in _sandbox.toolchain([*fenced, str(held)])
