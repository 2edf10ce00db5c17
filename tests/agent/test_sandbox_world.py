"""What the sandbox's world and limits hold for an honest agent: the environment assay builds, the
variables ``[agents.NAME] env`` passes on, the memory limit, hidden tests that exist only for
verification, a fixture test that still fails, and a task that cannot be measured (an ``error``
record, the run going on)."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest

from tests.agent.test_execute import TASK, make_task, telemetry
from tests.helpers.cli import run_cli

FIX = "sed -i 's/return a - b/return a + b/' calc.py"


def bench(root: Path, agent: str, *extra: str) -> dict[str, Any]:
    args = ["bench", "goldens", "--agent", agent, "--tier", "smoke", "--json", "--no-journal"]
    code, out, err = run_cli([*args, *extra], root, 180)
    assert code == 0 and "Traceback" not in err, out + err
    return json.loads(out)  # type: ignore[no-any-return]


def only(document: dict[str, Any]) -> dict[str, Any]:
    [result] = document["results"]
    return result  # type: ignore[no-any-return]


def test_the_environment_is_built_by_assay_and_named_variables_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_task(tmp_path)
    monkeypatch.setenv("OLDPWD", "/somewhere/else")
    monkeypatch.setenv("MY_API_TOKEN", "token-for-the-agent")
    monkeypatch.setenv("OTHER_SECRET", "not-for-the-agent")
    (tmp_path / "assay.toml").write_text(
        f"[agents.named]\ncommand = '''env | sort; {FIX}'''\nenv = [\"MY_API_TOKEN\"]\n",
        encoding="utf-8",
    )
    bench(tmp_path, "named")
    seen = dict(
        line.split("=", 1) for line in telemetry(tmp_path, "fix-add")["output"].splitlines()
    )
    assert seen["MY_API_TOKEN"] == "token-for-the-agent"
    for absent in ("OLDPWD", "OTHER_SECRET", "ASSAY_KEY_FILE"):
        assert absent not in seen, absent
    assert seen["HOME"] != str(Path.home()) and seen["TMPDIR"].startswith(seen["HOME"][:-4])
    assert seen["ASSAY_TASK_ID"] == "fix-add"


def test_an_env_entry_that_is_no_variable_name_is_refused(tmp_path: Path) -> None:
    make_task(tmp_path)
    (tmp_path / "assay.toml").write_text(
        "[agents.named]\ncommand = 'true'\nenv = [\"A=B\"]\n", encoding="utf-8"
    )
    code, _, err = run_cli(["bench", "goldens", "--agent", "named"], tmp_path)
    assert code == 1 and "agents.named.env" in err and "Traceback" not in err


def test_memory_beyond_max_memory_mb_is_refused_to_the_agent(tmp_path: Path) -> None:
    make_task(tmp_path, task=TASK + "max_memory_mb: 200\n")
    agent = (
        "python3 -c \"b = bytearray(600 * 2**20); print('allocated')\" "
        "2>&1 | tail -n 1; python3 -c \"b = bytearray(50 * 2**20); print('small ok')\""
    )
    bench(tmp_path, agent)
    output = telemetry(tmp_path, "fix-add")["output"]
    assert "MemoryError" in output and "allocated" not in output
    assert output.endswith("small ok\n")


HIDDEN = "from calc import add\n\n\ndef test_add_more():\n    assert add(10, 5) == 15\n"


def test_hidden_tests_exist_only_for_verification(tmp_path: Path) -> None:
    folder = make_task(tmp_path)
    (folder / "tests").mkdir()
    (folder / "tests" / "test_hidden.py").write_text(HIDDEN, encoding="utf-8")
    # The agent looks for the hidden test; verify runs it (2 tests: the fixture's and it).
    document = bench(tmp_path, f"ls tests 2>&1 | head -n 1; {FIX}")
    record = telemetry(tmp_path, "fix-add")
    assert "No such file" in record["output"]
    assert (record["tests_run"], record["tests_passed"]) == (2, 2)
    assert only(document)["status"] == "pass"
    # A wrong fix passes the fixture's test (2 + 3) but not the hidden one.
    wrong = "sed -i 's/return a - b/return 5/' calc.py"
    document = bench(tmp_path, wrong, "--no-save")
    assert only(document)["status"] == "fail"


def test_a_test_that_fails_before_and_after_leaves_the_task_incomplete(tmp_path: Path) -> None:
    # verify ignores its own exit status (|| true): the failing test is still caught.
    make_task(
        tmp_path,
        task=TASK.replace(
            '"python -m pytest -q -p no:cacheprovider"',
            '"python -m pytest -q -p no:cacheprovider || true"',
        ),
    )
    document = bench(tmp_path, "echo did nothing")
    record = telemetry(tmp_path, "fix-add")
    assert record["x_still_failing"] == ["test_calc::test_add"]
    assert only(document)["status"] == "fail"


def test_a_deleted_fixture_file_is_a_change_and_its_test_still_runs(tmp_path: Path) -> None:
    make_task(tmp_path)
    make_task(tmp_path, "fix-two")
    document = bench(tmp_path, f"rm -rf .git test_calc.py; {FIX}")
    record = telemetry(tmp_path, "fix-add")
    assert record["files_modified"] == ["calc.py", "test_calc.py"]
    # verify runs the fixture's test (tests are the fixture's), so the deletion hides nothing.
    assert record["tests_run"] == 1 and record["tests_passed"] == 1
    statuses = {r["id"]: r["status"] for r in document["results"]}
    assert statuses == {"fix-add": "fail", "fix-two": "fail"}  # scope_creep: not owned


def test_without_bubblewrap_a_run_stops_with_one_line_naming_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from assay.agent import _sandbox

    make_task(tmp_path)
    monkeypatch.setattr(_sandbox, "bwrap_path", lambda: None)
    _sandbox.check_bubblewrap.cache_clear()
    try:
        code, out, err = run_cli(["bench", "goldens", "--agent", "noop"], tmp_path)
    finally:
        _sandbox.check_bubblewrap.cache_clear()
    assert code == 1 and out == "" and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    assert "apt-get install bubblewrap" in err and "--isolation none" in err
    assert not (tmp_path / ".assay" / "agent-runs").exists()
    # Observation only, said so: the run goes on without a sandbox, and its records say so.
    document = bench(tmp_path, "noop", "--isolation", "none")
    assert only(document)["status"] == "fail"


def test_a_max_memory_mb_under_one_is_the_default_not_a_limit_of_nothing(tmp_path: Path) -> None:
    make_task(tmp_path, task=TASK + "max_memory_mb: 0.5\n")
    bench(tmp_path, f"python3 -c \"b = bytearray(50 * 2**20); print('ran')\"; {FIX}")
    assert telemetry(tmp_path, "fix-add")["output"] == "ran\n"


def test_an_agent_killed_at_its_limit_is_past_it_however_the_clock_rounds(tmp_path: Path) -> None:
    # The wait ends at the deadline: measured, that may round to the limit itself.
    from assay.agent._box import Finished
    from assay.agent._execute import Sandbox, _record, _Task
    from assay.goldens import iter_goldens

    folder = make_task(tmp_path)
    [task] = list(iter_goldens(tmp_path / "goldens"))
    job = _Task(task, folder, tmp_path, Sandbox(journal=False), ())
    done = Finished(None, True, 0, "", "", 0, 2.0000004, 0)
    record = _record(job, folder / "repo", done, tmp_path)
    assert record["duration_s"] > task.fields["max_duration_s"]


@pytest.mark.parametrize(
    "stderr, said",
    [
        ("bwrap: one\nbwrap: Can't mount proc: denied\n", "bwrap: Can't mount proc: denied"),
        ("", "no reason given"),
    ],
)
def test_why_a_sandbox_did_not_start_is_one_line(stderr: str, said: str) -> None:
    # The holder's message held the whole list of stderr lines, as a Python list.
    import subprocess

    from assay.agent._box import _Streams

    script = f"printf %s {shlex.quote(stderr)} >&2"
    process = subprocess.Popen(["sh", "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    streams = _Streams(process)
    process.wait()
    assert streams.said() == said
