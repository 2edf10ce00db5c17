"""The real browser the HTML report is checked in (tests) and timed and shot in (bench/,
scripts/): Debian's Chromium, headless, without the features that would reach the network."""

from __future__ import annotations

from pathlib import Path
from typing import Final

CHROMIUM: Final = Path("/usr/bin/chromium")
CHROMIUM_ARGS: Final = [
    "--headless",
    "--no-sandbox",  # the tests run as root in a container, where Chromium's sandbox cannot
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
