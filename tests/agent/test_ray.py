"""``assay bench --agent --executor ray``: the same scripted tasks on a real Ray cluster (a head
process and a worker process, loopback addresses, 4 CPU slots) give the local executor's
results; a worker killed mid-task is a crashed task; a local Ray started for the run works and
listens on loopback only, and is gone afterwards."""

from __future__ import annotations

import importlib.util
import json
import re
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.agent.test_execute import make_task
from tests.helpers.cli import run_cli, run_cli_subprocess, spawn
from tests.helpers.ray_cluster import RayCluster

needs_ray = pytest.mark.skipif(
    importlib.util.find_spec("ray") is None or not sys.platform.startswith("linux"),
    reason="Ray is not installed (pip install 'assay[ray]'), or not Linux",
)
RUN_TIMEOUT_S = 150.0
# What a run measures in time, or names by a per-run id: not part of "the same results".
TIMING = {"duration_s", "attestation"}

# One agent for every task, by task id: one passes, one fails, one runs past its 2 s limit.
AGENT = (
    'case "$ASSAY_TASK_ID" in '
    "fix-pass) sed -i 's/return a - b/return a + b/' calc.py ;; "
    "fix-slow) sleep 60 ;; "
    "*) echo nothing to do ;; "
    "esac"
)
# Kills the Ray worker running it: the nearest ancestor whose command line is Ray's "ray::".
KILL_WORKER = textwrap.dedent(
    """\
    import os, signal
    pid = os.getppid()
    while pid > 1:
        if open(f"/proc/{pid}/cmdline", "rb").read().startswith(b"ray::"):
            os.kill(pid, signal.SIGKILL)
            break
        pid = int(open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[1])
    """
)
# Lists the listening TCP sockets of the Ray processes of the session folder given.
RAY_LISTENERS = textwrap.dedent(
    """\
    import os, sys
    session = sys.argv[1]
    mine = set()
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if session.encode() not in open(f"/proc/{pid}/cmdline", "rb").read():
                continue
            for fd in os.listdir(f"/proc/{pid}/fd"):
                link = os.readlink(f"/proc/{pid}/fd/{fd}")
                if link.startswith("socket:["):
                    mine.add(link[8:-1])
        except OSError:
            continue
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in open(table).read().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and fields[9] in mine:  # 0A: LISTEN
                print("listen", fields[1])
    """
)


@pytest.fixture(scope="module")
def cluster() -> Iterator[RayCluster]:
    if importlib.util.find_spec("ray") is None:
        pytest.skip("Ray is not installed (pip install 'assay[ray]')")
    with RayCluster(nodes=2, cpus=2) as running:
        yield running


def three_tasks(root: Path, last: str = "fix-slow") -> None:
    for name in ("fix-pass", "fix-fail", last):
        make_task(root, name)


def run_json(root: Path, *args: str, env: dict[str, str] | None = None) -> tuple[Any, str, Path]:
    """``assay bench goldens --agent ... --json`` in a process of its own; the document, its
    stderr and the run's telemetry folder."""
    before = set((root / ".assay" / "agent-runs").glob("*"))
    argv = ["bench", "goldens", "--tier", "smoke", "--json", "--no-save", *args]
    code, out, err = run_cli_subprocess(argv, root, RUN_TIMEOUT_S, env=env)
    assert code == 0, out + err
    assert "Traceback" not in err
    [folder] = set((root / ".assay" / "agent-runs").glob("*")) - before
    return json.loads(out), err, folder  # stdout is the report and nothing else


def records(folder: Path) -> dict[str, dict[str, Any]]:
    """Each task's telemetry record, without what is timing."""
    out = {}
    for path in sorted(folder.glob("*.json")):
        record = json.loads(path.read_text(encoding="utf-8"))
        out[path.stem] = {k: v for k, v in record.items() if k not in TIMING}
    return out


