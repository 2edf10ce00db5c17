"""The README's screenshots, made from real runs: the text report in a real terminal, and the
HTML run history, both drawn by Chromium.

Usage: python scripts/screenshots.py [--out docs]   (needs tmux, /usr/bin/chromium, playwright)

1. ``docs/terminal.png``: a project from ``assay init``, a baseline written, one answer made
   worse, then ``assay gate --outputs outputs.json --check`` run inside tmux (a real terminal:
   assay colours its report and wraps it to the width); tmux's capture of the pane, escapes
   included, is drawn as an SVG by rich and photographed by Chromium.
2. ``docs/history.png``: the same project after a few more runs, ``assay runs list --format
   html``, photographed by Chromium.
3. ``docs/viewer-runs.png``, ``docs/viewer-run.png``, ``docs/viewer-compare.png``: ``assay view``
   over the same project (its runs keep their outputs: ``keep_outputs = true``), the runs page,
   the run with the regression, and that run compared with the baseline run, the regressed
   golden selected; photographed by Chromium from the real server.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the browser the tests use
from tests.helpers.browser import CHROMIUM, CHROMIUM_ARGS

COLUMNS, ROWS = 110, 24


def _assay(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "assay", *args], cwd=project, capture_output=True, text=True
    )


def _project(root: Path) -> Path:
    _assay(root, "init", "demo")
    project = root / "demo"
    with (project / "assay.toml").open("a", encoding="utf-8") as toml:
        toml.write("keep_outputs = true\n")  # for assay view's run and compare pages
    _assay(project, "gate", "--outputs", "outputs.json", "--write-baseline")
    return project


def _worse(project: Path, golden: str, answer: str) -> None:
    path = project / "outputs.json"
    outputs = json.loads(path.read_text(encoding="utf-8"))
    outputs[golden] = answer
    path.write_text(json.dumps(outputs, indent=2), encoding="utf-8")


def _terminal_capture(project: Path, scratch: Path) -> str:
    """The pane of a tmux session that ran the check: its text with the colour escapes.

    The tmux server runs in the foreground (``-D``) on a socket of its own, as a child of this
    script: no daemon, no other tmux touched (and it works where daemon() cannot, e.g. in a
    sandbox whose /dev/null is not a device)."""
    socket = str(scratch / "tmux.sock")
    env = {**os.environ, "TERM": "xterm-256color"}
    env.pop("NO_COLOR", None)
    env.pop("TMUX", None)
    server = subprocess.Popen(
        ["tmux", "-D", "-S", socket, "-f", os.devnull],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    tmux = ["tmux", "-S", socket]
    command = f"cd {project} && {sys.executable} -m assay gate --outputs outputs.json --check"
    try:
        for _ in range(50):  # the server's socket appears once it listens
            if Path(socket).exists():
                break
            time.sleep(0.1)
        size = ["-x", str(COLUMNS), "-y", str(ROWS)]
        # The pane runs the check itself (then waits, so that it can be captured).
        pane = ["sh", "-c", f"{command}; sleep 60"]
        subprocess.run(
            [*tmux, "new-session", "-d", "-s", "shot", *size, *pane], env=env, check=True
        )
        deadline = time.monotonic() + 30
        text = ""
        while time.monotonic() < deadline:
            capture = [*tmux, "capture-pane", "-p", "-e", "-t", "shot"]
            text = subprocess.run(capture, capture_output=True, text=True, check=True).stdout
            if "gate: " in text:
                break
            time.sleep(0.2)
        return f"$ assay gate --outputs outputs.json --check\n{text.rstrip()}\n"
    finally:
        subprocess.run([*tmux, "kill-server"], check=False, capture_output=True)
        server.wait(timeout=10)


def _svg(ansi: str, title: str) -> str:
    from rich.console import Console
    from rich.text import Text

    console = Console(record=True, width=COLUMNS, force_terminal=True, color_system="standard")
    console.print(Text.from_ansi(ansi), end="")
    svg = console.export_svg(title=title)
    # rich's SVG asks a CDN for its font: offline, the local monospace font draws it.
    return re.sub(r'src: local\("([^"]+)"\),\s*url\("https://[^;]*;', r'src: local("\1");', svg)


def _photograph(page_html: Path, out: Path, width: int, height: int) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": width, "height": height})
        page.goto(page_html.as_uri(), wait_until="load")
        page.screenshot(path=str(out), full_page=True)
        browser.close()


def _viewer_shots(project: Path, out: Path) -> None:
    """The runs, run and compare pages of a real ``assay view`` over ``project``."""
    from playwright.sync_api import sync_playwright

    runs = sorted(p.stem for p in (project / ".assay" / "runs").glob("eval_run_*.json"))
    baseline_run, regressed_run = runs[0], runs[1]
    server = subprocess.Popen(
        [sys.executable, "-m", "assay", "view", "--port", "0"],
        cwd=project,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert server.stdout is not None
        url = server.stdout.readline().removeprefix("assay view: ").strip()
        if not url.startswith("http://"):
            sys.exit("assay view did not start")
        shots = (
            ("#/runs", "runs", "viewer-runs.png"),
            (f"#/run/{regressed_run}", "run", "viewer-run.png"),
            (f"#/compare/{baseline_run}/{regressed_run}", "compare", "viewer-compare.png"),
        )
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            for route, ready, name in shots:
                page.goto(url + route)
                page.wait_for_selector(f"body[data-ready={ready}]", state="attached")
                if ready == "compare":
                    page.keyboard.press("Enter")  # the regressed golden's outputs and word diff
                page.screenshot(path=str(out / name), full_page=True)
            browser.close()
    finally:
        server.terminate()
        server.communicate(timeout=10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=Path("docs"))
    out = parser.parse_args().out
    if not (shutil.which("tmux") and CHROMIUM.exists()):
        sys.exit("needs tmux and /usr/bin/chromium")
    scratch = Path(tempfile.mkdtemp(prefix="assay-shots-"))
    try:
        project = _project(scratch)
        good = json.loads((project / "outputs.json").read_text(encoding="utf-8"))
        _worse(project, "sql-active-users", "SELECT * FROM users;")
        capture = _terminal_capture(project, scratch)
        page = scratch / "terminal.html"
        page.write_text(
            '<!DOCTYPE html><html><body style="margin:0;background:#fff">'
            + _svg(capture, "assay gate --check")
            + "</body></html>",
            encoding="utf-8",
        )
        _photograph(page, out / "terminal.png", 1000, 400)
        # A short history: the regression fixed, another one, fixed again.
        _worse(project, "sql-active-users", good["sql-active-users"])
        _assay(project, "gate", "--outputs", "outputs.json", "--check")
        _worse(project, "refund-window", "Refunds are not possible.")
        _assay(project, "gate", "--outputs", "outputs.json", "--check")
        _worse(project, "refund-window", good["refund-window"])
        _assay(project, "gate", "--outputs", "outputs.json", "--check")
        history = scratch / "history.html"
        done = _assay(project, "runs", "list", "--format", "html", "--output", str(history))
        if done.returncode != 0:
            sys.exit(done.stderr)
        _photograph(history, out / "history.png", 1100, 420)
        _viewer_shots(project, out)
        print(
            f"wrote {out / 'terminal.png'}, {out / 'history.png'} and "
            f"{out / 'viewer-runs.png'}, {out / 'viewer-run.png'}, {out / 'viewer-compare.png'}"
        )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
