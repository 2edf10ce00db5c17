"""Benchmark ``assay view``: a 10,000-result run page in the browser, and the server's start-up.

Usage: python bench/view_bench.py [--results 10000] [--runs 200] [--repeat 5]

1. Render: a project of generated markdown goldens (three asserts each, one in seven outputs
   broken, ``keep_outputs = true``) is scored by a real ``assay gate`` run, which saves its run
   record; a real ``assay view`` serves it and Debian's headless Chromium (Playwright) opens
   ``#/run/ID`` in a fresh page each repeat. The page's own performance marks give the figure:
   ``run:total`` from the route starting (the API request) to the first frame with the rows
   drawn, and ``run:render`` from the JSON parsed to that frame. The target is under 1 s.
2. Start-up: a project with ``--runs`` saved runs (one real gate run's record saved again under
   that many run ids, as ``save_run`` names them); wall time from starting ``python -m assay
   view --port 0`` to its printed URL answering a GET (the page), and to ``/api/runs`` answering
   with every run. The target is under 0.5 s to the URL answering.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
import urllib.request
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the browser the tests use
from html_bench import golden_text  # the same generated goldens as the HTML report bench
from tests.helpers.browser import CHROMIUM, CHROMIUM_ARGS

OUT = Path(os.environ.get("ASSAY_BENCH_OUT") or Path(__file__).resolve().parent / "out")


def output_for(i: int) -> str:
    return f"DELETE FROM t{i % 97}" if i % 7 == 0 else f"SELECT name FROM t{i % 97}"


def _assay(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONWARNINGS"}
    return subprocess.run(
        [sys.executable, "-m", "assay", *args], cwd=root, capture_output=True, text=True, env=env
    )


def gate_project(root: Path, n: int) -> str:
    """A project of ``n`` goldens scored once by ``assay gate`` (outputs kept); its run id."""
    shutil.rmtree(root, ignore_errors=True)
    (root / "goldens").mkdir(parents=True)
    for i in range(n):
        (root / "goldens" / f"g{i:05d}.md").write_text(golden_text(i), encoding="utf-8")
    outputs = {f"g{i:05d}": output_for(i) for i in range(n)}
    (root / "outputs.json").write_text(json.dumps(outputs), encoding="utf-8")
    (root / "assay.toml").write_text('goldens = "goldens"\nkeep_outputs = true\n', "utf-8")
    done = _assay(root, "gate", "--outputs", "outputs.json", "--no-cache")
    if done.returncode not in (0, 2):
        raise SystemExit(f"assay gate failed: {done.stderr}")
    return sorted(p.stem for p in (root / ".assay" / "runs").glob("eval_run_*.json"))[-1]


class Viewer:
    """A real ``assay view --port 0`` over ``root`` while the block runs."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def __enter__(self) -> Viewer:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONWARNINGS"}
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "assay", "view", "--port", "0"],
            cwd=self.root,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line.startswith("assay view: http://"):
            self.proc.kill()
            raise SystemExit(f"assay view did not start: {line}{self.proc.communicate()[1]}")
        self.url = line.split(": ", 1)[1].strip()
        return self

    def get(self, path: str) -> bytes:
        with urllib.request.urlopen(self.url + path.lstrip("/"), timeout=30) as answer:
            return bytes(answer.read())

    def __exit__(self, *exc: object) -> None:
        self.proc.terminate()
        self.proc.communicate(timeout=10)


