"""Helpers shared by commands."""

from __future__ import annotations

from pathlib import Path
from typing import Any

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


def verdict_to_stderr(document: dict[str, Any], output: Path | None) -> None:
    """With ``--output`` stdout is empty: the verdict and the regressions go to stderr."""
    if output is None:
        return
    from assay.views._text import render_verdict

    click.echo(render_verdict(document, str(output)), err=True, nl=False)
