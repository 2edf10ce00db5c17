"""The packaged agent tasks are executable: each folder holding ``task.md`` has a fixture
repository (``repo/``) whose ``verify`` fails, and a reference solution (``solution.sh``) after
which ``verify`` and every command completion signal pass, changing only owned files and every
expected one. Discovered from the folder tree, so a new task is covered without editing this."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from assay.agent._taxonomy import owned
from assay.goldens import Golden, iter_goldens, packaged_root

ROOT = packaged_root()
TASK_FILE = "task.md"
TIMEOUT_S = 60
# Written by Python and pytest in a worktree; never part of a task's change.
NOISE_DIRS = frozenset({"__pycache__", ".pytest_cache"})
# pytest's summary line: tests passed; a test failed or errored.
PASSED = re.compile(r"\b\d+ passed\b")
NOT_PASSED = re.compile(r"\b\d+ (failed|errors?)\b")


def task_folders() -> list[Path]:
    """Every folder holding task.md under the packaged root (none nested in another task)."""
    found: list[Path] = []
    for path in sorted(ROOT.rglob(TASK_FILE)):
        folder = path.parent
        if not any(folder.is_relative_to(f) for f in found):
            found.append(folder)
    return found


TASKS = task_folders()


def task_id(folder: Path) -> str:
    return folder.relative_to(ROOT).as_posix()


def golden_of(folder: Path) -> Golden:
    source = folder / TASK_FILE
    matches = [g for g in iter_goldens(ROOT) if Path(g.source) == source]
    assert len(matches) == 1, f"{source} loads as {len(matches)} golden(s)"
    return matches[0]


def environment() -> dict[str, str]:
    """The worktree's environment: this interpreter's ``python`` (with pytest) first on PATH,
    no bytecode written, nothing of the outer test run leaking into the fixture's pytest."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"PYTHONPATH", "PYTEST_ADDOPTS", "PYTEST_PLUGINS"}
        and not k.startswith("PYTEST_")
    }
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def run(command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command,
        shell=True,  # /bin/sh, as assay runs verify and the signals
        cwd=cwd,
        env=environment(),
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )


def shown(result: subprocess.CompletedProcess[str]) -> str:
    return f"exit {result.returncode}\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}"


def tree(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` by its relative POSIX path, caches left out."""
    files: dict[str, bytes] = {}
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d not in NOISE_DIRS]
        for name in names:
            if name.endswith(".pyc"):
                continue
            path = Path(folder) / name
            files[path.relative_to(root).as_posix()] = path.read_bytes()
    return files


def changed(before: Mapping[str, bytes], after: Mapping[str, bytes]) -> set[str]:
    return {p for p in before.keys() | after.keys() if before.get(p) != after.get(p)}


def commands(golden: Golden) -> list[Mapping[str, Any]]:
    signals: list[Any] = list(golden.fields.get("completion_signals") or [])
    return [s for s in signals if isinstance(s, Mapping)]


def test_ten_packaged_tasks() -> None:
    assert len(TASKS) == 10, [task_id(f) for f in TASKS]


@pytest.mark.parametrize("folder", TASKS, ids=task_id)
def test_task_layout(folder: Path) -> None:
    """task.md loads with its tier (the folder above the task's), next to repo/ with tests and
    solution.sh; the fixture holds no package markers and no caches."""
    golden = golden_of(folder)
    assert golden.tier == folder.parent.name
    assert golden.has_origin
    assert isinstance(golden.fields.get("verify"), str)
    assert (folder / "solution.sh").is_file()
    repo = folder / "repo"
    assert any((repo / "tests").glob("test_*.py")), "repo/tests/ holds no pytest tests"
    stray = [
        p.relative_to(repo).as_posix()
        for p in repo.rglob("*")
        if p.name in {"__init__.py", *NOISE_DIRS} or p.suffix == ".pyc"
    ]
    assert stray == []
    for signal in commands(golden):
        assert set(signal) == {"name", "run"}, signal
        assert all(isinstance(v, str) and v.strip() for v in signal.values()), signal
    owned_files = golden.fields.get("owned_files")
    expected = golden.fields.get("expected_files_modified")
    assert owned_files, "a packaged task declares owned_files"
    assert expected, "a packaged task declares expected_files_modified"
    assert all(owned(p, owned_files) for p in expected), "an expected file is not owned"


@pytest.mark.parametrize("folder", TASKS, ids=task_id)
def test_reference_solution(folder: Path, tmp_path: Path) -> None:
    """verify fails on the fixture; after solution.sh it passes with a pytest summary, every
    command signal passes, and the change is owned and covers every expected file."""
    golden = golden_of(folder)
    verify = golden.fields["verify"]
    worktree = tmp_path / "worktree"
    shutil.copytree(folder / "repo", worktree)
    start = tree(worktree)

    before = run(verify, worktree)
    assert before.returncode != 0, "verify passes before the solution:\n" + shown(before)

    solution = run(f"bash {folder / 'solution.sh'}", worktree)
    assert solution.returncode == 0, "solution.sh failed:\n" + shown(solution)

    after = run(verify, worktree)
    assert after.returncode == 0, "verify fails after the solution:\n" + shown(after)
    output = after.stdout + after.stderr
    assert PASSED.search(output), "no pytest summary in verify's output:\n" + shown(after)
    assert "failed" not in output and not NOT_PASSED.search(output), shown(after)

    for signal in commands(golden):
        result = run(signal["run"], worktree)
        assert result.returncode == 0, f"signal {signal['name']!r} fails:\n" + shown(result)

    modified = changed(start, tree(worktree))
    outside = sorted(p for p in modified if not owned(p, golden.fields["owned_files"]))
    assert outside == [], "the solution modifies files outside owned_files"
    missing = sorted(set(golden.fields["expected_files_modified"]) - modified)
    assert missing == [], "the solution leaves expected files unmodified"
