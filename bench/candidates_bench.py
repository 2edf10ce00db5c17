"""Benchmark the prompt-candidate API.

1. 3 candidates × 2,000 items, each run_candidate sleeping 20 ms (a simulated model call), at
   max_concurrency 64: the makespan against the ideal ceil(6000 / 64) × 20 ms.
2. 200,000 evaluate_deterministic_scorer calls on small JSON outputs (a mix of contains, regex,
   attribute-equality and json-schema), single-threaded: calls per second.

Usage: python bench/candidates_bench.py
"""

from __future__ import annotations

import asyncio
import math
import time
from typing import Any

from assay import AbortController, evaluate_deterministic_scorer, evaluate_prompt_candidates

LATENCY = 0.020


def makespan(candidates: int = 3, items: int = 2000, concurrency: int = 64) -> None:
    cands = [{"id": f"c{i}", "prompt": f"prompt {i}"} for i in range(candidates)]
    rows = [{"id": f"item-{i}", "input": {"n": i}, "expected": "ok"} for i in range(items)]

    async def run(candidate: Any, item: Any, signal: Any) -> dict[str, Any]:
        await asyncio.sleep(LATENCY)
        return {"answer": "ok"}

    definition = {"type": "contains", "path": "/answer", "value": "ok"}

    def score(target: dict[str, Any], signal: Any) -> dict[str, Any]:
        return evaluate_deterministic_scorer(definition, target)

    start = time.perf_counter()
    asyncio.run(
        evaluate_prompt_candidates(
            cands, rows, run, score, AbortController().signal, max_concurrency=concurrency
        )
    )
    wall = time.perf_counter() - start
    ideal = math.ceil(candidates * items / concurrency) * LATENCY
    print(
        f"{candidates} candidates x {items:,} items, 20 ms latency, concurrency {concurrency}: "
        f"{wall:.3f} s (ideal {ideal:.3f} s, ratio {wall / ideal:.2f}, target <= 1.5)"
    )


def scorer_rate(calls: int = 200_000) -> None:
    definitions = [
        {"type": "contains", "path": "/answer", "value": "freeze", "caseInsensitive": True},
        {"type": "regex", "path": "/answer", "pattern": r"change\s+freeze", "flags": "i"},
        {"type": "attribute-equality", "leftPath": "/status", "rightPath": "/error/code"},
        {
            "type": "json-schema",
            "value": {
                "type": "object",
                "required": ["answer", "status"],
                "properties": {"status": {"type": "integer"}},
            },
        },
    ]
    target = {
        "input": {"q": "Can I deploy on Friday?"},
        "output": {"answer": "No: a Change Freeze applies.", "status": 404, "error": {"code": 404}},
    }
    for d in definitions:  # warm caches (compiled regex and schema)
        evaluate_deterministic_scorer(d, target)
    n = len(definitions)
    start = time.perf_counter()
    passed = 0
    for i in range(calls):
        passed += evaluate_deterministic_scorer(definitions[i % n], target)["passed"]
    wall = time.perf_counter() - start
    print(
        f"{calls:,} deterministic scorer calls: {wall:.3f} s = {calls / wall:,.0f} calls/s "
        f"(target >= 100,000; {passed:,} passed)"
    )


if __name__ == "__main__":
    makespan()
    scorer_rate()
