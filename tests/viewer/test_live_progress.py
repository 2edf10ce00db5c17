"""The live page's progress files (``.assay/live/``) of runs other than ``assay eval``: a real
``assay bench --agent`` run writes each finished task's row as it ends, and a gate whose judge
makes model calls counts them; each file is gone when its run ends."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from tests.agent.test_execute import TASK, make_task
from tests.helpers.cli import run_cli, spawn


def _live_states(root: Path) -> list[dict[str, Any]]:
    folder = root / ".assay" / "live"
    states = []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else ():
        try:
            states.append(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError):
            continue  # replaced this instant
    return states


def _wait_for(root: Path, finished: int, timeout: float = 30.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for state in _live_states(root):
            if len(state["results_so_far"]) >= finished:
                return state
        time.sleep(0.05)
    raise AssertionError(f"no live file with {finished} finished task(s): {_live_states(root)}")


def test_a_bench_run_writes_each_finished_task_as_it_ends(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    roomy = TASK.replace("max_duration_s: 2", "max_duration_s: 60")
    make_task(project, "fix-a", roomy)
    make_task(project, "fix-b", roomy)
    gate = tmp_path / "gate"
    gate.mkdir()
    # The first task's agent does nothing (a failure); the second one waits until the test has
    # seen the first's row in the live file, then fixes its task.
    agent = (
        f"if mkdir {gate}/first 2>/dev/null; then true; "
        f"else until [ -e {gate}/go ]; do sleep 0.05; done; "
        "sed -i 's/return a - b/return a + b/' calc.py; fi"
    )
    args = ["bench", "goldens", "--agent", agent, "--tier", "smoke", "--json", "--no-save"]
    process = spawn([*args, "--isolation", "none", "--no-journal"], project)
    try:
        state = _wait_for(project, 1)
    finally:
        (gate / "go").touch()
        out, err = process.communicate(timeout=120)
    assert process.returncode == 0, out + err
    assert (state["kind"], state["done"], state["total"]) == ("bench", 1, 2)
    [row] = state["results_so_far"]
    assert (row["id"], row["candidate"], row["status"], row["score"]) == (
        "fix-a",
        "agent",
        "fail",
        0.0,
    )
    assert row["failure_category"] == "orientation_miss"
    assert row["output"] is None  # keep_outputs is off
    assert "expected" not in json.dumps(state)
    assert row["telemetry"]["files_modified"] == []
    # The live row is what the run scored at the end.
    final = {r["id"]: r for r in json.loads(out)["results"]}
    assert final["fix-a"]["failure"]["category"] == row["failure_category"]
    assert final["fix-b"]["status"] == "pass"
    assert not (project / ".assay" / "live").exists()  # the run ended: its file is gone


JUDGE_SPY = """\
import json, os, time


def grade(prompt):
    # The first answer is graded at once; the others after it is done, reporting what the
    # live folder holds then.
    if "first answer" not in prompt:
        time.sleep(0.6)
    folder = os.path.join(".assay", "live")
    seen = []
    for name in sorted(os.listdir(folder)) if os.path.isdir(folder) else ():
        with open(os.path.join(folder, name)) as handle:
            state = json.load(handle)
        seen.append([state["kind"], state["done"], state["total"]])
    with open("seen.jsonl", "a") as log:
        log.write(json.dumps(seen) + "\\n")
    return json.dumps({"score": 0.9, "reason": "fine"})
"""


def test_a_gate_whose_judge_makes_calls_keeps_a_live_file(tmp_path: Path) -> None:
    (tmp_path / "judge_spy.py").write_text(JUDGE_SPY, encoding="utf-8")
    (tmp_path / "assay.toml").write_text(
        '[judge]\nverified = true\n[judge.provider]\ntype = "python"\n'
        'function = "judge_spy:grade"\n',
        encoding="utf-8",
    )
    goldens = [{"id": f"g{n}", "input": "q", "rubric": "Is fine."} for n in range(3)]
    (tmp_path / "g.jsonl").write_text(
        "".join(json.dumps(g) + "\n" for g in goldens), encoding="utf-8"
    )
    answers = {"g0": "the first answer", "g1": "another", "g2": "a third"}
    (tmp_path / "out.json").write_text(json.dumps(answers), encoding="utf-8")
    code, out, err = run_cli(["gate", "g.jsonl", "--outputs", "out.json", "--no-cache"], tmp_path)
    assert code == 0, out + err
    seen = [json.loads(line) for line in (tmp_path / "seen.jsonl").read_text().splitlines()]
    assert [] in seen  # the first call, before any was done: no file yet
    later = [state for states in seen for state in states]
    assert later and all(kind == "gate" and total == 3 and done >= 1 for kind, done, total in later)
    assert not (tmp_path / ".assay" / "live").exists()


# ------------------------------------------------------------------------ an eval's calls

ANSWER_SPY = """\
import json, os, time


def answer(prompt):
    # Each call first notes what the live folder holds (the calls before it), then answers,
    # after more than the live file's 0.25 s between writes: each call's end is written.
    # The third golden's call fails.
    folder = os.path.join(".assay", "live")
    seen = []
    for name in sorted(os.listdir(folder)) if os.path.isdir(folder) else ():
        with open(os.path.join(folder, name)) as handle:
            seen.append(json.load(handle))
    with open("seen.jsonl", "a") as log:
        log.write(json.dumps(seen) + "\\n")
    time.sleep(0.3)
    if "third" in prompt:
        raise RuntimeError("the model is down")
    return "an answer to " + prompt
