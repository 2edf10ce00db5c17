"""Markdown goldens: YAML frontmatter between ``---`` lines, then a documentation body."""

from __future__ import annotations

import re
from typing import Any

from assay._yaml import yaml_load
from assay.errors import GoldenError
from assay.goldens._frontmatter import UNSUPPORTED, load_frontmatter
from assay.io import decode_utf8

_ORIGIN = re.compile(r"^#{2,}\s+origin\b", re.IGNORECASE | re.MULTILINE)
# The start of a line (the text's lines are split at "\n" only) that may close a frontmatter.
_CLOSING = re.compile(r"(?<=\n)(?:---|\.\.\.)")


def split_frontmatter(text: str, source: str) -> tuple[str, str]:
    """(frontmatter, body) of a text that opens with a ``---`` line and closes it."""
    if not (text.startswith("---\n") or text.startswith("---\r\n")):
        raise GoldenError(
            "no YAML frontmatter: a golden must start with a '---' line", source=source
        )
    start = text.index("\n") + 1
    # Only a line that starts with --- or ... can close the frontmatter: jump from one such
    # line to the next instead of walking every line.
    for match in _CLOSING.finditer(text, start):
        pos = match.start()
        end = text.find("\n", pos)
        line = text[pos:] if end == -1 else text[pos:end]
        if line.rstrip() in ("---", "..."):
            return text[start:pos], "" if end == -1 else text[end + 1 :]
    raise GoldenError("the frontmatter is never closed with a '---' line", source=source)


def parse_markdown(data: bytes, source: str) -> tuple[str, Any, bool]:
    """Parse a markdown golden's bytes (a BOM is tolerated) into (frontmatter text, its value,
    has an Origin section); bytes that are not UTF-8 are a GoldenError naming the offset."""
    text = decode_utf8(data, source, GoldenError)
    front, body = split_frontmatter(text, source)
    # The common flat frontmatter is read in a few microseconds; the rest (and every error,
    # with its message) is PyYAML's.
    value = load_frontmatter(front)
    if value is UNSUPPORTED:
        value = yaml_load(front, source, line_offset=1)
    return front, value, bool(_ORIGIN.search(body))
