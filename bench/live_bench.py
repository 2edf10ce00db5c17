"""Benchmark live candidates: 2 candidates x 1,000 goldens against an OpenAI-compatible server on
loopback that answers after 50 ms (tests/helpers/fake_openai.py, model "latency-50ms").

1. ``assay eval GOLDENS --candidates FILE --no-cache --json`` in a fresh process, max_concurrency 64
   (global and per provider): wall clock against the ideal makespan ceil(2000 / 64) x 50 ms.
   Target: ratio <= 1.5.
2. A fully cached re-run of the same (after one run that fills the cache). Target: < 2 s.

Wall clock includes the process start (interpreter, imports), as a user or CI would see it.

Usage: python bench/live_bench.py [--goldens 1000] [--candidates 2] [--concurrency 64]
       [--profile]   (also writes a cProfile of the uncached run to bench/out/live-*/run.prof)
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.helpers.fake_openai import FakeOpenAI  # noqa: E402

LATENCY_S = 0.050
MODEL = "latency-50ms"


def write_project(folder: Path, server: FakeOpenAI, goldens: int, candidates: int, limit: int):
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    goldens_path = folder / "goldens.jsonl"
    with open(goldens_path, "w", encoding="utf-8") as handle:
        for i in range(goldens):
            golden = {
                "id": f"live-{i:05d}",
                "input": {"question": f"What is item {i}?", "n": i},
                "asserts": [f"contains:item {i}?"],
            }
            handle.write(json.dumps(golden) + "\n")
    document = {
        "provider": {
            "type": "openai",
            "base_url": server.url,
            "model": MODEL,
            "max_concurrency": limit,
            "timeout_s": 30,
        },
        "candidates": [
            {"id": f"cand-{c}", "prompt": f"Variant {c}. Answer briefly.\n{{{{ input.question }}}}"}
            for c in range(candidates)
        ],
        "max_concurrency": limit,
    }
    candidates_path = folder / "candidates.yaml"
    candidates_path.write_text(json.dumps(document, indent=2), encoding="utf-8")
    return goldens_path, candidates_path


def run_assay(folder: Path, args: list[str], profile: Path | None = None) -> tuple[float, Any]:
    env = dict(os.environ)
    env.pop("PYTHONWARNINGS", None)
    command = [sys.executable]
    if profile is not None:
        command += ["-m", "cProfile", "-o", str(profile)]
        command += ["-m", "assay", *args]
    else:
        command += ["-m", "assay", *args]
    start = time.perf_counter()
    proc = subprocess.run(command, cwd=folder, capture_output=True, text=True, env=env, timeout=600)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"assay exited {proc.returncode}\n{proc.stderr[-4000:]}")
    return wall, json.loads(proc.stdout)


def check(document: Any, expected: int) -> None:
    results = document["results"]
    passed = sum(1 for r in results if r["status"] == "pass")
    if len(results) != expected or passed != expected:
        raise SystemExit(f"expected {expected} passing results, got {passed} of {len(results)}")


def startup_time(folder: Path) -> float:
    """A fresh `python -m assay --version`: the floor any run pays."""
    best = math.inf
    for _ in range(3):
        start = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "assay", "--version"],
            cwd=folder,
            check=True,
            capture_output=True,
        )
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--goldens", type=int, default=1000)
    parser.add_argument("--candidates", type=int, default=2)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--profile", action="store_true")
    options = parser.parse_args()
    total = options.goldens * options.candidates
    out = Path(os.environ.get("ASSAY_BENCH_OUT") or ROOT / "bench" / "out")
    folder = out / f"live-{options.candidates}x{options.goldens}"
    with FakeOpenAI() as server:
        goldens, candidates = write_project(
            folder, server, options.goldens, options.candidates, options.concurrency
        )
        args = ["eval", str(goldens), "--candidates", str(candidates), "--json"]
        startup = startup_time(folder)
        ideal = math.ceil(total / options.concurrency) * LATENCY_S

        # 1. Uncached, in a fresh process.
        before = server.total
        wall, document = run_assay(folder, [*args, "--no-cache"])
        check(document, options.goldens * options.candidates)
        requests = server.total - before
        if requests != total:
            raise SystemExit(f"expected {total} requests, the server saw {requests}")
        print(
            f"{options.candidates} candidates x {options.goldens:,} goldens, 50 ms latency, "
            f"max_concurrency {options.concurrency}, --no-cache: {wall:.3f} s "
            f"(ideal {ideal:.3f} s, ratio {wall / ideal:.2f}, target <= 1.5; "
            f"server peak in flight {server.max_in_flight}; process start {startup:.3f} s)"
        )

        # 2. Fill the cache, then a fully cached re-run.
        server.max_in_flight = 0
        fill_wall, document = run_assay(folder, args)
        check(document, total)
        before = server.total
        cached_wall, document = run_assay(folder, args)
        check(document, total)
        hits = document["summary"]["model_calls"]["cache_hits"]
        if server.total != before or hits != total:
            raise SystemExit(f"the cached re-run made {server.total - before} request(s)")
        print(
            f"cache-filling run: {fill_wall:.3f} s; fully cached re-run: {cached_wall:.3f} s "
            f"({hits:,} cache hits, 0 requests; target < 2 s)"
        )

        if options.profile:
            profile = folder / "run.prof"
            run_assay(folder, [*args, "--no-cache"], profile=profile)
            print(f"profile of an uncached run: {profile}")


if __name__ == "__main__":
    main()
