"""Shared fixtures for the end-to-end CLI tests: run ``python -m assay`` in a scratch project."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

# Generous: a pathological regex or a 10 MB output must still finish well inside this.
CLI_TIMEOUT_S = 10.0

CliRunner = Callable[..., tuple[int, str, str]]


def run_cli(
    args: Sequence[str | os.PathLike[str]], cwd: Path, timeout: float = CLI_TIMEOUT_S
) -> tuple[int, str, str]:
    """Run ``python -m assay *args`` in ``cwd``; return (exit code, stdout, stderr)."""
    env = dict(os.environ)
    env.pop("PYTHONWARNINGS", None)
    env["PYTHONIOENCODING"] = "utf-8"
    proc = subprocess.run(
        [sys.executable, "-m", "assay", *(str(a) for a in args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=timeout,
        env=env,
        check=False,
    )
    return proc.returncode, proc.stdout, proc.stderr


@pytest.fixture
def cli(tmp_path: Path) -> CliRunner:
    """``cli(*args, cwd=tmp_path)`` → (code, stdout, stderr)."""

    def run(*args: str | os.PathLike[str], cwd: Path | None = None) -> tuple[int, str, str]:
        return run_cli(args, cwd if cwd is not None else tmp_path)

    return run


def write_golden(folder: Path, name: str, frontmatter: str, body: str = "") -> Path:
    """Write ``folder/name`` as a markdown golden: ``---``, the frontmatter text, ``---``, body."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    text = "---\n" + frontmatter.strip("\n") + "\n---\n" + body
    path.write_text(text, encoding="utf-8")
    return path


def write_json(path: Path, value: Any) -> Path:
    path.write_text(json.dumps(value), encoding="utf-8")
    return path


ORIGIN = "\nWhat the golden checks.\n\n## Origin\nWritten by hand for the CLI tests.\n"

SQL_GOLDEN = """\
id: sql-active-users
input: "List the email of every active user (table users)."
expected: "SELECT email FROM users WHERE active = TRUE;"
asserts:
  - 'contains:FROM'
  - 'contains:users'
"""

JSON_GOLDEN = """\
id: json-invoice
input: "Extract the invoice number as JSON."
expected: '{"invoice": "INV-1042"}'
asserts:
  - is-json
  - 'contains:INV-1042'
"""

GOOD_OUTPUTS = {
    "sql-active-users": "SELECT email FROM users WHERE active = TRUE;",
    "json-invoice": '{"invoice": "INV-1042"}',
}

BROKEN_OUTPUTS = {
    # The SQL answer lost its FROM clause: 'contains:FROM' fails, 'contains:users' still passes.
    "sql-active-users": "SELECT email users WHERE active = TRUE;",
    "json-invoice": '{"invoice": "INV-1042"}',
}


@dataclass(frozen=True)
class GoldensProject:
    root: Path
    goldens: Path
    good: Path
    broken: Path

    @property
    def baseline(self) -> Path:
        return self.root / "assay-baseline.json"


@pytest.fixture
def project(tmp_path: Path) -> GoldensProject:
    """Two consistent markdown goldens (with an Origin section) plus good and broken outputs."""
    goldens = tmp_path / "goldens"
    write_golden(goldens, "sql-active-users.md", SQL_GOLDEN, ORIGIN)
    write_golden(goldens, "json-invoice.md", JSON_GOLDEN, ORIGIN)
    return GoldensProject(
        root=tmp_path,
        goldens=goldens,
        good=write_json(tmp_path / "good.json", GOOD_OUTPUTS),
        broken=write_json(tmp_path / "broken.json", BROKEN_OUTPUTS),
    )
