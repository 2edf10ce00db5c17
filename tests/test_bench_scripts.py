"""The scripts in bench/ run end to end on tiny inputs, so an API change cannot silently break
the figures the README quotes (the README's numbers come from these scripts)."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"

pytestmark = pytest.mark.slow

CASES = {
    "gate_bench.py": ["--sizes", "5", "--jsonl", "5", "--repeat", "1"],
    "big_suite.py": ["--md", "30", "--jsonl", "60", "--small", "3", "--repeat", "1"],
    "agent_bench.py": ["--tasks", "12", "--repeat", "1"],
    "attest_bench.py": ["--events", "20"],
    "live_bench.py": ["--goldens", "6", "--candidates", "2", "--concurrency", "4"],
    "html_bench.py": ["--goldens", "5", "--repeat", "1"],
    "gate_calibration.py": ["--gates", "3"],
    "real_model_bench.py": ["--calls", "2", "--max-tokens", "4"],
    "ray_agent_tasks.py": ["--tasks", "4"],
    "teardown.py": ["--goldens", "3", "--rounds", "1"],
    "golden_memory.py": ["--mb", "1"],
    "js_asserts.py": ["--asserts", "50", "--repeat", "1"],
    "promptfoo_corpus.py": ["--limit", "3"],
    "view_bench.py": ["--results", "30", "--runs", "3", "--repeat", "1"],
}


@pytest.mark.parametrize("script", sorted(CASES))
def test_bench_script_runs_on_a_tiny_input(script: str, tmp_path: Path) -> None:
    if script in ("html_bench.py", "view_bench.py") and shutil.which("chromium") is None:
        pytest.skip("chromium is not installed")
    if script == "ray_agent_tasks.py" and importlib.util.find_spec("ray") is None:
        pytest.skip("Ray is not installed (pip install 'assay[ray]')")
    env = {**os.environ, "ASSAY_BENCH_OUT": str(tmp_path)}
    env.pop("PYTHONWARNINGS", None)
    proc = subprocess.run(
        [sys.executable, str(BENCH / script), *CASES[script]],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stdout.strip()  # it printed its figures
