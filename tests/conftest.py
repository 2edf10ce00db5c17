"""Fixtures for every test: the CLI runner and the two-golden sample project in ``tmp_path``."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.helpers.cli import CliResult, CliRunner, Env, run_cli, run_cli_subprocess
from tests.helpers.goldens import GoldensProject, make_project


@pytest.fixture
def cli(tmp_path: Path) -> CliRunner:
    """``cli(*args, cwd=tmp_path, env=None)`` → (code, stdout, stderr), run in-process."""

    def run(
        *args: str | os.PathLike[str], cwd: Path | None = None, env: Env | None = None
    ) -> CliResult:
        return run_cli(args, cwd if cwd is not None else tmp_path, env=env)

    return run


@pytest.fixture
def cli_process(tmp_path: Path) -> CliRunner:
    """Like ``cli``, but a real ``python -m assay`` process: for what only a process shows."""

    def run(
        *args: str | os.PathLike[str], cwd: Path | None = None, env: Env | None = None
    ) -> CliResult:
        return run_cli_subprocess(args, cwd if cwd is not None else tmp_path, env=env)

    return run


@pytest.fixture
def project(tmp_path: Path) -> GoldensProject:
    """Two consistent markdown goldens (with an Origin section) plus good and broken outputs."""
    return make_project(tmp_path)
