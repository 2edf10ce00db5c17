"""What `assay run --agent` adds per task over running the agent command alone.

Usage: python bench/agent_run_overhead.py [--rounds 3]

Side by side in one run, over the ten packaged tasks (smoke and standard), the agent being the
oracle (each task's reference solution):

- **alone**: the agent command by itself: `bash solution.sh` in a plain copy of the fixture;
- **assay, no journal**: `assay run --agent oracle --no-journal` (a git worktree per task,
  verify before and after, the command signals, telemetry, scoring), in a fresh process;
- **assay, journal**: the same with the strace journal and a seal per task (the default).

Per-task figures are the median over the rounds of (wall time / 10). A breakdown times the
steps separately in-process: the worktree, one verify, the seal. Last, eight agents that sleep
one second each, with --jobs 4 (two waves: about 2 s plus overhead).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _assay(args: list[str], cwd: Path, env: dict[str, str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "assay", *args], cwd=cwd, env=env, capture_output=True, text=True
    )
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"assay {' '.join(args)} exited {done.returncode}: {done.stderr[-500:]}")
    return elapsed


def _alone(tasks: list[Path], scratch: Path) -> float:
    started = time.perf_counter()
    for folder in tasks:
        work = Path(tempfile.mkdtemp(dir=scratch))
        shutil.copytree(folder / "repo", work, dirs_exist_ok=True)
        subprocess.run(
            ["bash", str(folder / "solution.sh")], cwd=work, capture_output=True, check=True
        )
    return time.perf_counter() - started


def _breakdown(scratch: Path) -> dict[str, float]:
    """Median seconds of each step, timed in-process over the packaged tasks."""
    from assay.agent._benchmark import _attester
    from assay.agent._execute import Sandbox, _run_step, make_worktree, run_tasks
    from assay.goldens import load_suite

    tasks = [t for t in load_suite(scratch / "none", None) if t.tier in ("smoke", "standard")]
    worktree_s, verify_s, seal_s = [], [], []
    for task in tasks:
        folder = Path(task.source).parent
        started = time.perf_counter()
        worktree, _ = make_worktree(task, folder, scratch)
        worktree_s.append(time.perf_counter() - started)
        started = time.perf_counter()
        _run_step(task.fields["verify"], worktree, dict(os.environ))
        verify_s.append(time.perf_counter() - started)
    from assay.goldens._loader import packaged_root

    attest = _attester(scratch, "bench", (), lambda task: packaged_root())

    def timed(*args: object) -> str:
        started = time.perf_counter()
        out = attest(*args)  # type: ignore[arg-type]
        seal_s.append(time.perf_counter() - started)
        return out

    run_tasks(tasks, "oracle", sandbox=Sandbox(), journal_dir=scratch, attest=timed)
    return {
        "worktree": statistics.median(worktree_s),
        "verify (once)": statistics.median(verify_s),
        "seal": statistics.median(seal_s),
    }


def _parallel(root: Path, env: dict[str, str]) -> float:
    task = (
        'id: {name}\ntitle: "sleep"\ninput: "wait"\nverify: "true"\n'
        "expected_files_modified: [a.txt]\n---\nA one-second task.\n\n## Origin\nbench\n"
    )
    for i in range(8):
        folder = root / "goldens" / "smoke" / f"s{i}"
        (folder / "repo").mkdir(parents=True)
        (folder / "repo" / "a.txt").write_text("a\n")
        (folder / "task.md").write_text("---\n" + task.format(name=f"s{i}"))
        (folder / "solution.sh").write_text("true\n")
    args = ["run", "goldens", "--agent", "sleep 1", "--jobs", "4", "--no-save", "--json"]
    return _assay(args, root, env)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    rounds = parser.parse_args().rounds
    from assay.attest import keygen
    from assay.goldens._loader import packaged_root

    scratch = Path(tempfile.mkdtemp(prefix="assay-overhead-"))
    try:
        key = scratch / "attest.key"
        keygen(key)
        env = {**os.environ, "ASSAY_KEY_FILE": str(key)}
        os.environ["ASSAY_KEY_FILE"] = str(key)
        packaged = packaged_root()
        tasks = sorted(
            p.parent for p in packaged.glob("*/*/task.md") if p.parts[-3] in ("smoke", "standard")
        )
        project = scratch / "project"
        project.mkdir()
        base = [
            "run",
            "--agent",
            "oracle",
            "--tier",
            "smoke",
            "--tier",
            "standard",
            "--no-save",
            "--json",
        ]
        alone, bare, journaled = [], [], []
        for _ in range(rounds):
            alone.append(_alone(tasks, scratch) / len(tasks))
            bare.append(_assay([*base, "--no-journal"], project, env) / len(tasks))
            journaled.append(_assay(base, project, env) / len(tasks))
        a, b, j = (statistics.median(x) for x in (alone, bare, journaled))
        print(f"{len(tasks)} packaged tasks, oracle agent, median of {rounds} rounds, per task:")
        print(f"  agent alone            {a * 1000:8.0f} ms")
        print(f"  assay, no journal      {b * 1000:8.0f} ms   (+{(b - a) * 1000:.0f} ms)")
        print(f"  assay, journal + seal  {j * 1000:8.0f} ms   (+{(j - a) * 1000:.0f} ms)")
        print("steps, median per task:")
        for name, seconds in _breakdown(scratch).items():
            print(f"  {name:<22} {seconds * 1000:8.0f} ms")
        parallel = _parallel(scratch / "parallel", env)
        print(f"8 one-second agents, --jobs 4, journaled: {parallel:.2f} s wall")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
