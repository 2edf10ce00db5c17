"""Loading a large golden costs a small multiple of its size, not 140 times it: the fast path's
single-quoted scalar was matched one character per repetition of a group, and Python's re keeps
a backtracking record per repetition (a 20 MB `expected: '...'` peaked at 2.7 GB). Long lines
are not kept in the fast path's caches either, which would hold them after their golden.
bench/golden_memory.py measures every shape at 20 MB (docs/performance.md)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from assay.goldens import _frontmatter, iter_path

# The process's peak RSS (VmHWM, which starts afresh at exec) before and after the load.
LOADER = """
import sys
def peak():
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
from assay.goldens import iter_path
before = peak()
[golden] = iter_path(sys.argv[1])
assert len(golden.expected) > 1_000_000 and golden.expected.count("it''s") == 0
print(peak() - before)
"""
SIZE = 3_000_000


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads Linux's VmHWM")
@pytest.mark.parametrize("quote", ["'", '"'])
def test_a_3_mb_quoted_expected_loads_within_10_times_its_size(tmp_path: Path, quote: str) -> None:
    text = ("it's the answer, " if quote == '"' else "it''s the answer, ") * (SIZE // 17)
    path = tmp_path / "big.md"
    path.write_text(f"---\nid: big\ninput: q\nexpected: {quote}{text}{quote}\n---\n", "utf-8")
    proc = subprocess.run(
        [sys.executable, "-c", LOADER, str(path)], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stderr
    grown_bytes = int(proc.stdout) * 1024
    assert grown_bytes < 10 * path.stat().st_size, f"{grown_bytes / path.stat().st_size:.1f}x"


def test_long_lines_are_not_kept_in_the_fast_path_caches(tmp_path: Path) -> None:
    long = "x" * 100_000
    path = tmp_path / "g.md"
    path.write_text(f"---\nid: g\ninput: q\nexpected: {long}\nrubric: '{long}'\n---\n", "utf-8")
    [golden] = iter_path(str(path))
    assert golden.expected == long and golden.rubric == long
    assert all(len(line) < 1000 for line in _frontmatter._LINES)
    assert all(len(text) < 1000 for text in _frontmatter._PLAIN_CACHE)
