"""Benchmark the HTML report: time from opening a 10,000-golden page to a screenshot.

Usage: python bench/html_bench.py [--goldens 10000] [--candidates 1] [--repeat 3]
       python bench/html_bench.py --docs-screenshot docs/report.png

The suite is scored by the real gate (``run_gate`` on generated markdown goldens, three asserts
each, one in seven outputs broken), rendered with ``render_html`` and opened from a file in
Debian's headless Chromium through Playwright. The figure is wall time from ``page.goto`` to the
end of the first screenshot, in a fresh page each repeat (the browser is started once). The
target is under 3 s. ``--docs-screenshot`` instead writes the README's screenshot: the packaged
example, two candidates, under ``--check`` with a regression and a detail panel open.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from assay.config import load_config
from assay.gate import GateOptions, example_paths, run_gate
from assay.views._html import render_html

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the browser the tests use
from tests.helpers.browser import CHROMIUM, CHROMIUM_ARGS

OUT = Path(os.environ.get("ASSAY_BENCH_OUT") or Path(__file__).resolve().parent / "out")


def golden_text(i: int) -> str:
    return (
        "---\n"
        f"id: g{i:05d}\n"
        f"input: 'Write the query for report {i}.'\n"
        f"expected: 'SELECT name FROM t{i % 97}'\n"
        "asserts:\n"
        "  - 'contains:FROM'\n"
        "  - 'regex:^SELECT\\b'\n"
        "  - 'not-contains:DELETE'\n"
        "---\n"
        f"Generated golden {i}.\n\n## Origin\nbench/html_bench.py\n"
    )


def output_for(i: int, candidate: int) -> str:
    if (i + candidate) % 7 == 0:
        return f"DELETE FROM t{i % 97}"  # broken: two of three asserts fail
    return f"SELECT name FROM t{i % 97}"


def build_report(n: int, candidates: int) -> Path:
    root = OUT / f"html-{n}-{candidates}"
    report = root / "report.html"
    shutil.rmtree(root, ignore_errors=True)
    goldens = root / "goldens"
    goldens.mkdir(parents=True)
    for i in range(n):
        (goldens / f"g{i:05d}.md").write_text(golden_text(i), encoding="utf-8")
    outputs = {
        f"prompt-{c}": {f"g{i:05d}": output_for(i, c) for i in range(n)} for c in range(candidates)
    }
    outputs_path = root / "outputs.json"
    outputs_path.write_text(json.dumps(outputs), encoding="utf-8")
    config = load_config(root)
    options = GateOptions(path=goldens, outputs=outputs_path, no_cache=True)
    run = run_gate(options, config)
    started = time.perf_counter()
    html = render_html(run.to_dict(), run.content())  # the document, then the page
    rendered = time.perf_counter() - started
    report.write_text(html, encoding="utf-8")
    print(
        f"rendered {n} goldens x {candidates} candidate(s) in {rendered:.2f} s, "
        f"{len(html.encode()) / 1e6:.1f} MB"
    )
    return report


def time_to_screenshot(browser: Any, report: Path, shot: Path) -> float:
    page = browser.new_page(viewport={"width": 1366, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    started = time.perf_counter()
    page.goto(report.as_uri(), wait_until="load")
    page.screenshot(path=str(shot))
    elapsed = time.perf_counter() - started
    rows = page.locator("tr.row").count()
    # One keystroke's worth of filtering over every row, measured inside the page.
    filter_ms = page.evaluate(
        """() => { const f = document.getElementById("filter"); const t = performance.now();
        f.value = "g0999"; f.dispatchEvent(new Event("input"));
        const ms = performance.now() - t; f.value = ""; f.dispatchEvent(new Event("input"));
        return ms; }"""
    )
    page.close()
    print(f"  open → screenshot {elapsed:.2f} s; one filter keystroke {filter_ms:.0f} ms")
    if errors or rows == 0:
        raise SystemExit(f"the page failed: {errors or 'no rows'}")
    return elapsed


def docs_screenshot(target: Path, browser: Any) -> None:
    goldens, example_outputs = example_paths()
    outputs = json.loads(example_outputs.read_text(encoding="utf-8"))
    before = {"prompt-v1": outputs, "prompt-v2": outputs}
    v2 = dict(outputs)
    v2["smoke-json-extract-invoice"] = '{"invoice": "INV-1042", "total": "129.50 EUR"}'
    v2["standard-summary-no-pii"] = "A customer cannot reset their password since Tuesday."
    after = {"prompt-v1": outputs, "prompt-v2": v2}
    target = target.resolve()
    # Work inside the temporary folder so the page shows relative paths, not its name.
    with tempfile.TemporaryDirectory() as tmp, contextlib.chdir(tmp):
        root = Path(".")
        config = load_config(root)
        for name, doc in (("before.json", before), ("after.json", after)):
            (root / name).write_text(json.dumps(doc), encoding="utf-8")
        common: dict[str, Any] = {"path": goldens, "similarity": "rapidfuzz", "no_cache": True}
        run_gate(GateOptions(outputs=root / "before.json", mode="write-baseline", **common), config)
        options = GateOptions(outputs=root / "after.json", mode="check", **common)
        run = run_gate(options, config)
        html = render_html(run.to_dict(), run.content())
        report = root / "report.html"
        report.write_text(html, encoding="utf-8")
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        page.goto(report.resolve().as_uri(), wait_until="load")
        page.click("tr.row[data-id='smoke-json-extract-invoice']")
        target.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(target), full_page=True)
        page.close()
    print(f"wrote {target}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--goldens", type=int, default=10_000)
    parser.add_argument("--candidates", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--docs-screenshot", type=Path)
    args = parser.parse_args()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        sys.exit("needs playwright (pip install playwright) and /usr/bin/chromium")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            if args.docs_screenshot is not None:
                docs_screenshot(args.docs_screenshot, browser)
                return
            report = build_report(args.goldens, args.candidates)
            times = [
                time_to_screenshot(browser, report, report.with_suffix(f".{i}.png"))
                for i in range(args.repeat)
            ]
            print(
                f"open → screenshot, {args.goldens} goldens x {args.candidates} candidate(s): "
                f"best {min(times):.2f} s, worst {max(times):.2f} s (target < 3 s)"
            )
        finally:
            browser.close()


if __name__ == "__main__":
    main()
