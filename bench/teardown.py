"""What the interpreter's exit costs a short `assay gate --check`, and what skipping it would save.

Usage: python bench/teardown.py [--goldens 10] [--rounds 40]

Builds the start-up suite of bench/big_suite.py (markdown goldens, three asserts each) and its
baseline, then runs the check (saving its run record, as big_suite.py's start-up row does) in
rounds that alternate three endings of the same process, each a
fresh interpreter running assay's CLI in-process:

- ``normal``: the interpreter's own exit (what assay does);
- ``os._exit``: the process ends without the interpreter's finalisation (what f737846 did);
- ``gc.freeze``: the collector is frozen before the exit, so finalisation collects nothing.

Both shortcuts skip work a project's own code may need at exit (a buffered file held in a
reference cycle is flushed only by the final collection), which is why assay uses neither: this
script measures what that choice costs. Prints the median and range of each, in ms.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from big_suite import make_markdown

RUNNER = """
import gc, os, sys
import assay.cli
ending = sys.argv[4]
sys.argv = ["assay", "gate", sys.argv[1], "--outputs", sys.argv[2], "--check",
            "--baseline", sys.argv[3]]
try:
    assay.cli.main()
except SystemExit:
    pass
sys.stdout.flush()
if ending == "gc.freeze":
    gc.freeze()
elif ending == "os._exit":
    os._exit(0)
elif ending != "normal":
    raise SystemExit(f"unknown ending {ending!r}")
"""
ENDINGS = ("normal", "os._exit", "gc.freeze")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--goldens", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=40)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        goldens, outputs = make_markdown(root / "suite", args.goldens)
        baseline = root / "baseline.json"
        write = [sys.executable, "-m", "assay", "gate", str(goldens), "--outputs", str(outputs)]
        subprocess.run(
            [*write, "--write-baseline", "--baseline", str(baseline)],
            check=True,
            stdout=subprocess.DEVNULL,
            cwd=root,
        )
        (root / "runner.py").write_text(RUNNER, encoding="utf-8")
        command = [
            sys.executable,
            str(root / "runner.py"),
            str(goldens),
            str(outputs),
            str(baseline),
        ]
        times: dict[str, list[float]] = {ending: [] for ending in ENDINGS}
        for _ in range(args.rounds):
            for ending in ENDINGS:
                start = time.perf_counter()
                subprocess.run([*command, ending], check=True, stdout=subprocess.DEVNULL, cwd=root)
                times[ending].append((time.perf_counter() - start) * 1000)
    print(f"python {sys.version.split()[0]}, {args.goldens} goldens, {args.rounds} rounds")
    print("| ending | median | range |\n|---|---|---|")
    for ending, values in times.items():
        median = statistics.median(values)
        print(f"| {ending} | {median:.1f} ms | {min(values):.1f}–{max(values):.1f} ms |")


if __name__ == "__main__":
    main()
