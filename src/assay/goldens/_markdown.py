"""Markdown goldens: YAML frontmatter between ``---`` lines, then a documentation body."""

from __future__ import annotations

import re
from typing import Any

from assay import io as textio
from assay._yaml import yaml_load
from assay.errors import GoldenError

_ORIGIN = re.compile(r"^#{2,}\s+origin\b", re.IGNORECASE | re.MULTILINE)


def decode_utf8(data: bytes, source: str) -> str:
    """Decode a golden's bytes (a BOM is tolerated), or fail naming the file and byte offset."""
    return textio.decode_utf8(data, source, GoldenError)


def split_frontmatter(text: str, source: str) -> tuple[str, str]:
    """Return (frontmatter, body).

    Raises:
        GoldenError: when the file does not open with a ``---`` line or never closes it.
    """
    if not (text.startswith("---\n") or text.startswith("---\r\n")):
        raise GoldenError(
            "no YAML frontmatter: a golden must start with a '---' line", source=source
        )
    start = text.index("\n") + 1
    pos = start
    while True:
        end = text.find("\n", pos)
        line = text[pos:] if end == -1 else text[pos:end]
        if line.rstrip() in ("---", "..."):
            return text[start:pos], "" if end == -1 else text[end + 1 :]
        if end == -1:
            raise GoldenError("the frontmatter is never closed with a '---' line", source=source)
        pos = end + 1


def parse_markdown(data: bytes, source: str) -> tuple[Any, bool]:
    """Parse a markdown golden's bytes into (frontmatter value, has an Origin section)."""
    text = decode_utf8(data, source)
    front, body = split_frontmatter(text, source)
    return yaml_load(front, source, line_offset=1), bool(_ORIGIN.search(body))
