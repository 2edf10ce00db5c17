"""The real browser the HTML report is checked in (tests) and timed and shot in (bench/,
scripts/): Debian's Chromium, headless, without the features that would reach the network."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

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


def launched_chromium() -> Iterator[Any]:
    """A pytest fixture body: the launched browser, for a module's tests (skipped where there is
    no Chromium or no Playwright), closed after them."""
    import pytest

    if not CHROMIUM.exists():
        pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    with sync_api.sync_playwright() as playwright:
        # A generous start-up limit (not a speed assertion): a loaded CI box can be slow to start.
        chromium = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, timeout=120_000
        )
        yield chromium
        chromium.close()
