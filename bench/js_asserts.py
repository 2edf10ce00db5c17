"""What one javascript assert costs: 10,000 checks in QuickJS, against the same in Python.

Usage: python bench/js_asserts.py [--asserts 10000] [--repeat 5]

Each row runs ``--asserts`` checks through ``assay.cascade.evaluate`` (a golden with vars, its
context handed to the code, as a gate run does), best of ``--repeat`` runs, and prints the time
per check in µs, less a ``contains`` check's (what the cascade costs anyway). The engine is made
before timing (its one-off start is printed apart). docs/performance.md quotes these figures.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

CASES: dict[str, Any] = {
    "contains (baseline)": "contains:world",
    "javascript, one-line expression": {
        "op": "javascript",
        "value": "output.includes(context.vars.word)",
    },
    "javascript, JSON.parse + GradingResult": {
        "op": "javascript",
        "value": "const n = JSON.parse(output).n;\n"
        "return {pass: n % 2 === 0, score: n / 10, reason: 'n is ' + n};",
    },
    "javascript, transform then contains": {
        "op": "contains",
        "value": "WORLD",
        "transform": {"javascript": "output.toUpperCase()"},
    },
    "python, inline expression": {"op": "python", "value": "context['vars']['word'] in output"},
}


def _timed(fn: Callable[[], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--asserts", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    from assay.asserts import _javascript
    from assay.cascade import evaluate
    from assay.goldens import build_goldens

    started = time.perf_counter()
    _javascript.run_code("assert", "true", "", {}, root=None)
    print(f"engine start (once per process): {(time.perf_counter() - started) * 1e3:.2f} ms")

    outputs = [f'{{"n": {i % 10}, "text": "hello world"}}' for i in range(args.asserts)]
    baseline = None
    print(f"{args.asserts} checks each, best of {args.repeat}:")
    for name, spec in CASES.items():
        golden = build_goldens(
            {"id": "g", "vars": {"word": "world"}, "asserts": [spec]},
            source="bench.yaml",
            default_id=None,
            folder_tier=None,
        )[0]

        def score(golden: Any = golden) -> None:
            for output in outputs:
                evaluate(golden, output, "c")

        per = _timed(score, args.repeat) / args.asserts * 1e6
        if baseline is None:
            baseline = per
            print(f"  {name:42s} {per:7.2f} µs per check")
        else:
            print(f"  {name:42s} {per:7.2f} µs per check ({per - baseline:+.2f} µs over contains)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
