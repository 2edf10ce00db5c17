"""The console script's entry point, kept free of imports so that Ctrl-C is handled from the
first moment: importing the CLI (click, the commands) takes tens of milliseconds, and an
interrupt in that window used to print a traceback instead of exiting 130."""

from __future__ import annotations

import sys


def main() -> None:
    """Import the CLI and run it; an interrupt at any point exits 130 with one line."""
    try:
        from assay.cli import main as cli_main
    except KeyboardInterrupt:
        sys.stderr.write("assay: interrupted\n")
        sys.exit(130)
    cli_main()
