"""How a path is shown in reports: relative to the working directory when it lies inside it.

A CI runner's absolute checkout path says nothing a reader needs and would put the machine's
layout into every pull-request comment, JUnit file and HTML report.
"""

from __future__ import annotations

import os
from pathlib import Path


def shown_path(path: Path | str) -> str:
    """``path`` relative to the working directory when it is inside it, else as given."""
    text = os.fspath(path)
    if not os.path.isabs(text):
        return text
    try:
        here = Path.cwd()
    except OSError:  # the working directory was removed: nothing to be relative to
        return text
    try:
        return str(Path(text).relative_to(here))
    except ValueError:
        return text


__all__ = ["shown_path"]
