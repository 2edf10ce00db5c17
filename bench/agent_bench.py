"""Benchmark the agent benchmark: score N tasks' telemetry (JSONL) end to end.

Usage: python bench/agent_bench.py [--tasks 50000]

Generates N golden tasks (JSONL) across three tiers, with completion signals, owned files and
one output assert each, plus one telemetry row per task (a mix of passes and every failure
category), then times `assay bench GOLDENS --telemetry FILE --no-save --json` in a fresh process.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

OUT = Path(os.environ.get("ASSAY_BENCH_OUT") or Path(__file__).resolve().parent / "out")
TIERS = ("smoke", "standard", "stretch")


def generate(n: int) -> tuple[Path, Path]:
    root = OUT / f"agent-{n}"
    goldens, telemetry = root / "goldens" / "tasks.jsonl", root / "telemetry.jsonl"
    if telemetry.exists():
        return goldens.parent, telemetry
    shutil.rmtree(root, ignore_errors=True)
    goldens.parent.mkdir(parents=True)
    with open(goldens, "w", encoding="utf-8") as handle:
        for i in range(n):
            handle.write(
                json.dumps(
                    {
                        "id": f"t{i:06d}",
                        "tier": TIERS[i % 3],
                        "title": f"task {i}",
                        "input": f"do task {i}",
                        "completion_signals": ["tests pass"],
                        "expected_files_modified": [f"src/m{i % 50}.py"],
                        "owned_files": ["src/**"],
                        "max_duration_s": 600,
                        "asserts": ["icontains:done"],
                        "origin": "bench",
                    }
                )
                + "\n"
            )
    with open(telemetry, "w", encoding="utf-8") as handle:
        for i in range(n):
            kind = i % 10
            row = {
                "task_id": f"t{i:06d}",
                "duration_s": 30 + i % 90,
                "cost_usd": 0.01 * (i % 7),
                "tests_run": 10,
                "tests_passed": 10,
                "completion_signals_checked": 1,
                "completion_signals_passed": 1,
                "files_modified": [f"src/m{i % 50}.py"],
                "output": "done",
                "judge": {"correctness": 4, "style": 4, "test_coverage": 3, "safety": 5},
            }
            if kind == 1:
                row["tests_failed"], row["tests_passed"] = 1, 9
            elif kind == 2:
                row["duration_s"] = 900
            elif kind == 3:
                row["files_modified"] = ["setup.py"]
            elif kind == 4:
                row["merge_conflicts"] = 1
            elif kind == 5:
                row["compile_error"] = True
            elif kind == 6:
                row["completion_signals_passed"] = 0
            handle.write(json.dumps(row) + "\n")
    return goldens.parent, telemetry


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=50_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    goldens, telemetry = generate(args.tasks)
    best = float("inf")
    for _ in range(args.repeat):
        start = time.perf_counter()
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "assay",
                "bench",
                str(goldens),
                "--telemetry",
                str(telemetry),
                "--no-save",
                "--json",
            ],
            cwd=goldens.parent,
            capture_output=True,
            text=True,
        )
        best = min(best, time.perf_counter() - start)
        if proc.returncode != 0:
            sys.exit(f"assay failed: {proc.stderr}")
    composite = json.loads(proc.stdout)["summary"]["composite"]
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(
        f"{args.tasks:,} tasks' telemetry (JSONL): best {best:.3f} s (target < 5 s), "
        f"peak RSS {rss:.0f} MB, score {composite['score']:.3f}"
    )


if __name__ == "__main__":
    main()
