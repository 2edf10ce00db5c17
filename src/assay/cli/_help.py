"""Help people can read: a command's options in named sections, then worked examples."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import click


class SectionedCommand(click.Command):
    """A command whose ``--help`` lists its options under ``sections`` (title -> option
    names, in order; an option in no section, such as --help, goes under "Options") and ends with
    ``examples`` (command lines, each with a comment saying what it does)."""

    def __init__(
        self,
        *args: Any,
        sections: Sequence[tuple[str, Sequence[str]]] = (),
        examples: Sequence[tuple[str, str]] = (),
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.sections = [(title, list(names)) for title, names in sections]
        self.examples = list(examples)

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        records: dict[str, tuple[str, str]] = {}
        for param in self.get_params(ctx):
            if not isinstance(param, click.Option):
                continue  # arguments are in the usage line and the text
            record = param.get_help_record(ctx)
            if record is not None and param.name is not None:
                records[param.name] = record
        placed = {name for _, names in self.sections for name in names}
        rest = [name for name in records if name not in placed]
        for title, names in [*self.sections, ("Options", rest)]:
            rows = [records[n] for n in names if n in records]
            if rows:
                with formatter.section(title):
                    formatter.write_dl(rows)

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        if not self.examples:
            return
        with formatter.section("Examples"):
            indent = " " * formatter.current_indent
            shown = [f"{indent}# {comment}\n{indent}$ {line}\n" for line, comment in self.examples]
            formatter.write("\n".join(shown))
