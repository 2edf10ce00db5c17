"""The command line: print the report of a timesheet CSV, with a total row."""

import sys
from pathlib import Path

from src.report import _fmt, render_report


def total_line(report: str) -> str:
    """The grand total, formatted like the report's rows (aligned to its columns)."""
    lines = report.splitlines()
    widths = [len(cell) for cell in lines[1].split("-+-")]
    hours = sum(float(line.rsplit("|", 1)[1]) for line in lines[2:])
    return _fmt(["total", "", f"{hours:.1f}"], widths)


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m src.cli.main HOURS.csv", file=sys.stderr)
        return 2
    with Path(argv[0]).open(encoding="utf-8", newline="") as handle:
        report = render_report(handle)
    print(report)
    print(total_line(report))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
