"""The ``assay`` command line. Commands parse flags and delegate to the library.

Exit codes: 0 success, 2 the gate failed (and nothing else), 1 any error (usage errors
included: click's default of 2 for usage errors is overridden), 130 interrupted.
"""

from __future__ import annotations

import gc
import importlib
import sys
from collections.abc import Sequence
from typing import Final

try:  # Ctrl-C while the console script imports the CLI: one line and 130, never a traceback
    import click

    from assay._version import __version__
    from assay.errors import AssayError
except KeyboardInterrupt:
    sys.stderr.write("assay: interrupted\n")
    raise SystemExit(130) from None

# Each command's module, imported only when that command runs (or help lists it): a gate run
# in CI does not pay for the others' imports. In the order `assay --help` lists them.
COMMANDS: Final = {
    "init": "assay.cli.init:init_command",
    "gate": "assay.cli.gate:gate_command",
    "eval": "assay.cli.eval_:eval_command",
    "bench": "assay.cli.bench:bench_command",
    "merge": "assay.cli.merge:merge_command",
    "report": "assay.cli.report:report_command",
    "failures": "assay.cli.report:failures_command",
    "runs": "assay.cli.runs:runs_group",
    "view": "assay.cli.view:view_command",
    "attest": "assay.cli.attest:attest_group",
    "cache": "assay.cli.cache:cache_group",
    "tasks": "assay.cli.tasks:tasks_group",
    "import": "assay.cli.import_:import_group",
}
# Commands that are gone, and what does their job now: one line naming them, exit 1, not run.
RETIRED: Final = {
    "run": "use assay gate (the outputs you give), assay eval (prompt candidates through their "
    "models) or assay bench (an agent on the tasks)",
}


class _LazyGroup(click.Group):
    """A group whose commands are imported by name when needed (click's lazy-loading recipe)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        module_name, attribute = target.split(":")
        command = getattr(importlib.import_module(module_name), attribute)
        assert isinstance(command, click.Command)
        return command

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        hint = RETIRED.get(args[0]) if args else None
        if hint is not None:
            # A notice, not click's usage text: the user knows the command, it is gone.
            raise AssayError(f"assay {args[0]} is retired: {hint}")
        return super().resolve_command(ctx, args)


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="assay")
def cli() -> None:
    """assay: evaluation harness and CI regression gate for LLM prompts and coding agents."""


def main(argv: Sequence[str] | None = None) -> None:
    """Console-script entry point: maps every outcome onto the documented exit codes."""
    args = list(argv) if argv is not None else sys.argv[1:]
    if not args:
        # Bare `assay`: show the commands (click 8.2 treats this as a usage error).
        click.echo(cli.get_help(click.Context(cli, info_name="assay", **cli.context_settings)))
        sys.exit(0)
    # A run builds a great many small objects that live until it ends and form no cycles
    # (goldens, results, the JSON document): the cyclic collector, which would find nothing,
    # scans them rarely. Restored after, for in-process callers.
    thresholds = gc.get_threshold()
    gc.set_threshold(20_000, 1_000, 1_000)
    try:
        code = cli.main(args=args, prog_name="assay", standalone_mode=False)
    except click.exceptions.Exit as exc:
        code = exc.exit_code
    except (click.exceptions.Abort, KeyboardInterrupt):
        click.echo("assay: interrupted", err=True)
        code = 130
    except click.ClickException as exc:
        exc.show()
        code = 1
    except AssayError as exc:
        click.echo(f"assay: error: {exc}", err=True)
        code = 1
    except BrokenPipeError:
        # The reader went away (e.g. `assay gate ... | head`): not an error of ours.
        sys.stderr.close()
        code = 0
    finally:
        gc.set_threshold(*thresholds)
    sys.exit(code if isinstance(code, int) else 0)
