"""Benchmark the goldens gate end to end: `assay gate --check` on generated suites.

Usage: python bench/gate_bench.py [--sizes 10,10000] [--jsonl 100000] [--repeat 3]

Each golden has three asserts (contains, regex, is-json) and a matching output. The script writes
the baseline once, then times `assay gate GOLDENS --outputs FILE --check` as a fresh process
(start-up and imports included) and reports the best wall time and the peak RSS of the child.
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


def golden_text(i: int) -> str:
    return (
        "---\n"
        f"id: g{i:06d}\n"
        f"input: 'question {i}'\n"
        "asserts:\n"
        "  - 'contains:FROM'\n"
        '  - \'regex:"id":\\s*"g\\d+"\'\n'
        "  - is-json\n"
        "---\n"
        f"Generated golden {i}.\n\n## Origin\nbench/gate_bench.py\n"
    )


def output_for(i: int) -> str:
    return json.dumps({"id": f"g{i:06d}", "answer": f"SELECT name FROM t{i % 97}"})


def make_markdown(n: int) -> tuple[Path, Path]:
    root = OUT / f"md-{n}"
    goldens, outputs = root / "goldens", root / "outputs.json"
    if not outputs.exists():
        shutil.rmtree(root, ignore_errors=True)
        for i in range(n):
            tier = ("smoke", "standard", "stretch")[i % 3]
            folder = goldens / tier
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"g{i:06d}.md").write_text(golden_text(i), encoding="utf-8")
        outputs.write_text(json.dumps({f"g{i:06d}": output_for(i) for i in range(n)}))
    return goldens, outputs


def make_jsonl(n: int) -> tuple[Path, Path]:
    root = OUT / f"jsonl-{n}"
    goldens, outputs = root / "goldens", root / "outputs.jsonl"
    if not outputs.exists():
        shutil.rmtree(root, ignore_errors=True)
        goldens.mkdir(parents=True)
        asserts = ["contains:FROM", 'regex:"id":\\s*"g\\d+"', "is-json"]
        with open(goldens / "suite.jsonl", "w", encoding="utf-8") as handle:
            for i in range(n):
                row = {
                    "id": f"g{i:06d}",
                    "input": f"question {i}",
                    "asserts": asserts,
                    "origin": "bench",
                }
                handle.write(json.dumps(row) + "\n")
        with open(outputs, "w", encoding="utf-8") as handle:
            for i in range(n):
                handle.write(json.dumps({"id": f"g{i:06d}", "output": output_for(i)}) + "\n")
    return goldens, outputs


def assay(*args: str, cwd: Path) -> tuple[float, float, int]:
    """Run assay in a fresh process: (wall seconds, peak RSS MB of that child, exit code)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "assay", "gate", *args],
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    wall = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    if proc.returncode not in (0, 2):
        sys.exit(f"assay failed ({proc.returncode}): {proc.stderr}")
    # ru_maxrss of children is the max over all children so far: report it only when it grew.
    return wall, max(peak, before) / 1024, proc.returncode


def bench(label: str, goldens: Path, outputs: Path, repeat: int) -> None:
    cwd = goldens.parent
    common = [str(goldens), "--outputs", str(outputs), "--baseline", str(cwd / "baseline.json")]
    assay(*common, "--write-baseline", cwd=cwd)
    best, rss, code = float("inf"), 0.0, 0
    for _ in range(repeat):
        wall, peak, code = assay(*common, "--check", cwd=cwd)
        best, rss = min(best, wall), max(rss, peak)
    print(
        f"{label:<24} run --check  best {best:6.3f} s  peak RSS {rss:5.0f} MB  exit {code}",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10,10000", help="markdown suite sizes")
    parser.add_argument("--jsonl", default="100000", help="JSONL suite sizes ('' for none)")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"python {sys.version.split()[0]} on {os.cpu_count()} cores", flush=True)
    for n in [int(s) for s in args.sizes.split(",") if s]:
        goldens, outputs = make_markdown(n)
        bench(f"{n:,} markdown goldens", goldens, outputs, args.repeat)
    for n in [int(s) for s in args.jsonl.split(",") if s]:
        goldens, outputs = make_jsonl(n)
        bench(f"{n:,} JSONL goldens", goldens, outputs, max(1, args.repeat - 2))


if __name__ == "__main__":
    main()
