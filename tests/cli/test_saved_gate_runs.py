"""Every gate and eval run is saved (unless --no-save), beside the agent runs: `assay runs list`,
`assay report --run`, `assay failures --run` read it back; the record holds no ground truth and
no output; a record that cannot be written is a warning, never another exit code (issue 17)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers.cli import run_cli
from tests.helpers.telemetry import smoke_telemetry


def _runs(root: Path) -> list[Path]:
    return sorted((root / ".assay" / "runs").glob("*.json"))


def test_a_gate_run_is_saved_and_listed_without_its_content(tmp_path: Path) -> None:
    code, _, err = run_cli(["gate", "--example"], tmp_path)
    assert code == 0, err
    [record] = _runs(tmp_path)
    text = record.read_text(encoding="utf-8")
    # No assert argument, expected answer or output: only ops, statuses and numbers.
    for content in ("Jane", "jane.roe", "30 days", "reset their password", "SELECT"):
        assert content not in text, content
    code, out, err = run_cli(["runs", "list"], tmp_path)
    assert code == 0, err
    [line] = out.splitlines()
    assert line.startswith(record.stem) and " gate   report  " in line and "11 results" in line
    assert line.endswith("gate passed")
    code, out, _ = run_cli(["runs", "list", "--json"], tmp_path)
    assert json.loads(out)["runs"][0]["run_id"] == record.stem


def test_report_and_failures_read_a_saved_gate_run(tmp_path: Path) -> None:
    run_cli(["gate", "--example"], tmp_path)
    [record] = _runs(tmp_path)
    code, out, err = run_cli(["report", "--run", record.stem], tmp_path)
    assert code == 0, err
    assert out.splitlines()[1].startswith("11 goldens: 8 pass, 1 fail, 2 needs-judge")
    code, out, err = run_cli(["failures", "--run", record.stem], tmp_path)
    assert code == 0, err
    assert "standard-summary-no-pii  fail" in out and "failed not-regex, not-contains" in out
    assert "needs-judge" not in out  # undecided, not failed
    assert out.startswith(f"failures in run {record.stem}: 1\n")
    # A gate run's rows are goldens by status, not an agent run's tasks by category.
    assert out.splitlines()[1].split() == ["golden", "status", "details"]
    code, html, err = run_cli(["report", "--run", record.stem, "-f", "html"], tmp_path)
    assert code == 0, err
    assert html.startswith("<!DOCTYPE html>") and "standard-summary-no-pii" in html


def test_after_a_failing_check_failures_names_the_regression(tmp_path: Path) -> None:
    goldens = tmp_path / "goldens"
    outputs = tmp_path / "outputs.json"
    from assay.gate._run import example_paths

    example_goldens, example_outputs = example_paths()
    answers = json.loads(example_outputs.read_text(encoding="utf-8"))
    answers["smoke-refund-policy"] = "No refunds."
    outputs.write_text(json.dumps(answers), encoding="utf-8")
    import shutil

    shutil.copytree(example_goldens, goldens)
    code, _, _ = run_cli(["gate", "goldens", "--outputs", "outputs.json", "-w"], tmp_path)
    assert code == 0
    answers["smoke-git-last-commits"] = "no idea"
    outputs.write_text(json.dumps(answers), encoding="utf-8")
    code, _, _ = run_cli(["gate", "goldens", "--outputs", "outputs.json", "-c"], tmp_path)
    assert code == 2
    code, out, err = run_cli(["report"], tmp_path)  # the latest run: the failing check
    assert code == 0, err
    assert out.splitlines()[-1] == "gate: FAILED"
    # The regression the check found, as JUnit of the same record shows it (issue 27, item 20).
    assert "  REGRESSED  smoke-git-last-commits: passed in the baseline, now fail" in out
    assert "check against assay-baseline.json: 1 regression(s)" in out
    code, out, err = run_cli(["failures"], tmp_path)
    assert code == 0, err
    assert "smoke-git-last-commits" in out and "smoke-refund-policy" in out
    record = json.loads(_runs(tmp_path)[-1].read_text(encoding="utf-8"))
    [regression] = record["regressions"]
    assert regression == {
        "id": "smoke-git-last-commits",
        "candidate": "default",
        "why": "passed in the baseline, now fail",  # the failed checks' arguments left out
    }


def test_runs_list_says_what_each_run_was(tmp_path: Path) -> None:
    # -w, -c and a shard are not full report runs: the list says which each was (item 23).
    for flags in (["-w"], ["-c"], ["--shard", "2/3"], ["-k", "smoke-*"]):
        code, _, err = run_cli(["gate", "--example", *flags], tmp_path)
        assert code == 0, err
    telemetry = smoke_telemetry(tmp_path / "telemetry")
    code, _, err = run_cli(["bench", "--telemetry", telemetry, "-k", "smoke-fix-*"], tmp_path)
    assert code == 0, err
    code, out, err = run_cli(["runs", "list"], tmp_path)
    assert code == 0, err
    labels = [line.split("  ")[2].strip() for line in out.splitlines()]
    assert labels == [
        "write-baseline",
        "check",
        "report, shard 2/3",
        "report, -k smoke-*",
        "report, -k smoke-fix-*",
    ]
    code, out, _ = run_cli(["runs", "list", "--json"], tmp_path)
    rows = json.loads(out)["runs"]
    assert [(r["mode"], r["selection"]) for r in rows] == [
        ("write-baseline", {}),
        ("check", {}),
        ("report", {"shard": "2/3"}),
        ("report", {"filter": ["smoke-*"]}),
        ("report", {"filter": ["smoke-fix-*"]}),
    ]


def test_no_save_writes_nothing(tmp_path: Path) -> None:
    code, _, err = run_cli(["gate", "--example", "--no-save"], tmp_path)
    assert code == 0, err
    assert _runs(tmp_path) == []


def test_an_unwritable_store_is_a_warning_and_the_verdict_stands(tmp_path: Path) -> None:
    (tmp_path / ".assay").mkdir()
    (tmp_path / ".assay" / "runs").write_text("not a folder", encoding="utf-8")
    code, out, err = run_cli(["gate", "--example"], tmp_path)
    assert code == 0
    assert "summary: 11 goldens" in out
    assert err.startswith("assay: warning: the run was not saved: ")
    assert len(err.splitlines()) == 1 and "Traceback" not in err


def test_an_agent_run_compares_with_agent_runs_only(tmp_path: Path) -> None:
    telemetry = smoke_telemetry(tmp_path / "telemetry")
    run_cli(["gate", "--example"], tmp_path)  # a gate run saved in between
    code, out, err = run_cli(["bench", "--telemetry", telemetry, "--compare"], tmp_path)
    assert code == 0, err
    assert "no previous saved run to compare with" in out
    run_cli(["gate", "--example"], tmp_path)
    code, out, err = run_cli(["bench", "--telemetry", telemetry, "--compare"], tmp_path)
    assert code == 0, err
    assert "compare with eval_run_" in out


def test_keep_runs_removes_the_oldest(tmp_path: Path) -> None:
    (tmp_path / "assay.toml").write_text("keep_runs = 2\n", encoding="utf-8")
    for _ in range(4):
        code, _, err = run_cli(["gate", "--example"], tmp_path)
        assert code == 0, err
        newest = _runs(tmp_path)[-1].name
    kept = _runs(tmp_path)
    assert len(kept) == 2 and kept[-1].name == newest
    (tmp_path / "assay.toml").write_text("keep_runs = 0\n", encoding="utf-8")
    for _ in range(2):
        run_cli(["gate", "--example"], tmp_path)
    assert len(_runs(tmp_path)) == 4  # 0 keeps every run


def test_a_bad_keep_runs_is_one_line_naming_it(tmp_path: Path) -> None:
    (tmp_path / "assay.toml").write_text("keep_runs = -1\n", encoding="utf-8")
    code, out, err = run_cli(["gate", "--example"], tmp_path)
    assert (code, out) == (1, "")
    assert err.strip().endswith("field 'keep_runs': must be an integer >= 0")


def test_no_error_message_or_unknown_op_reaches_the_record(tmp_path: Path) -> None:
    # A provider whose error quotes the prompt, and a golden whose "op" is the answer itself.
    (tmp_path / "leaky.py").write_text(
        "def answer(prompt):\n    raise ValueError('PROMPTLEAK ' + prompt)\n", encoding="utf-8"
    )
    goldens = [
        {"id": "q1", "input": "SECRET-INPUT", "asserts": ["contains:x"]},
        # A built-in op typo is refused at load; a namespaced op is found (or not) at run time.
        {"id": "q2", "input": "other", "asserts": ["paris/is-the-SECRET-capital"]},
    ]
    (tmp_path / "g.jsonl").write_text("".join(json.dumps(g) + "\n" for g in goldens))
    spec = {
        "provider": {"type": "python", "function": "leaky:answer"},
        "candidates": [{"id": "c", "prompt": "{{ input }}"}],
    }
    (tmp_path / "c.yaml").write_text(json.dumps(spec))
    code, _, _ = run_cli(["eval", "g.jsonl", "--candidates", "c.yaml", "--no-progress"], tmp_path)
    assert code == 1  # every call failed: undecided, yet saved (errors are results)
    (tmp_path / "echo.yaml").write_text(
        json.dumps(
            {"provider": {"type": "echo"}, "candidates": [{"id": "c", "prompt": "{{ input }}"}]}
        )
    )
    code, _, err = run_cli(["eval", "g.jsonl", "--candidates", "echo.yaml", "-w"], tmp_path)
    assert code == 0, err
    code, _, _ = run_cli(
        ["eval", "g.jsonl", "--candidates", "c.yaml", "-c", "--no-cache"], tmp_path
    )
    assert code == 1  # every call failed: the gate cannot decide
    for record in _runs(tmp_path):
        text = record.read_text(encoding="utf-8")
        for content in ("PROMPTLEAK", "SECRET", "Paris"):
            assert content not in text, (record.name, content)
    last = json.loads(_runs(tmp_path)[-1].read_text(encoding="utf-8"))
    assert last["summary"]["undecided"][0].startswith("the gate cannot decide: 2 of 2")
    # The echo run checked q2: its unknown "op" (the answer itself) is recorded as unknown-op.
    echo_run = json.loads(_runs(tmp_path)[1].read_text(encoding="utf-8"))
    assert ["q2", "c"] in [row[:2] for row in echo_run["rows"]]
    assert next(row for row in echo_run["rows"] if row[0] == "q2")[6] == ["unknown-op"]


def test_a_damaged_record_is_skipped_by_runs_list_and_refused_by_report(tmp_path: Path) -> None:
    run_cli(["gate", "--example"], tmp_path)
    folder = tmp_path / ".assay" / "runs"
    bad = folder / "eval_run_20261201T000000_000001Z.json"
    bad.write_text(
        '{"schema_version":2,"kind":"gate","rows":[],"summary":{"pass_rate":"y"}}',
        encoding="utf-8",
    )
    code, out, err = run_cli(["runs", "list"], tmp_path)
    assert code == 0 and len(out.splitlines()) == 1
    assert err.startswith("assay: warning: skipped eval_run_20261201T000000_000001Z:")
    code, out, err = run_cli(["report", "--run", bad.stem], tmp_path)
    assert (code, out) == (1, "")
    assert "field 'summary.total'" in err and "Traceback" not in err
