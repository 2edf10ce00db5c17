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


# The suite for hostile inputs (bombs, special files, typos, broken providers, damaged state,
# the peers' test vectors): `pytest -m hostile` runs it alone, in a few seconds.
HOSTILE_MODULES = frozenset(
    {
        "tests/goldens/test_bounded_input.py",
        "tests/goldens/test_near_miss_fields.py",
        "tests/goldens/test_yaml_typed_values.py",
        "tests/goldens/test_strict_goldens.py",
        "tests/asserts/test_peer_semantics.py",
        "tests/asserts/test_schema_offline.py",
        "tests/attest/test_hostile_lines.py",
        "tests/attest/test_lineage_recovery.py",
        "tests/models/test_provider_failures.py",
        "tests/models/test_cache_recovery.py",
        "tests/test_baseline_hostile.py",
        "tests/test_cli_io_errors.py",
        "tests/cli/test_interrupt_at_start.py",
        "tests/test_registered_schemas.py",
    }
)
_ROOT = Path(__file__).resolve().parents[1]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.relative_to(_ROOT).as_posix() in HOSTILE_MODULES:
            item.add_marker(pytest.mark.hostile)
