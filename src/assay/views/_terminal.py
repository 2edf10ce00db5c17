"""The text report on a terminal: statuses and the verdict in colour, lines wrapped to the
terminal's width, through rich (imported only here, only when standard output is a terminal:
pipes, files and CI logs get the plain text, byte for byte)."""

from __future__ import annotations

import io
import os
import re
from collections.abc import Mapping
from typing import Final, TextIO

# What is coloured: a row's status, the verdict, a regression count that is not zero.
_STYLES: Final = {
    "PASS": "green",
    "FAIL": "bold red",
    "ERROR": "bold red",
    "NO-OUTPUT": "red",
    "NEEDS-JUDGE": "yellow",
}
_ROW: Final = re.compile(r"^(\s+)(PASS|FAIL|ERROR|NO-OUTPUT|NEEDS-JUDGE)(?=\s)", re.M)
_VERDICT: Final = re.compile(r"^gate: (passed|FAILED|could not decide)", re.M)
_REGRESSIONS: Final = re.compile(r"[1-9]\d* regression\(s\)")


def use_colour(stream: TextIO, environ: Mapping[str, str] | None = None) -> bool:
    """Colour only on a terminal, never with ``NO_COLOR`` set (https://no-color.org) or on a
    dumb terminal."""
    env = os.environ if environ is None else environ
    if env.get("NO_COLOR") or env.get("TERM") == "dumb":
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a closed or odd stream: plain text
        return False


def styled(text: str, *, width: int | None = None, colour: bool = True) -> str:
    """``text`` with its statuses and verdict coloured (ANSI) and wrapped at ``width`` columns
    (None: the terminal's)."""
    from rich.console import Console
    from rich.text import Text

    out = io.StringIO()
    console = Console(
        file=out,
        width=width,
        force_terminal=colour,
        no_color=not colour,
        color_system="standard" if colour else None,
        highlight=False,
        emoji=False,
        markup=False,
    )
    rich_text = Text(text)
    for match in _ROW.finditer(text):
        rich_text.stylize(_STYLES[match.group(2)], match.start(2), match.end(2))
    for match in _VERDICT.finditer(text):
        style = "bold green" if match.group(1) == "passed" else "bold red"
        rich_text.stylize(style, match.start(1), match.end(1))
    for match in _REGRESSIONS.finditer(text):
        rich_text.stylize("bold red", match.start(), match.end())
    console.print(rich_text, end="", overflow="fold", crop=False)
    return out.getvalue()