"""


def _eval_project(root: Path, keep_outputs: bool) -> None:
    (root / "spy.py").write_text(ANSWER_SPY, encoding="utf-8")
    (root / "assay.toml").write_text(f"keep_outputs = {str(keep_outputs).lower()}\n")
    questions = ["first SECRET-PROMPT", "second", "third", "fourth"]
    goldens = [
        {"id": f"q{n}", "input": q, "asserts": ["contains:answer"]} for n, q in enumerate(questions)
    ]
    (root / "g.jsonl").write_text("".join(json.dumps(g) + "\n" for g in goldens))
    (root / "cands.yaml").write_text(
        "provider: {type: python, function: 'spy:answer'}\nmax_concurrency: 1\n"
        "candidates:\n  - {id: a, prompt: '{{ input }}'}\n",
        encoding="utf-8",
    )


def _seen(root: Path) -> list[list[dict[str, Any]]]:
    return [json.loads(line) for line in (root / "seen.jsonl").read_text().splitlines()]


def test_an_eval_writes_each_answered_call_as_it_ends(tmp_path: Path) -> None:
    _eval_project(tmp_path, keep_outputs=False)
    argv = ["eval", "g.jsonl", "--candidates", "cands.yaml", "--no-cache", "--no-save"]
    code, out, err = run_cli(argv, tmp_path)
    assert code == 1, out + err  # a failed call: could not decide, never a regression
    seen = _seen(tmp_path)
    assert seen[0] == []  # before the first call ended: no file yet
    [last] = seen[-1]  # what the fourth call saw: the three calls before it
    assert (last["kind"], last["phase"], last["done"], last["total"]) == ("eval", "output", 3, 4)
    rows = last["results_so_far"]
    assert [(r["id"], r["status"]) for r in rows] == [
        ("q0", "answered"),
        ("q1", "answered"),
        ("q2", "error"),
    ]
    assert rows[0] == {
        "id": "q0",
        "candidate": "a",
        "repeat": 0,
        "status": "answered",
        "cached": False,
        "latency_ms": rows[0]["latency_ms"],
        "output": None,  # keep_outputs is off
    }
    assert rows[0]["latency_ms"] >= 300
    assert last["counts"] == {"answered": 2, "error": 1}
    assert "SECRET-PROMPT" not in json.dumps(seen)  # no prompt, and no output unasked
    assert not (tmp_path / ".assay" / "live").exists()


def test_with_keep_outputs_an_answered_call_carries_its_output(tmp_path: Path) -> None:
    _eval_project(tmp_path, keep_outputs=True)
    argv = ["eval", "g.jsonl", "--candidates", "cands.yaml", "--no-cache", "--no-save"]
    run_cli(argv, tmp_path)
    [last] = _seen(tmp_path)[-1]
    [first, *_] = last["results_so_far"]
    assert first["output"] == "an answer to first SECRET-PROMPT"


def test_a_live_file_keeps_the_newest_rows_and_counts_them_all(tmp_path: Path) -> None:
    from assay.viewer._live import LIVE_ROWS, LiveRun

    ticks = iter(range(10**6))
    live = LiveRun(tmp_path, "eval", clock=lambda: float(next(ticks)))  # every update writes
    total = LIVE_ROWS + 250
    for n in range(total):
        live.update(n + 1, total, {"id": f"g{n}", "status": "error" if n % 10 == 0 else "answered"})
    state = json.loads(live.path.read_text(encoding="utf-8"))
    assert len(state["results_so_far"]) == LIVE_ROWS
    assert state["results_so_far"][-1]["id"] == f"g{total - 1}"
    assert state["results_so_far"][0]["id"] == f"g{total - LIVE_ROWS}"
    assert state["counts"] == {"error": total // 10, "answered": total - total // 10}
    live.close()
    assert not live.path.exists()


def test_judge_calls_are_counted_apart_and_give_no_row(tmp_path: Path) -> None:
    from assay.models import Call, CallEnded, Completion, Outcome, ProviderConfig
    from assay.viewer import CallProgress, LiveRun

    live = LiveRun(tmp_path, "gate")
    watch = CallProgress(live, keep_outputs=True)
    config = ProviderConfig(type="python")
    judged = Call("judge", "g1", 0, "the rubric and answer", config, purpose="judge")
    watch(CallEnded(1, 2, judged, Outcome(Completion('{"score": 1}'))))
    failed = Call("a", "g2", 1, "a prompt", config)
    watch(CallEnded(2, 2, failed, Outcome(None, "HTTP 500: the prompt echoed back")))
    state = json.loads(live.path.read_text(encoding="utf-8"))
    assert state["phase"] == "output" and (state["done"], state["total"]) == (2, 2)
    [row] = state["results_so_far"]
    assert (row["id"], row["status"], row["repeat"], row["output"]) == ("g2", "error", 1, None)
    assert "echoed" not in json.dumps(state)  # an error message can quote the prompt: not kept
    live.close()
