"""``assay view``: browse the saved runs (or one run document) in a browser, on this machine."""

from __future__ import annotations

import ipaddress
from pathlib import Path

import click

from assay.cli._help import SectionedCommand


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@click.command(
    "view",
    cls=SectionedCommand,
    examples=[
        ("assay view", "browse the saved runs at http://127.0.0.1:8765/"),
        ("assay view --port 0", "on any free port (the URL printed says which)"),
        ("assay view report.json", "one run document alone (a saved record or a --json report)"),
    ],
)
@click.argument("run", required=False, type=click.Path(path_type=Path))
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=8765,
    show_default=True,
    help="The port to serve on (0: any free one).",
)
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="The address to bind: loopback by default (another one serves your runs to the network).",
)
def view_command(run: Path | None, port: int, host: str) -> int:
    """Browse the saved runs in a browser: runs, results, goldens, comparisons, live runs.

    Serves the project's saved runs (.assay/runs/) as a local web app, prints its URL (one
    line) and serves until Ctrl-C. RUN is one run document (a saved record or a --json report)
    to serve alone. Opens no browser: open the printed URL.
    """
    from assay.config import load_config
    from assay.errors import AssayError
    from assay.viewer import serve

    if run is not None and not run.is_file():
        raise AssayError(f"{run}: no such run document")
    if not _is_loopback(host):
        click.echo(
            f"assay: warning: --host {host} is not loopback: anyone who can reach it can read "
            "your runs",
            err=True,
        )
    root = load_config().root
    try:
        serve(root, document=run, host=host, port=port)
    except OSError as exc:
        raise AssayError(f"cannot serve on {host}:{port}: {exc.strerror or exc}") from None
    return 0
