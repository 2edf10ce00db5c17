"""Format dispatch shared by the commands: which renderer draws which view."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from assay.gate import GateRun

FORMATS = ("text", "json", "markdown", "junit", "html")


def dump_json(document: Any) -> str:
    # Indented JSON goes through the pure-Python encoder (seconds for 100k results); machines
    # reading a pipe get the C encoder's compact form, people at a terminal get it indented.
    if sys.stdout.isatty():
        return json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    return json.dumps(document, ensure_ascii=False, separators=(",", ":")) + "\n"


def gate_view(run: GateRun, fmt: str) -> str:
    if fmt == "json":
        return dump_json(run.to_dict())
    if fmt == "markdown":
        from assay.views._markdown import render_markdown

        return render_markdown(run)
    if fmt == "junit":
        from assay.views._junit import render_junit

        return render_junit(run)
    if fmt == "html":
        from assay.views._html import render_html

        return render_html(
            run, goldens=run.goldens, outputs=run.outputs, baseline=run.baseline_document
        )
    from assay.views._text import render_gate

    return render_gate(run)


def agent_view(
    document: Mapping[str, Any],
    fmt: str,
    comparison: Mapping[str, Any] | None = None,
    compare_note: str | None = None,
) -> str:
    if fmt == "json":
        return dump_json({**document, **({"compare": comparison} if comparison else {})})
    if fmt == "markdown":
        from assay.views._markdown import render_agent_markdown

        return render_agent_markdown(document)
    if fmt == "junit":
        from assay.views._junit import render_agent_junit

        return render_agent_junit(document)
    if fmt == "html":
        from assay.views._html import render_agent_html

        return render_agent_html(document)
    from assay.views._agent_text import render_run

    return render_run(document, comparison, compare_note)


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
