"""Peak memory of loading one large golden, as a multiple of its size.

Usage: python bench/golden_memory.py [--mb 20] [--max-multiple 10]

Writes one golden of about ``--mb`` MB in each shape a long answer takes (a single-quoted,
double-quoted, plain or block ``expected``, a long markdown body, a YAML list, a JSONL line) and
loads it with ``assay.goldens.iter_path`` in a fresh interpreter. Each row is that process's
peak RSS (``VmHWM``) after the load less its peak RSS just before it (interpreter and imports),
in MB, that growth divided by the file's size, and the load's time. Exits 1 when any shape
grows by more than ``--max-multiple`` times its size (the target: under 10 x).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

# The peak RSS in KiB: the kernel's high-water mark of this process's memory (VmHWM), which
# starts afresh at exec; ru_maxrss would carry the parent's peak across the fork before it.
LOADER = """
import resource, sys, time

def peak_kib():
    try:
        with open("/proc/self/status") as status:
            return next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
    except (OSError, StopIteration):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux

from assay.goldens import iter_path
before = peak_kib()
start = time.perf_counter()
goldens = list(iter_path(sys.argv[1]))
elapsed = time.perf_counter() - start
after = peak_kib()
assert len(goldens) == 1 and len(str(goldens[0].expected)) > 1000, "not the golden written"
print(before, after, elapsed)
"""

# An apostrophe, as English prose has: written '' inside single quotes.
SENTENCE = "The quick brown fox jumps over the lazy dog's back, and the answer is 42. "
ORIGIN = "\n## Origin\nbench/golden_memory.py\n"


def _text(size: int) -> str:
    return (SENTENCE * (size // len(SENTENCE) + 1))[:size].strip()


def _lines(size: int, indent: str = "") -> str:
    line = SENTENCE + SENTENCE
    return "".join(indent + line + "\n" for _ in range(size // len(line) + 1))


def _quoted(size: int) -> str:
    return "'" + _text(size).replace("'", "''") + "'"


def _single(size: int) -> str:
    return f"---\nid: big\ninput: q\nexpected: {_quoted(size)}\n---{ORIGIN}"


def _double(size: int) -> str:
    return f'---\nid: big\ninput: q\nexpected: "{_text(size)}"\n---{ORIGIN}'


def _plain(size: int) -> str:
    return f"---\nid: big\ninput: q\nexpected: {_text(size)}\n---{ORIGIN}"


def _block(size: int) -> str:
    return f"---\nid: big\ninput: q\nexpected: |\n{_lines(size, '  ')}---{ORIGIN}"


def _body(size: int) -> str:
    return f"---\nid: big\ninput: q\nexpected: {_quoted(2000)}\n---\n{_lines(size)}{ORIGIN}"


def _yaml_list(size: int) -> str:
    return f"- id: big\n  input: q\n  expected: {_quoted(size)}\n"


def _jsonl(size: int) -> str:
    return json.dumps({"id": "big", "input": "q", "expected": _text(size)}) + "\n"


SHAPES: dict[str, tuple[str, Callable[[int], str]]] = {
    "expected: '...' (single-quoted)": ("big.md", _single),
    'expected: "..." (double-quoted)': ("big.md", _double),
    "expected: ... (plain)": ("big.md", _plain),
    "expected: | (block)": ("big.md", _block),
    "a long markdown body": ("big.md", _body),
    "a YAML list": ("big.yaml", _yaml_list),
    "a JSONL line": ("big.jsonl", _jsonl),
}


def measure(path: Path) -> tuple[float, float]:
    """The MB the load adds to the peak RSS of a fresh interpreter, and the load's seconds."""
    proc = subprocess.run(
        [sys.executable, "-c", LOADER, str(path)],
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    if proc.returncode != 0:
        raise SystemExit(f"loading {path.name} failed:\n{proc.stderr}")
    before, after, elapsed = proc.stdout.split()
    return (int(after) - int(before)) / 1024, float(elapsed)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=20.0, help="size of each golden, in MB")
    parser.add_argument("--max-multiple", type=float, default=10.0)
    args = parser.parse_args()
    size = int(args.mb * 1_000_000)
    worst = 0.0
    print(f"{'shape':<34} {'file MB':>8} {'peak +MB':>9} {'multiple':>9} {'load s':>7}")
    with tempfile.TemporaryDirectory() as folder:
        for label, (name, make) in SHAPES.items():
            path = Path(folder) / name
            path.write_text(make(size), encoding="utf-8")
            file_mb = path.stat().st_size / (1024 * 1024)
            grown, elapsed = measure(path)
            multiple = grown / file_mb
            worst = max(worst, multiple)
            print(f"{label:<34} {file_mb:8.1f} {grown:9.1f} {multiple:8.1f}x {elapsed:7.2f}")
    print(f"worst: {worst:.1f}x the file's size (target: under {args.max_multiple:g}x)")
    if worst >= args.max_multiple:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
