"""The ``--help`` of every command and subcommand, compared with the committed text in
tests/cli/help/ (a help change is a reviewed change). After changing a command on purpose:
``ASSAY_UPDATE_HELP=1 pytest tests/cli/test_help_snapshots.py``, then read the diff."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from assay.cli import COMMANDS, cli

HELP = Path(__file__).parent / "help"
UPDATE = os.environ.get("ASSAY_UPDATE_HELP") == "1"


def _paths() -> Iterator[tuple[str, ...]]:
    yield ()
    context = click.Context(cli, info_name="assay")
    for name in COMMANDS:
        command = cli.get_command(context, name)
        assert command is not None
        yield (name,)
        if isinstance(command, click.Group):
            for sub in command.list_commands(context):
                yield (name, sub)


PATHS = list(_paths())


def _snapshot(path: tuple[str, ...]) -> Path:
    return HELP / ("-".join(("assay", *path)) + ".txt")


def _help(path: tuple[str, ...]) -> str:
    # 80 columns whatever the terminal: the text must not depend on where the tests run.
    result = CliRunner().invoke(cli, [*path, "--help"], prog_name="assay", terminal_width=80)
    assert result.exit_code == 0, result.output
    return result.output


@pytest.mark.parametrize("path", PATHS, ids=lambda p: " ".join(("assay", *p)))
def test_help_is_the_committed_text(path: tuple[str, ...]) -> None:
    text = _help(path)
    snapshot = _snapshot(path)
    if UPDATE:
        snapshot.write_text(text, encoding="utf-8")
    assert snapshot.exists(), f"no committed help for {snapshot.name}: ASSAY_UPDATE_HELP=1"
    assert text == snapshot.read_text(encoding="utf-8")


def test_every_committed_help_is_of_a_command() -> None:
    wanted = {_snapshot(p).name for p in PATHS}
    assert sorted(p.name for p in HELP.glob("*.txt") if p.name not in wanted) == []


@pytest.mark.parametrize("name", ["gate", "eval", "bench"])
def test_the_job_commands_show_sections_and_examples(name: str) -> None:
    text = _help((name,))
    for section in ("Baseline:", "Report:", "Examples:"):
        assert f"\n{section}\n" in text
    assert f"$ assay {name} " in text
    assert "-k, --filter PATTERN" in text and "-q, --quiet" in text and "--json" in text