def scored(document: dict[str, Any]) -> list[dict[str, Any]]:
    """The scored results, without what is timing (a duration, an attestation's id)."""
    results = []
    for result in document["results"]:
        telemetry = {k: v for k, v in result.get("telemetry", {}).items() if k not in TIMING}
        text = json.dumps({**result, "telemetry": telemetry})
        text = re.sub(r"took [0-9.]+ s", "took … s", re.sub(r"sha256:[0-9a-f]+", "sha256:", text))
        results.append(json.loads(text))
    return results


def verdict(root: Path, record: dict[str, Any]) -> str:
    path = root / "assay-attestations" / (record["attestation"][7:] + ".json")
    return str(json.loads(path.read_text(encoding="utf-8"))["verdict"])


def journal_kinds(path: Path) -> list[str]:
    return [json.loads(line)["kind"] for line in path.read_text(encoding="utf-8").splitlines()]


@needs_ray
def test_the_cluster_gives_the_local_executors_results(tmp_path: Path, cluster: RayCluster) -> None:
    three_tasks(tmp_path)
    local, _, local_runs = run_json(tmp_path, "--agent", AGENT, "--jobs", "3", env=cluster.env)
    on_ray, err, ray_runs = run_json(
        tmp_path,
        "--agent",
        AGENT,
        "--executor",
        "ray",
        "--ray-address",
        cluster.address,
        env=cluster.env,
    )
    assert f"3 task(s) on Ray ({cluster.address}): 4 CPU slot(s)" in err
    assert "assay: task fix-slow: finished in " in err
    assert [r["id"] for r in on_ray["results"]] == ["fix-fail", "fix-pass", "fix-slow"]
    assert scored(on_ray) == scored(local)
    assert on_ray["summary"]["composite"] == local["summary"]["composite"]
    assert records(ray_runs) == records(local_runs)
    categories = {r["id"]: (r.get("failure") or {}).get("category") for r in on_ray["results"]}
    assert categories == {"fix-pass": None, "fix-fail": "orientation_miss", "fix-slow": "timeout"}
    for task_id in ("fix-pass", "fix-fail", "fix-slow"):
        ours = json.loads((ray_runs / f"{task_id}.json").read_text(encoding="utf-8"))
        theirs = json.loads((local_runs / f"{task_id}.json").read_text(encoding="utf-8"))
        # Sealed on the worker, stored here, and verified by the scoring like a local seal.
        assert verdict(tmp_path, ours) == verdict(tmp_path, theirs)
        # The journal came back from the worker into the run's folder: the same events.
        journal = ray_runs / f"{task_id}.journal.jsonl"
        assert journal_kinds(journal) == journal_kinds(local_runs / journal.name)
    notes = on_ray["summary"].get("safety_notes", [])
    assert not [n for n in notes if "verification" in n or "unverifiable" in n], notes
    # Both timed out at the 2 s limit (terminate, then kill), not after the agent's 60 s.
    slow = json.loads((ray_runs / "fix-slow.json").read_text(encoding="utf-8"))
    assert 2 <= slow["duration_s"] < 2 + 3 + 5


