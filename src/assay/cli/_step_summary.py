"""Writing the GitHub step summary (the views themselves live in :mod:`assay.views`)."""

from __future__ import annotations

import os
from pathlib import Path

import click


def append_step_summary(markdown: str) -> None:
    """On GitHub Actions, add the Markdown summary to the job's step summary (its protocol is
    appending to the file it names)."""
    target = os.environ.get("GITHUB_STEP_SUMMARY")
    if not target:
        return
    from assay.errors import AssayError
    from assay.io import append_text

    try:
        append_text(Path(target), markdown if markdown.endswith("\n") else markdown + "\n")
    except AssayError as exc:
        # The report itself was delivered; a summary that cannot be added is not worth exit 1.
        click.echo(f"assay: warning: GITHUB_STEP_SUMMARY: {exc}", err=True)
