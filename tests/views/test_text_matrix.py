"""The text matrix keeps its columns aligned whatever its cells say (``NO-OUTPUT 0.000`` is
wider than a candidate's name)."""

from __future__ import annotations

from assay.views._text import render_text
from tests.helpers.runs import sample_run


def test_every_matrix_row_is_as_wide_as_its_header() -> None:
    text = render_text(sample_run().to_dict())
    lines = text.splitlines()
    start = lines.index("matrix (goldens × candidates):") + 1
    end = lines.index("", start)
    rows = lines[start:end]
    assert len(rows) >= 3 and any("NO-OUTPUT 0.000" in row for row in rows)
    assert len({len(row) for row in rows}) == 1, rows
