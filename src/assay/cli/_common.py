"""Helpers shared by commands."""

from __future__ import annotations

from pathlib import Path

import click


def emit(text: str, output: Path | None) -> None:
    """Print ``text`` or write it atomically to ``output``.

    Raises:
        AssayError: ``output`` cannot be written or is not a regular file (never written through).
    """
    if output is None:
        click.echo(text, nl=False)
    else:
        from assay.io import atomic_write_text

        atomic_write_text(output, text)
