"""Helpers shared by commands."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import click

from assay.views import render


def _escaped_surrogates(text: str) -> str:
    """``text`` with each lone surrogate (an outputs file may hold ``"\\ud800"``, which no UTF-8
    stream can carry) written as its JSON escape: JSON stays exact, text shows what was there."""
    import re

    return re.sub("[\ud800-\udfff]", lambda m: f"\\u{ord(m.group()):04x}", text)


def chosen_format(as_json: bool, fmt: str | None) -> str:
    """The format asked for (``--json`` is ``--format json``, a ``click.UsageError`` with
    another), else text."""
    if as_json and fmt not in (None, "json"):
        raise click.UsageError(f"--json and --format {fmt} cannot be used together")
    return "json" if as_json else (fmt or "text")


def emit(text: str, output: Path | None) -> None:
    """Print ``text`` or write it atomically to ``output`` (an AssayError when it cannot be
    written or is not a regular file, which is never written through)."""
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


def deliver(text: str, document: dict[str, Any], output: Path | None) -> None:
    """Print the report ``text`` of ``document`` or write it to ``output`` (stdout is then
    empty: the verdict and the regressions go to stderr), and on GitHub Actions add the
    document's Markdown summary to the job's step summary."""
    emit(text, output)
    if output is not None:
        from assay.views import render_verdict

        click.echo(render_verdict(document, str(output)), err=True, nl=False)
    if os.environ.get("GITHUB_STEP_SUMMARY"):
        append_step_summary(render("markdown", document))


def append_step_summary(markdown: str) -> None:
    """Add the Markdown summary to the GitHub Actions job's step summary (its protocol is
    appending to the file it names; only called where ``GITHUB_STEP_SUMMARY`` is set)."""
    from assay.errors import AssayError
    from assay.io import append_text

    target = Path(os.environ["GITHUB_STEP_SUMMARY"])
    try:
        append_text(target, markdown if markdown.endswith("\n") else markdown + "\n")
    except AssayError as exc:
        # The report itself was delivered; a summary that cannot be added is not worth exit 1.
        click.echo(f"assay: warning: GITHUB_STEP_SUMMARY: {exc}", err=True)