def render_times(browser: Any, viewer: Viewer, run_id: str, repeat: int) -> list[dict[str, float]]:
    out = []
    for _ in range(repeat):
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        errors: list[str] = []
        page.on("pageerror", lambda e, errors=errors: errors.append(str(e)))
        page.goto(f"{viewer.url}#/run/{run_id}")
        page.wait_for_selector("body[data-ready=run]", state="attached", timeout=60_000)
        marks = page.evaluate(
            """(id) => { const out = Object.fromEntries(performance.getEntriesByType("measure")
            .map((m) => [m.name, m.duration]));
            const start = performance.getEntriesByName("run:start")[0].startTime;
            const api = performance.getEntriesByType("resource")
              .find((r) => r.name.endsWith("/api/runs/" + id));
            out.answered = api.responseEnd - start; return out; }""",
            run_id,
        )
        rows = page.locator(".vrow").count()
        # One keystroke's worth of searching over every result, measured inside the page.
        search_ms = page.evaluate(
            """() => { const f = document.getElementById("search"); const t = performance.now();
            f.value = "g0999"; f.dispatchEvent(new Event("input"));
            return performance.now() - t; }"""
        )
        page.close()
        if errors or rows == 0:
            raise SystemExit(f"the run page failed: {errors or 'no rows'}")
        figures = {"total": marks["run:total"], "render": marks["run:render"], "search": search_ms}
        print(
            f"  run page: {figures['total']:.0f} ms to the rows drawn (the API's answer received "
            f"at {marks['answered']:.0f} ms; drawn {figures['render']:.0f} ms after the JSON), "
            f"{rows} rows in the page; one search keystroke {search_ms:.0f} ms"
        )
        out.append(figures)
    return out


def bench_render(browser: Any, n: int, repeat: int) -> None:
    root = OUT / f"view-{n}"
    started = time.perf_counter()
    run_id = gate_project(root, n)
    record = root / ".assay" / "runs" / f"{run_id}.json"
    print(
        f"{n} goldens scored and saved in {time.perf_counter() - started:.1f} s "
        f"(record {record.stat().st_size / 1e6:.1f} MB)"
    )
    with Viewer(root) as viewer:
        size = len(viewer.get(f"/api/runs/{run_id}"))
        print(f"  /api/runs/{run_id}: {size / 1e6:.1f} MB of JSON")
        times = render_times(browser, viewer, run_id, repeat)
    total = [t["total"] for t in times]
    print(
        f"run page, {n} results: best {min(total):.0f} ms, median {statistics.median(total):.0f} "
        f"ms, worst {max(total):.0f} ms (target < 1000 ms)"
    )


def many_runs(root: Path, count: int) -> None:
    """``count`` saved runs: one real gate run's record saved again under as many run ids."""
    from assay.gate._store import runs_dir, save_run

    gate_project(root, 20)
    folder = runs_dir(root)
    first = next(folder.glob("eval_run_*.json"))
    record = json.loads(first.read_text(encoding="utf-8"))
    first.unlink()
    for key in ("schema_version", "run_id"):
        record.pop(key, None)
    start = datetime(2026, 1, 1, tzinfo=UTC)
    for i in range(count):
        save_run(root, record, now=start + timedelta(hours=i))


def bench_startup(runs: int, repeat: int) -> None:
    root = OUT / f"view-runs-{runs}"
    many_runs(root, runs)
    answered, listed = [], []
    for _ in range(repeat):
        with Viewer(root) as viewer:
            viewer.get("/")
            answered.append(time.perf_counter() - viewer.started)
            body = json.loads(viewer.get("/api/runs"))
            listed.append(time.perf_counter() - viewer.started)
        if len(body["runs"]) != runs:
            raise SystemExit(f"/api/runs listed {len(body['runs'])} runs, not {runs}")
        ms = answered[-1] * 1000, listed[-1] * 1000
        print(f"  start → URL answers {ms[0]:.0f} ms; → /api/runs {ms[1]:.0f} ms")
    print(
        f"assay view start-up, {runs} saved runs: URL answering best {min(answered) * 1000:.0f} "
        f"ms, median {statistics.median(answered) * 1000:.0f} ms (target < 500 ms); "
        f"first /api/runs median {statistics.median(listed) * 1000:.0f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        sys.exit("needs playwright (pip install playwright) and /usr/bin/chromium")
    bench_startup(args.runs, args.repeat)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            bench_render(browser, args.results, args.repeat)
        finally:
            browser.close()


if __name__ == "__main__":
    main()
