"""``assay`` with no arguments and ``assay --help`` show the same help."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.cli import CliRunner


def test_help_lists_every_command_and_both_help_flags(cli: CliRunner) -> None:
    code, out, err = cli("--help")
    assert (code, err) == (0, "")
    for command in ("gate", "eval", "bench", "report", "failures", "attest", "cache", "init"):
        assert f"\n  {command} " in out
    assert "-h, --help" in out


def test_bare_assay_shows_the_same_help_as_help(cli: CliRunner) -> None:
    assert cli() == cli("--help")


def test_the_retired_run_command_is_one_line_naming_what_replaced_it(cli: CliRunner) -> None:
    for args in (("run", "--outputs", "outputs.json"), ("run", "--help"), ("run",)):
        code, out, err = cli(*args)
        assert (code, out) == (1, "")
        assert err == (
            "assay: error: assay run is retired: use assay gate (the outputs you give), assay "
            "eval (prompt candidates through their models) or assay bench (an agent on the "
            "tasks)\n"
        )


def _options_by_command() -> dict[str, dict[str, tuple[str, ...]]]:
    """Each long option of every command and subcommand -> {command path: its short flags}."""
    import click

    from assay.cli import cli

    context = click.Context(cli, info_name="assay")
    found: dict[str, dict[str, tuple[str, ...]]] = {}

    def walk(command: click.Command, path: str) -> None:
        if isinstance(command, click.Group):
            for name in command.list_commands(context):
                sub = command.get_command(context, name)
                assert sub is not None
                walk(sub, f"{path} {name}")
            return
        for param in command.params:
            if isinstance(param, click.Option):
                names = [*param.opts, *param.secondary_opts]
                shorts = tuple(sorted(n for n in names if not n.startswith("--")))
                for name in names:
                    if name.startswith("--"):
                        found.setdefault(name, {})[path] = shorts

    walk(cli, "assay")
    return found


def test_an_option_has_the_same_short_flag_on_every_command_that_takes_it() -> None:
    # `-o` on report and merge as on gate, `-w`/`-b` on merge, `-t` on tasks list (item 19).
    differing = {
        option: commands
        for option, commands in _options_by_command().items()
        if len(set(commands.values())) > 1
    }
    assert differing == {}


def test_the_short_flags_the_issue_names_work(cli: CliRunner, tmp_path: Path) -> None:
    code, _, err = cli("gate", "--example", cwd=tmp_path)
    assert code == 0, err
    for command in ("report", "failures"):
        code, out, err = cli(command, "-o", f"{command}.txt", cwd=tmp_path)
        assert (code, out) == (0, ""), err
        assert (
            (tmp_path / f"{command}.txt")
            .read_text(encoding="utf-8")
            .startswith("run " if command == "report" else "failures in run ")
        )
    code, out, err = cli("tasks", "list", "-t", "smoke", cwd=tmp_path)
    assert code == 0, err