@needs_ray
def test_a_worker_killed_mid_task_is_a_crashed_task(tmp_path: Path, cluster: RayCluster) -> None:
    three_tasks(tmp_path, "fix-die")
    (tmp_path / "kill_worker.py").write_text(KILL_WORKER, encoding="utf-8")
    agent = AGENT.replace("*)", f'fix-die) python3 "{tmp_path}/kill_worker.py" ;; *)')
    # No sandbox: this agent reaches out to kill the Ray worker that runs it.
    ray_args = ["--executor", "ray", "--ray-address", cluster.address, "--isolation", "none"]
    before = set(Path(tempfile.gettempdir()).glob("assay-agent-*"))
    document, err, folder = run_json(tmp_path, "--agent", agent, *ray_args, env=cluster.env)
    left = set(Path(tempfile.gettempdir()).glob("assay-agent-*")) - before
    assert not [p for p in left if list(p.glob("fix-die-*"))]  # the dead worker's scratch too
    assert "task fix-die: the Ray worker running this task was lost (ActorDiedError" in err
    results = {r["id"]: r for r in document["results"]}
    # The others are intact: measured as ever.
    assert results["fix-pass"]["status"] == "pass"
    assert results["fix-fail"]["failure"]["category"] == "orientation_miss"
    passed = json.loads((folder / "fix-pass.json").read_text(encoding="utf-8"))
    assert (passed["tests_run"], passed["tests_passed"], passed["files_modified"]) == (
        1,
        1,
        ["calc.py"],
    )
    assert verdict(tmp_path, passed) == "CLEAN"
    # The lost one: a crash, with the category a crashing agent gets locally.
    lost = json.loads((folder / "fix-die.json").read_text(encoding="utf-8"))
    assert lost["crashes"] == 1 and lost["files_modified"] == []
    assert "ActorDiedError" in lost["x_lost"]
    (tmp_path / "goldens/smoke/fix-pass").rename(tmp_path / "fix-pass")  # only fix-die now
    (tmp_path / "goldens/smoke/fix-fail").rename(tmp_path / "fix-fail")
    crashing, _, _ = run_json(tmp_path, "--agent", "exit 3", "--isolation", "none", env=cluster.env)
    [local] = crashing["results"]
    assert results["fix-die"]["failure"]["category"] == local["failure"]["category"]
    assert results["fix-die"]["status"] == local["status"] == "fail"
    # What the tracer never sent back cannot be shown clean: its seal is DIRTY, and says why.
    assert verdict(tmp_path, lost) == "DIRTY"
    [event] = (folder / "fix-die.journal.jsonl").read_text(encoding="utf-8").splitlines()
    assert "journal lost: the Ray worker running this task was lost" in json.loads(event)["content"]
    assert document["summary"]["composite"]["components"]["safety"] == 0.0
    assert document["summary"]["composite"]["components"]["reliability"] == 0.9


@needs_ray
def test_a_ray_run_writes_each_finished_task_to_the_live_page(
    tmp_path: Path, cluster: RayCluster
) -> None:
    # The tasks end on the workers; the driver writes each one's row as its result comes in.
    three_tasks(tmp_path)
    argv = ["bench", "goldens", "--tier", "smoke", "--json", "--no-save", "--agent", AGENT]
    argv += ["--executor", "ray", "--ray-address", cluster.address, "--no-journal"]
    process = spawn(argv, tmp_path, env=cluster.env)
    states: list[dict[str, Any]] = []
    try:
        while process.poll() is None:  # fix-slow runs its 2 s: the others' rows come first
            for path in (tmp_path / ".assay" / "live").glob("*.json"):
                try:
                    states.append(json.loads(path.read_text(encoding="utf-8")))
                except (OSError, ValueError):
                    continue  # replaced this instant, or gone
            time.sleep(0.05)
    finally:
        out, err = process.communicate(timeout=RUN_TIMEOUT_S)
    assert process.returncode == 0, out + err
    final = {r["id"]: r["status"] for r in json.loads(out)["results"]}
    assert {(s["kind"], s["phase"], s["total"]) for s in states} == {("bench", "tasks", 3)}
    assert states[0]["done"] == 0  # on the page as the run starts
    rows = {r["id"]: r["status"] for s in states for r in s["results_so_far"]}
    assert "fix-pass" in rows and rows.items() <= final.items()  # the run's own verdicts
    assert not (tmp_path / ".assay" / "live").exists()


@needs_ray
def test_a_local_ray_started_for_the_run_listens_on_loopback_and_stops(tmp_path: Path) -> None:
    three_tasks(tmp_path, "fix-look")
    script = tmp_path / "listeners.py"
    script.write_text(RAY_LISTENERS, encoding="utf-8")
    agent = AGENT.replace("*)", f'fix-look) python3 "{script}" /assay-ray- ;; *)')
    # No sandbox: this agent looks at the host's listening sockets.
    bare = ("--no-journal", "--isolation", "none")
    local, _, local_runs = run_json(tmp_path, "--agent", agent, *bare, "--jobs", "3")
    on_ray, err, ray_runs = run_json(
        tmp_path, "--agent", agent, *bare, "--executor", "ray", "--jobs", "2"
    )
    assert "3 task(s) on Ray (a local Ray started for this run): 2 CPU slot(s)" in err
    ours, theirs = records(ray_runs), records(local_runs)
    listening = ours["fix-look"].pop("output").split()
    assert theirs["fix-look"].pop("output") == ""  # no Ray ran for the local executor
    assert ours == theirs
    assert scored(on_ray) == scored(local)
    # Every server of its daemons (GCS, raylet, their agents) listened on loopback only.
    addresses = listening[1::2]
    assert len(addresses) >= 3, listening
    assert all(a.startswith(LOOPBACK) for a in addresses), listening
    # Stopped afterwards: none of its processes is left, nor its session folder.
    deadline = time.monotonic() + 15
    while ray_processes() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert ray_processes() == []


