"""`assay bench --agent --executor ray` against the local executor, side by side in one run.

Usage: python bench/ray_agent_tasks.py [--tasks 40]

40 scripted tasks whose agent sleeps one second (`sleep 1`; a trivial `verify: true`, so the
sleep is the task's cost), run by `assay bench --agent` in a fresh process each:

- **local, --jobs 1** and **local, --jobs 4**: the thread-pool executor;
- **ray**: `--executor ray --ray-address` on a Ray cluster started here of a head process and a
  worker process, 2 CPUs each (4 slots), on loopback addresses (tests/helpers/ray_cluster.py);

- **bare Ray, tasks** and **bare Ray, actors**: the floor Ray itself sets on the same cluster, a
  script of a few lines that runs `sleep 1` the same number of times, as one Ray task each, and
  through one actor per slot (what assay does) taking the next as it finishes;

first without the journal (`--no-journal`), then with it (strace and a seal per task; the
journal's --jobs 1 row is left out: it is the --no-journal one plus the journal's ~0.2 s a
task). Each row's results are compared with the first run's of its kind: the telemetry records
and the scored results, minus durations and attestation ids. Wall times include starting Python
and, for Ray, connecting to the cluster; the cluster's own start is not counted.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
TASK = (
    '---\nid: {name}\ntitle: "sleep"\ninput: "wait one second"\nverify: "true"\n'
    "max_duration_s: 30\n---\nA one-second task.\n\n## Origin\nbench/ray_agent_tasks.py\n"
)


def _tasks(project: Path, count: int) -> None:
    for i in range(count):
        folder = project / "goldens" / "smoke" / f"sleep-{i:02d}"
        (folder / "repo").mkdir(parents=True)
        (folder / "repo" / "a.txt").write_text("a\n", encoding="utf-8")
        (folder / "task.md").write_text(TASK.format(name=f"sleep-{i:02d}"), encoding="utf-8")
        (folder / "solution.sh").write_text("true\n", encoding="utf-8")


def _run(project: Path, env: dict[str, str], args: list[str]) -> tuple[float, dict[str, Any]]:
    """Wall seconds of one `assay bench`, and what it produced (the report, the records)."""
    runs = project / ".assay" / "agent-runs"
    before = set(runs.glob("*")) if runs.exists() else set()
    argv = [sys.executable, "-m", "assay", "bench", "goldens", "--agent", "sleep 1", "--no-save"]
    started = time.perf_counter()
    done = subprocess.run(
        [*argv, "--json", *args], cwd=project, env=env, capture_output=True, text=True
    )
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"assay {' '.join(args)} exited {done.returncode}: {done.stderr[-800:]}")
    [folder] = set(runs.glob("*")) - before
    records = {}
    for path in sorted(folder.glob("*.json")):
        record = json.loads(path.read_text(encoding="utf-8"))
        records[path.stem] = {
            k: v for k, v in record.items() if k not in ("duration_s", "attestation")
        }
    results = re.sub(r"sha256:[0-9a-f]+", "sha256:", json.dumps(json.loads(done.stdout)["results"]))
    results = re.sub(r'"duration_s": [0-9.e-]+', '"duration_s": 0', results)
    results = re.sub(r"took [0-9.]+ s", "took … s", results)
    return elapsed, {"records": records, "results": json.loads(results)}


BARE = """
import json, subprocess, sys, time
started = time.perf_counter()
marks = {}
import ray
marks["import ray"] = time.perf_counter() - started
ray.init(address=sys.argv[1], log_to_driver=False)
marks["connected"] = time.perf_counter() - started
count, slots = int(sys.argv[2]), int(sys.argv[3])

def sleep():
    subprocess.run(["sleep", "1"], check=True)

if sys.argv[4] == "tasks":
    ray.get([ray.remote(num_cpus=1)(sleep).remote() for _ in range(count)])
else:
    @ray.remote(num_cpus=1)
    class Slot:
        def run(self):
            sleep()
    actors = [Slot.remote() for _ in range(min(slots, count))]
    ready = [actor.__ray_ready__.remote() for actor in actors]
    waiting = list(ready)
    while waiting:  # when each slot's worker process is up
        [ref], waiting = ray.wait(waiting, num_returns=1)
        key = "first slot ready" if len(waiting) == len(ready) - 1 else "last slot ready"
        marks[key] = time.perf_counter() - started
    left, pending = count, {}
    for slot in actors:
        pending[slot.run.remote()] = slot
        left -= 1
    while pending:
        [ref], _ = ray.wait(list(pending), num_returns=1)
        slot = pending.pop(ref)
        ray.get(ref)
        if left:
            pending[slot.run.remote()] = slot
            left -= 1
marks["tasks done"] = time.perf_counter() - started
ray.shutdown()
marks["shut down"] = time.perf_counter() - started
print(json.dumps(marks))
"""


def _bare(
    address: str, env: dict[str, str], count: int, how: str
) -> tuple[float, dict[str, float]]:
    """Wall seconds of the bare Ray script (a fresh process, as assay's runs are), and when
    it reached each step (seconds since it started, Python's own start not included)."""
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", BARE, address, str(count), "4", how],
        env=env,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise SystemExit(f"bare Ray ({how}) exited {done.returncode}: {done.stderr[-800:]}")
    return time.perf_counter() - started, json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tasks", type=int, default=40)
    count = parser.parse_args().tasks
    sys.path.insert(0, str(ROOT))  # the cluster helper the tests use
    from assay.attest import keygen
    from tests.helpers.ray_cluster import RayCluster

    scratch = Path(tempfile.mkdtemp(prefix="assay-ray-bench-"))
    try:
        key = scratch / "attest.key"
        keygen(key)
        project = scratch / "project"
        _tasks(project, count)
        with RayCluster(nodes=2, cpus=2) as cluster:
            env = {**os.environ, **cluster.env, "ASSAY_KEY_FILE": str(key)}
            ray = ["--executor", "ray", "--ray-address", cluster.address]
            plan = [
                ("local, --jobs 1", ["--no-journal", "--jobs", "1"]),
                ("local, --jobs 4", ["--no-journal", "--jobs", "4"]),
                ("ray (4 slots)", ["--no-journal", *ray]),
                ("local, --jobs 4, journal", ["--jobs", "4"]),
                ("ray (4 slots), journal", ray),
            ]
            rows: list[tuple[str, float, str]] = []
            steps: dict[str, float] = {}
            for how in ("tasks", "actors"):
                wall, marks = _bare(cluster.address, env, count, how)
                rows.append((f"bare Ray, {how}", wall, ""))
                if how == "actors":
                    steps = marks
            first: dict[bool, dict[str, Any]] = {}
            for name, args in plan:
                wall, produced = _run(project, env, args)
                journal = "--no-journal" not in args
                if journal not in first:
                    first[journal] = produced
                    rows.append((name, wall, "(reference)"))
                else:
                    rows.append((name, wall, "yes" if produced == first[journal] else "NO"))
        print(f"{count} tasks, agent `sleep 1`, verify `true`; wall time of `assay bench --agent`:")
        print(f"  {'executor':<26} {'wall':>8} {'per task':>9}  results equal")
        for name, wall, equal in rows:
            print(f"  {name:<26} {wall:7.2f}s {wall / count * 1000:7.0f}ms  {equal}")
        print(
            "the bare Ray script through actors, seconds since it started (after Python's start):"
        )
        print("  " + ", ".join(f"{step} {at:.2f}" for step, at in steps.items()))
        if any(equal == "NO" for _, _, equal in rows):
            raise SystemExit("results differ between executors")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
