"""Measure ways to parse 10,000 small markdown frontmatters (the cost behind a large suite).

Usage: python bench/yaml_alternatives.py [--goldens 10000]

- PyYAML's C safe loader (what assay uses), one core;
- the same on both cores (multiprocessing, two workers, results pickled back);
- yaml-rs, a Rust-backed parser, when installed (it implements YAML 1.2: `yes` and `on` are
  strings there, booleans in YAML 1.1, so it is measured, not adopted).
Reading the files is excluded; each figure is the best of three.
"""

from __future__ import annotations

import argparse
import multiprocessing
import time
from collections.abc import Callable
from typing import Any

import yaml

FRONT = (
    "id: g{i:06d}\ninput: 'question {i}'\nasserts:\n  - 'contains:FROM'\n"
    '  - \'regex:"id":\\\\s*"g\\\\d+"\'\n  - is-json\n'
)


def _pyyaml(texts: list[str]) -> list[Any]:
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return [yaml.load(t, Loader=loader) for t in texts]


def _two_cores(texts: list[str]) -> list[Any]:
    half = len(texts) // 2
    with multiprocessing.get_context("fork").Pool(2) as pool:
        parts = pool.map(_pyyaml, [texts[:half], texts[half:]])
    return parts[0] + parts[1]


def _best(label: str, parse: Callable[[list[str]], list[Any]], texts: list[str]) -> None:
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        parse(texts)
        best = min(best, time.perf_counter() - start)
    print(f"{label:<36} {best:6.3f} s for {len(texts):,} frontmatters")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--goldens", type=int, default=10_000)
    args = parser.parse_args()
    texts = [FRONT.format(i=i) for i in range(args.goldens)]
    assert _pyyaml(texts[:1])[0]["id"] == "g000000"
    _best("PyYAML C loader, one core", _pyyaml, texts)
    _best("PyYAML C loader, two processes", _two_cores, texts)
    try:
        import yaml_rs  # type: ignore[import-not-found]
    except ImportError:
        print("yaml-rs: not installed (pip install yaml-rs to measure it)")
    else:
        _best("yaml-rs (YAML 1.2 semantics)", lambda ts: [yaml_rs.loads(t) for t in ts], texts)


if __name__ == "__main__":
    main()
