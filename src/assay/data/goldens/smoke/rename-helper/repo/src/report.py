"""Plain-text tables of timesheet totals."""

import csv
from collections import defaultdict
from collections.abc import Iterable, Sequence


def totals(rows: Iterable[dict[str, str]]) -> dict[tuple[str, str], float]:
    """Hours summed per (person, project)."""
    summed: dict[tuple[str, str], float] = defaultdict(float)
    for row in rows:
        summed[row["person"], row["project"]] += float(row["hours"])
    return dict(summed)


def _fmt(cells: Sequence[str], widths: Sequence[int]) -> str:
    """One table row: text cells left-aligned, numeric cells right-aligned, to ``widths``."""
    out = []
    for cell, width in zip(cells, widths, strict=True):
        numeric = cell.replace(".", "", 1).isdigit()
        out.append(cell.rjust(width) if numeric else cell.ljust(width))
    return " | ".join(out).rstrip()


def render_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A table: the header, a rule, then each row; columns as wide as their widest cell."""
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    rule = "-+-".join("-" * w for w in widths)
    return "\n".join([_fmt(header, widths), rule, *(_fmt(r, widths) for r in rows)])


def render_report(lines: Iterable[str]) -> str:
    """The report of a CSV timesheet: one row per person and project, sorted."""
    summed = totals(csv.DictReader(lines))
    rows = [[person, project, f"{hours:.1f}"] for (person, project), hours in sorted(summed.items())]
    return render_table(["person", "project", "hours"], rows)
