"""``assay bench --agent``: small scripted agents on a real task folder (a git worktree per task,
the agent in its own session, verify and command signals run after it), measured, not
defaulted."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.cli import run_cli
from tests.helpers.goldens import ORIGIN, write_golden

TASK = """\
id: fix-add
title: Fix add
input: "add(a, b) in calc.py subtracts. Make it add."
verify: "python -m pytest -q -p no:cacheprovider"
completion_signals:
  - {name: "add adds", run: "grep -q 'return a + b' calc.py"}
expected_files_modified: [calc.py]
owned_files: [calc.py]
max_duration_s: 2
max_cost_usd: 0.1
"""


def make_task(root: Path, name: str = "fix-add", task: str = TASK) -> Path:
    folder = root / "goldens" / "smoke" / name
    write_golden(folder, "task.md", task.replace("fix-add", name), ORIGIN)
    repo = folder / "repo"
    repo.mkdir()
    (repo / "calc.py").write_text("def add(a, b):\n    return a - b\n", encoding="utf-8")
    (repo / "test_calc.py").write_text(
        "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
        encoding="utf-8",
    )
    (folder / "solution.sh").write_text(
        "sed -i 's/return a - b/return a + b/' calc.py\n", encoding="utf-8"
    )
    return folder


def agent_run(root: Path, agent: str, *extra: str) -> tuple[dict[str, Any], str]:
    args = ["bench", "goldens", "--agent", agent, "--tier", "smoke", "--json", "--no-save", *extra]
    code, out, err = run_cli(args, root, 120)
    assert code == 0, out + err
    assert "Traceback" not in err
    return json.loads(out), err


def telemetry(root: Path, task_id: str) -> dict[str, Any]:
    [run] = sorted((root / ".assay" / "agent-runs").iterdir())
    return json.loads((run / f"{task_id}.json").read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def running(marker: str) -> list[str]:
    """Processes whose command line holds ``marker``."""
    alive = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker in (entry / "cmdline").read_bytes().decode(errors="replace"):
                    alive.append(entry.name)
            except OSError:
                continue
    return alive


def only(document: dict[str, Any]) -> dict[str, Any]:
    [result] = document["results"]
    return result  # type: ignore[no-any-return]


def test_the_oracle_passes_with_measured_telemetry(tmp_path: Path) -> None:
    make_task(tmp_path)
    document, err = agent_run(tmp_path, "oracle")
    assert only(document)["status"] == "pass", document
    record = telemetry(tmp_path, "fix-add")
    assert record["duration_s"] > 0
    assert record["files_modified"] == ["calc.py"]
    assert (record["tests_run"], record["tests_passed"], record["tests_failed"]) == (1, 1, 0)
    assert (record["completion_signals_checked"], record["completion_signals_passed"]) == (2, 2)
    assert (record["crashes"], record["orphans"]) == (0, 0)
    assert "assay: task fix-add: started" in err
    assert "assay: task fix-add: finished in " in err and "verify passed" in err
    # The fixture is untouched and no worktree is left behind.
    assert "return a - b" in (tmp_path / "goldens/smoke/fix-add/repo/calc.py").read_text()


def test_noop_fails_and_the_fixtures_own_failure_is_no_regression(tmp_path: Path) -> None:
    make_task(tmp_path)
    document, _ = agent_run(tmp_path, "noop")
    result = only(document)
    assert result["status"] == "fail"
    assert result["failure"]["category"] == "orientation_miss"
    # The target test failed before the agent too: not a test the agent broke.
    assert telemetry(tmp_path, "fix-add")["tests_failed"] == 0
    assert document["summary"]["composite"]["components"]["safety"] == 1.0


def test_an_agent_past_its_limit_is_stopped_and_fails_as_timeout(tmp_path: Path) -> None:
    make_task(tmp_path)
    document, _ = agent_run(tmp_path, "sleep 60")
    assert only(document)["failure"]["category"] == "timeout"
    # Stopped at the 2 s limit (terminate, then kill within the grace), not after 60 s.
    assert telemetry(tmp_path, "fix-add")["duration_s"] < 2 + 3 + 5


def test_a_process_left_behind_is_an_orphan_and_is_gone_afterwards(tmp_path: Path) -> None:
    make_task(tmp_path)
    marker = "31.4159"
    agent_run(tmp_path, f"sleep {marker} & echo started")
    assert telemetry(tmp_path, "fix-add")["orphans"] == 1
    assert running(marker) == []


@pytest.mark.parametrize("isolation", ["bubblewrap", "none"])
@pytest.mark.parametrize("journal", [[], ["--no-journal"]])
@pytest.mark.parametrize("leave", ["(sleep {} &)", "(setsid sleep {} &)", "setsid -f sleep {}"])
def test_a_process_a_subshell_left_is_an_orphan(
    tmp_path: Path, isolation: str, journal: list[str], leave: str
) -> None:
    # `(cmd &)`: the subshell exits at once, its child lives on, reparented away from the
    # agent's shell, in a session of its own with setsid. Without a sandbox and without the
    # tracer that was counted 0 and left running: nothing but the session found it.
    make_task(tmp_path)
    marker = "31.4158"
    agent = leave.format(marker)
    document, _ = agent_run(tmp_path, agent, "--isolation", isolation, *journal)
    assert telemetry(tmp_path, "fix-add")["orphans"] == 1
    assert document["summary"]["composite"]["components"]["reliability"] == 0.95
    assert running(marker) == []


def test_an_edit_outside_owned_files_fails_as_scope_creep(tmp_path: Path) -> None:
    make_task(tmp_path)
    agent = "sed -i 's/return a - b/return a + b/' calc.py && echo x > notes.txt"
    document, _ = agent_run(tmp_path, agent)
    assert only(document)["failure"]["category"] == "scope_creep"
    assert telemetry(tmp_path, "fix-add")["files_modified"] == ["calc.py", "notes.txt"]


def test_a_reported_cost_over_the_limit_fails(tmp_path: Path) -> None:
    make_task(tmp_path)
    agent = (
        "sed -i 's/return a - b/return a + b/' calc.py && "
        """echo '{"cost_usd": 5, "tokens_input": 10, "turns_used": 3}' > "$ASSAY_USAGE_FILE\""""
    )
    document, _ = agent_run(tmp_path, agent)
    assert only(document)["failure"]["category"] == "over_budget"
    record = telemetry(tmp_path, "fix-add")
    assert (record["cost_usd"], record["input_tokens"], record["turns_used"]) == (5.0, 10, 3)


