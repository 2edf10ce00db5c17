"""What `assay bench --agent` adds per task over running the agent command alone.

Usage: python bench/agent_run_overhead.py [--rounds 3]

Side by side in one run, over the ten packaged tasks (smoke and standard), the agent being the
oracle (each task's reference solution):

- **alone**: the agent command by itself: `bash solution.sh` in a plain copy of the fixture;
- **assay, no sandbox** (`--isolation none`) and **assay, sandbox** (bubblewrap, the default),
  each without and with the journal: `assay bench --agent oracle` (a git worktree per task,
  verify before and after, the command signals, telemetry, scoring), in a fresh process.

Per-task figures are the median over the rounds of (wall time / 10); the sandbox's cost per task
is the difference between the two rows beside each other. A breakdown times one command (`true`)
started in the sandbox and without one, and the steps in-process: the worktree, the seal. Last,
eight agents that sleep one second each, with --jobs 4 (two waves: about 2 s plus overhead).
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


def _start_cost(scratch: Path, rounds: int = 30) -> dict[str, float]:
    """Median seconds to run ``true`` in the bubblewrap sandbox and without one (the holder,
    limits, output capture, orphan count and kill are the same), each untraced and traced."""
    from assay.agent._box import Limits, Sandboxed, Unsandboxed
    from assay.agent._sandbox import World, agent_env, toolchain

    work, private = scratch / "wt", scratch / "io"
    for folder in (work, private / "home", private / "tmp"):
        folder.mkdir(parents=True, exist_ok=True)
    world = World(work, private, tuple(toolchain([str(scratch)])), (str(scratch),))
    env = agent_env(world, {})
    out: dict[str, float] = {}
    for traced in (False, True):
        for name, box in (("no sandbox", Unsandboxed), ("sandbox", Sandboxed)):
            seconds = []
            for i in range(rounds):
                trace = scratch / f"trace-{name}-{traced}-{i}" / "t" if traced else None
                if trace is not None:
                    trace.parent.mkdir()
                started = time.perf_counter()
                where = world if box is Sandboxed else work
                with box("true", where, env, Limits(30), trace_out=trace) as run:  # type: ignore[arg-type]
                    run.finish()
                seconds.append(time.perf_counter() - started)
            out[f"{name}{', traced' if traced else ''}"] = statistics.median(seconds)
    return out


def _commands_per_task(folder: Path) -> int:
    """Sandboxed commands one task runs: verify before, the agent, each signal, verify."""
    from assay.goldens import load_suite

    [task] = [t for t in load_suite(folder, None) if Path(t.source).parent == folder]
    signals = task.fields.get("completion_signals") or []
    return 3 + sum(1 for s in signals if isinstance(s, dict))


def _breakdown(scratch: Path) -> dict[str, float]:
    """Median seconds of the worktree and the seal, timed in-process over the packaged tasks."""
    from typing import Any

    from assay.agent._attester import Attester, SealedRecord
    from assay.agent._execute import Execution, Sandbox, run_tasks
    from assay.agent._worktree import make_worktree
    from assay.attest import load_key, resolve_key_path
    from assay.goldens import load_suite
    from assay.goldens._loader import packaged_root

    tasks = [t for t in load_suite(scratch / "none", None) if t.tier in ("smoke", "standard")]
    worktree_s, seal_s = [], []
    for task in tasks:
        started = time.perf_counter()
        make_worktree(task, Path(task.source).parent, scratch)
        worktree_s.append(time.perf_counter() - started)

    class Timed(Attester):
        """The run's attester, each seal (build, then store) timed."""

        def build(self, *args: Any, **kw: Any) -> SealedRecord:
            started = time.perf_counter()
            built = super().build(*args, **kw)
            seal_s.append(time.perf_counter() - started)
            return built

        def store(self, sealed: SealedRecord) -> str:
            started = time.perf_counter()
            stored = super().store(sealed)
            seal_s[-1] += time.perf_counter() - started
            return stored

    key = load_key(resolve_key_path(None))
    attest = Timed(scratch, "bench", (), lambda task: packaged_root(), key, scratch / "seals")
    run_tasks(tasks, Execution("oracle", Sandbox(), journal_dir=scratch, attest=attest))
    return {"worktree": statistics.median(worktree_s), "seal": statistics.median(seal_s)}


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
    args = ["bench", "goldens", "--agent", "sleep 1", "--jobs", "4", "--no-save", "--json"]
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
        base = ["bench", "--agent", "oracle", "--tier", "smoke", "--tier", "standard"]
        base += ["--no-save", "--json"]
        rows = {
            "no sandbox, no journal": ["--isolation", "none", "--no-journal"],
            "sandbox, no journal": ["--no-journal"],
            "no sandbox, journal + seal": ["--isolation", "none"],
            "sandbox, journal + seal": [],
        }
        alone: list[float] = []
        times: dict[str, list[float]] = {name: [] for name in rows}
        for _ in range(rounds):  # interleaved: a slow moment of the machine hits every row
            alone.append(_alone(tasks, scratch) / len(tasks))
            for name, extra in rows.items():
                times[name].append(_assay([*base, *extra], project, env) / len(tasks))
        a = statistics.median(alone)
        medians = {name: statistics.median(values) for name, values in times.items()}
        print(f"{len(tasks)} packaged tasks, oracle agent, median of {rounds} rounds, per task:")
        print(f"  agent alone                  {a * 1000:8.0f} ms")
        for name, seconds in medians.items():
            print(f"  assay, {name:<22}{seconds * 1000:8.0f} ms   (+{(seconds - a) * 1000:.0f} ms)")
        for journal in ("no journal", "journal + seal"):
            cost = medians[f"sandbox, {journal}"] - medians[f"no sandbox, {journal}"]
            print(f"  the sandbox's cost per task, {journal}: {cost * 1000:+.0f} ms")
        print("one command (true), median of 30:")
        start = _start_cost(scratch / "start")
        for name, seconds in start.items():
            print(f"  {name:<22} {seconds * 1000:8.1f} ms")
        # Per task: verify on the fixture, the agent (traced with the journal), each signal and
        # verify again; each started in a sandbox of its own.
        steps = statistics.mean(_commands_per_task(folder) for folder in tasks)
        for journal, agent in (("no journal", ""), ("journal", ", traced")):
            cost = (start["sandbox"] - start["no sandbox"]) * (steps - 1)
            cost += start[f"sandbox{agent}"] - start[f"no sandbox{agent}"]
            print(
                f"  the sandbox's start cost per task ({steps:.1f} commands), {journal}: "
                f"{cost * 1000:.0f} ms"
            )
        print("steps, median per task:")
        for name, seconds in _breakdown(scratch).items():
            print(f"  {name:<22} {seconds * 1000:8.0f} ms")
        parallel = _parallel(scratch / "parallel", env)
        print(f"8 one-second agents, --jobs 4, journaled: {parallel:.2f} s wall")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
