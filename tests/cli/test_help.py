"""``assay`` with no arguments and ``assay --help`` show the same help."""

from __future__ import annotations

from tests.helpers.cli import CliRunner


def test_help_lists_every_command_and_both_help_flags(cli: CliRunner) -> None:
    code, out, err = cli("--help")
    assert (code, err) == (0, "")
    for command in ("gate", "eval", "bench", "report", "failures", "attest", "cache", "init"):
        assert f"\n  {command} " in out
    assert "-h, --help" in out


def test_bare_assay_shows_the_same_help_as_help(cli: CliRunner) -> None:
    assert cli() == cli("--help")