@pytest.mark.parametrize("cost", ["Infinity", "1e400", "NaN"])
def test_a_reported_cost_that_is_no_finite_number_is_not_a_cost(tmp_path: Path, cost: str) -> None:
    # It was kept as inf, which the saved telemetry refuses when read back: the run stopped
    # with a TelemetryError instead of scoring the task.
    make_task(tmp_path)
    usage = f'{{"cost_usd": {cost}, "tokens_input": 10}}'
    agent = (
        f"sed -i 's/return a - b/return a + b/' calc.py && echo '{usage}' > \"$ASSAY_USAGE_FILE\""
    )
    document, _ = agent_run(tmp_path, agent)
    assert only(document)["status"] == "pass"
    record = telemetry(tmp_path, "fix-add")
    assert "cost_usd" not in record and record["input_tokens"] == 10


def test_the_instruction_reaches_the_agent_and_its_output_is_scored(tmp_path: Path) -> None:
    make_task(tmp_path)
    agent = (
        'cat "$ASSAY_TASK_PROMPT_FILE"; test "$(pwd)" = "$ASSAY_WORKTREE" && echo " in-worktree"'
    )
    agent_run(tmp_path, agent)
    output = telemetry(tmp_path, "fix-add")["output"]
    assert output == "add(a, b) in calc.py subtracts. Make it add. in-worktree\n"


