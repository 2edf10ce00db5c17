"""Helpers shared by commands."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click


def _escaped_surrogates(text: str) -> str:
    """``text`` with each lone surrogate (an outputs file may hold ``"\\ud800"``, which no UTF-8
    stream can carry) written as its JSON escape: JSON stays exact, text shows what was there."""
    import re

    return re.sub("[\ud800-\udfff]", lambda m: f"\\u{ord(m.group()):04x}", text)


def chosen_format(as_json: bool, fmt: str | None) -> str:
    """The format asked for (``--json`` is ``--format json``), else text.

    Raises:
        click.UsageError: ``--json`` with another format.
    """
    if as_json and fmt not in (None, "json"):
        raise click.UsageError(f"--json and --format {fmt} cannot be used together")
    return "json" if as_json else (fmt or "text")


def emit(text: str, output: Path | None) -> None:
    """Print ``text`` or write it atomically to ``output``.

    Raises:
        AssayError: ``output`` cannot be written or is not a regular file (never written through).
    """
    if output is None:
        try:
            click.echo(text, nl=False)
        except UnicodeEncodeError:  # raised before anything is written: write it escaped
            click.echo(_escaped_surrogates(text), nl=False)
    else:
        from assay.io import atomic_write_text

        try:
            atomic_write_text(output, text)
        except UnicodeEncodeError:
            atomic_write_text(output, _escaped_surrogates(text))


def verdict_to_stderr(document: dict[str, Any], output: Path | None) -> None:
    """With ``--output`` stdout is empty: the verdict and the regressions go to stderr."""
    if output is None:
        return
    from assay.views import render_verdict

    click.echo(render_verdict(document, str(output)), err=True, nl=False)
