"""Write goldens and outputs files; the sample project of two consistent markdown goldens."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ORIGIN = "\nWhat the golden checks.\n\n## Origin\nWritten by hand for the CLI tests.\n"


def write_golden(folder: Path, name: str, frontmatter: str, body: str = "") -> Path:
    """Write ``folder/name`` as a markdown golden: ``---``, the frontmatter text, ``---``, body."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    text = "---\n" + frontmatter.strip("\n") + "\n---\n" + body
    path.write_text(text, encoding="utf-8")
    return path


def write_json(path: Path, value: Any) -> Path:
    path.write_text(json.dumps(value), encoding="utf-8")
    return path


SQL_GOLDEN = """\
id: sql-active-users
input: "List the email of every active user (table users)."
expected: "SELECT email FROM users WHERE active = TRUE;"
asserts:
  - 'contains:FROM'
  - 'contains:users'
"""

JSON_GOLDEN = """\
id: json-invoice
input: "Extract the invoice number as JSON."
expected: '{"invoice": "INV-1042"}'
asserts:
  - is-json
  - 'contains:INV-1042'
"""

GOOD_OUTPUTS = {
    "sql-active-users": "SELECT email FROM users WHERE active = TRUE;",
    "json-invoice": '{"invoice": "INV-1042"}',
}

BROKEN_OUTPUTS = {
    # The SQL answer lost its FROM clause: 'contains:FROM' fails, 'contains:users' still passes.
    "sql-active-users": "SELECT email users WHERE active = TRUE;",
    "json-invoice": '{"invoice": "INV-1042"}',
}


@dataclass(frozen=True)
class GoldensProject:
    root: Path
    goldens: Path
    good: Path
    broken: Path

    @property
    def baseline(self) -> Path:
        return self.root / "assay-baseline.json"


def make_project(root: Path) -> GoldensProject:
    """Two consistent markdown goldens (with an Origin section) plus good and broken outputs."""
    goldens = root / "goldens"
    write_golden(goldens, "sql-active-users.md", SQL_GOLDEN, ORIGIN)
    write_golden(goldens, "json-invoice.md", JSON_GOLDEN, ORIGIN)
    return GoldensProject(
        root=root,
        goldens=goldens,
        good=write_json(root / "good.json", GOOD_OUTPUTS),
        broken=write_json(root / "broken.json", BROKEN_OUTPUTS),
    )