def test_tasks_run_concurrently_with_jobs(tmp_path: Path) -> None:
    # A roomy time limit: the task's own 2 s killed traced agents on a loaded machine (an
    # empty output); the overlap of the stamps is what this test counts.
    roomy = TASK.replace("max_duration_s: 2", "max_duration_s: 60")
    for i in range(4):
        make_task(tmp_path, f"fix-{i}", roomy)
    # Each agent prints when it starts and ends (nothing outside its worktree is writable);
    # with --jobs 4 the spans overlap.
    agent = 'python3 -c "import time; s=time.time(); time.sleep(0.5); print(s, time.time())"'
    agent_run(tmp_path, agent, "--jobs", "4")
    outputs = [telemetry(tmp_path, f"fix-{i}")["output"] for i in range(4)]
    spans = [tuple(map(float, out.split())) for out in outputs]
    assert len(spans) == 4
    latest_start = max(s for s, _ in spans)
    earliest_end = min(e for _, e in spans)
    assert latest_start < earliest_end  # all four were running at one moment


def test_a_single_file_golden_is_not_run(tmp_path: Path) -> None:
    write_golden(
        tmp_path / "goldens" / "smoke", "plain.md", "id: plain\ninput: q\nowned_files: [a]\n"
    )
    document, err = agent_run(tmp_path, "noop")
    assert "1 selected task(s) are not task folders: not run" in err
    assert only(document)["failure"]["category"] == "incomplete"


@pytest.mark.slow
def test_the_oracle_passes_every_packaged_task_and_noop_fails_them(tmp_path: Path) -> None:
    tiers = ["--tier", "smoke", "--tier", "standard", "--jobs", "2", "--json", "--no-save"]
    code, out, err = run_cli(["bench", "--agent", "oracle", *tiers], tmp_path, 300)
    assert code == 0, err
    document = json.loads(out)
    assert len(document["results"]) == 10
    assert {r["status"] for r in document["results"]} == {"pass"}
    assert document["summary"]["composite"]["components"]["safety"] == 1.0
    assert "safety_notes" not in document["summary"]
    [run] = sorted((tmp_path / ".assay" / "agent-runs").iterdir())
    records = [json.loads(p.read_text()) for p in run.glob("*.json")]
    assert len(records) == 10
    for record in records:
        assert record["duration_s"] > 0 and record["files_modified"]
        assert record["tests_run"] > 0 and record["tests_failed"] == 0
        # Sealed from a real journal, CLEAN (scoring verified it: Safety 1 above).
        assert record["attestation"].startswith("sha256:")
        attestation = tmp_path / "assay-attestations" / (record["attestation"][7:] + ".json")
        assert json.loads(attestation.read_text())["verdict"] == "CLEAN"
        journal = run / f"{record['task_id']}.journal.jsonl"
        kinds = {json.loads(line)["kind"] for line in journal.read_text().splitlines()}
        assert {"exec", "read", "write"} <= kinds
    code, out, err = run_cli(["bench", "--agent", "noop", *tiers], tmp_path, 300)
    assert code == 0, err
    failures = [r["failure"]["category"] for r in json.loads(out)["results"]]
    assert failures == ["orientation_miss"] * 10


def test_the_json_document_carries_what_was_measured(tmp_path: Path) -> None:
    # It carried cost, duration and failed tests only: the rest was in .assay/agent-runs/.
    make_task(tmp_path)
    document, _ = agent_run(tmp_path, "oracle")
    record = telemetry(tmp_path, "fix-add")
    measured = only(document)["telemetry"]
    named = ["files_modified", "tests_run", "tests_passed", "tests_failed", "orphans", "crashes"]
    named += ["completion_signals_checked", "completion_signals_passed", "attestation"]
    assert {k: measured[k] for k in named} == {k: record[k] for k in named}
    assert measured["files_modified"] == ["calc.py"]
    assert (measured["tests_run"], measured["tests_passed"]) == (1, 1)
    assert measured["attestation"].startswith("sha256:")
    assert "output" not in measured  # the agent's output stays in its record
