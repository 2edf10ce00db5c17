"""Benchmark sealing: a 100,000-event journal with 1 KB of content per event.

Usage: python bench/attest_bench.py [--events 100000]

Writes a journal through assay.attest.Journal (not timed), then times
`assay attest seal ... --json` end to end in a fresh process (target: under 30 s).
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import time
from pathlib import Path

OUT = Path(os.environ.get("ASSAY_BENCH_OUT") or Path(__file__).resolve().parent / "out") / "attest"
WORDS = (
    "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi "
    "rho sigma tau upsilon phi chi psi omega build test deploy config module parser"
).split()

GOLDEN = """---
id: smoke-task
input: "Fix the parser."
expected: "The parser now rejects trailing commas in arrays and objects, per RFC 8259."
rubric: "The fix must reject trailing commas without slowing down valid input parsing."
completion_signals: ["a test proves trailing commas in arrays are rejected"]
asserts: ["icontains:trailing commas"]
---
## Origin
bench/attest_bench.py
"""


def make(events: int) -> Path:
    journal = OUT / f"journal-{events}.jsonl"
    if journal.exists():
        return journal
    from assay.attest import Journal

    (OUT / "goldens" / "smoke").mkdir(parents=True, exist_ok=True)
    (OUT / "goldens" / "smoke" / "task.md").write_text(GOLDEN, encoding="utf-8")
    (OUT / "worktree").mkdir(exist_ok=True)
    rng = random.Random(7)
    tmp = journal.with_suffix(".tmp")
    tmp.unlink(missing_ok=True)
    j = Journal(tmp)
    for i in range(events):
        text = " ".join(rng.choice(WORDS) for _ in range(150))[:1024]
        j.append("read", path=f"src/file{i % 300}.py", content=text)
    tmp.rename(journal)
    return journal


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=100_000)
    args = parser.parse_args()
    journal = make(args.events)
    key = OUT / "bench.key"
    env = {**os.environ, "ASSAY_KEY_FILE": str(key)}
    if not key.exists():
        subprocess.run(
            [sys.executable, "-m", "assay", "attest", "keygen"],
            env=env,
            check=True,
            capture_output=True,
        )
    start = time.perf_counter()
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "assay",
            "attest",
            "seal",
            str(OUT / "goldens"),
            "--task",
            "smoke-task",
            "--journal",
            str(journal),
            "--worktree",
            str(OUT / "worktree"),
            "--json",
        ],
        cwd=OUT,
        env=env,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(proc.stderr)
    size = journal.stat().st_size / 1e6
    print(f"seal {args.events:,} events ({size:.0f} MB journal): {wall:.2f} s (target < 30 s)")


if __name__ == "__main__":
    main()