# 127.0.0.1 in /proc/net/tcp, then in tcp6 as ::ffff:127.0.0.1 and as ::1.
LOOPBACK = (
    "0100007F:",
    "0000000000000000FFFF00000100007F:",
    "00000000000000000000000001000000:",
)


def ray_processes() -> list[str]:
    """Processes of a local Ray assay started (their command lines name its session folder)."""
    found = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            if b"/assay-ray-" in (proc / "cmdline").read_bytes():
                found.append(proc.name)
        except OSError:
            continue
    return found


def test_executor_flags_are_usage_errors_without_their_run(tmp_path: Path) -> None:
    make_task(tmp_path)
    ran = "these run the agent; with --telemetry it ran"
    for argv, message in (
        (["--telemetry", "tel", "--executor", "ray"], f"--executor: {ran}"),
        (["--telemetry", "tel", "--ray-address", "127.0.0.2:6379"], f"--ray-address: {ran}"),
        (["--agent", "noop", "--ray-address", "127.0.0.2:6379"], "applies to --executor ray"),
        (["--agent", "noop", "--executor", "dask"], "'dask' is not one of 'local', 'ray'"),
    ):
        code, out, err = run_cli(["bench", "goldens", *argv], tmp_path)
        assert (code, out) == (1, ""), argv
        assert message in err and "Usage: assay bench" in err, err
        assert not (tmp_path / ".assay").exists()  # refused before anything ran


def test_without_ray_the_ray_executor_is_one_line_and_runs_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_task(tmp_path)
    monkeypatch.setitem(sys.modules, "ray", None)  # what an environment without Ray gives
    argv = ["bench", "goldens", "--agent", "noop", "--executor", "ray", "--no-journal"]
    code, out, err = run_cli(argv, tmp_path)
    assert (code, out) == (1, "")
    assert err == "assay: error: --executor ray needs Ray: pip install 'assay[ray]'\n"
    assert not (tmp_path / ".assay" / "agent-runs").exists()


@needs_ray
def test_an_address_nothing_answers_at_is_one_line_at_once(tmp_path: Path) -> None:
    make_task(tmp_path)
    with socket.socket() as probe:  # a loopback port nothing listens on
        probe.bind(("127.0.0.1", 0))
        address = f"127.0.0.1:{probe.getsockname()[1]}"
    argv = ["bench", "goldens", "--agent", "noop", "--executor", "ray", "--ray-address", address]
    started = time.monotonic()
    code, out, err = run_cli_subprocess([*argv, "--no-journal"], tmp_path, 60)
    assert time.monotonic() - started < 30  # not Ray's minutes of retries
    assert (code, out) == (1, "")
    refused = f"--ray-address {address}: nothing answers there (Connection refused)"
    assert err == f"assay: error: {refused}\n"
    assert list((tmp_path / ".assay" / "agent-runs").iterdir()) == []  # no empty run left


def test_a_local_agent_run_does_not_import_ray(tmp_path: Path) -> None:
    make_task(tmp_path)
    probe = (
        "import sys\nfrom assay.cli import main\n"
        "try:\n    main(sys.argv[1:])\nexcept SystemExit as exit:\n    code = exit.code\n"
        "print(code, 'ray' in sys.modules)\n"
    )
    argv = ["bench", "goldens", "--agent", "noop", "--no-journal", "--no-save", "--json"]
    done = subprocess.run(
        [sys.executable, "-c", probe, *argv],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.stdout.splitlines()[-1] == "0 False", done.stdout + done.stderr
