"""The agent benchmark can fail CI: ``--write-baseline`` / ``--check`` with ``--telemetry``
compare per task (paired across tasks) and the composite score and its components; ``min_score``
and ``min_pass_rate`` apply to agent runs too."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers.cli import run_cli
from tests.helpers.telemetry import PASSING_SMOKE, smoke_telemetry

AGENT = ["bench", "--telemetry", "tel", "--tier", "smoke", "--no-save"]
FAILING = {task: {"completion_signals_passed": 0} for task in PASSING_SMOKE}


def test_an_unchanged_agent_run_passes_its_check(tmp_path: Path) -> None:
    smoke_telemetry(tmp_path / "tel")
    code, _, err = run_cli([*AGENT, "--write-baseline"], tmp_path)
    assert code == 0, err
    baseline = json.loads((tmp_path / "assay-baseline.json").read_text(encoding="utf-8"))
    assert baseline["kind"] == "agent"
    assert baseline["composite"]["score"] > 0.5
    code, out, err = run_cli([*AGENT, "--check"], tmp_path)
    assert code == 0, out + err
    assert "gate: passed" in out


def test_a_score_drop_fails_the_gate(tmp_path: Path) -> None:
    smoke_telemetry(tmp_path / "tel")
    assert run_cli([*AGENT, "--write-baseline"], tmp_path)[0] == 0
    smoke_telemetry(tmp_path / "tel", FAILING)
    code, out, _ = run_cli([*AGENT, "--check", "--json"], tmp_path)
    assert code == 2
    document = json.loads(out)
    assert document["summary"]["gate"] == "failed"
    whys = {r["id"]: r["why"] for r in document["regressions"] if r["id"] == "(composite)"}
    before = json.loads((tmp_path / "assay-baseline.json").read_text())["composite"]["score"]
    assert whys["(composite)"] == f"composite score dropped {before:.3f} → 0.000"
    assert any(r["id"] == "(component task_success)" for r in document["regressions"])


def test_min_score_fails_an_agent_run(tmp_path: Path) -> None:
    smoke_telemetry(tmp_path / "tel", FAILING)
    (tmp_path / "assay.toml").write_text("[gate]\nmin_score = 0.5\n", encoding="utf-8")
    code, out, _ = run_cli(AGENT, tmp_path)
    assert code == 2
    assert "gate failed: composite score 0.000 is below min_score 0.5" in out


def test_min_pass_rate_applies_to_agent_runs(tmp_path: Path) -> None:
    smoke_telemetry(tmp_path / "tel", FAILING)
    (tmp_path / "assay.toml").write_text("min_pass_rate = 0.5\n", encoding="utf-8")
    code, out, _ = run_cli(AGENT, tmp_path)
    assert code == 2
    # The one verdict the gate and the agent job share names the candidate, here the agent.
    assert "gate failed: candidate 'agent': pass rate 0.0% is below min_pass_rate 50.0%" in out


def test_a_gate_baseline_is_refused_for_an_agent_check(tmp_path: Path) -> None:
    code, _, err = run_cli(["gate", "--example", "--write-baseline"], tmp_path)
    assert code == 0, err
    smoke_telemetry(tmp_path / "tel")
    code, _, err = run_cli([*AGENT, "--check"], tmp_path)
    assert code == 1
    assert "field 'kind': this baseline was written by a goldens gate run" in err


def test_an_agent_check_reads_its_baseline_before_any_agent_runs(tmp_path: Path) -> None:
    # It ran every task first, then said there was no baseline (assay eval -c checks first).
    from tests.agent.test_execute import make_task

    project = tmp_path / "project"
    make_task(project)
    marker = tmp_path / "the-agent-ran"
    agent = ["bench", "goldens", "--agent", f"touch {marker}", "--tier", "smoke", "--check"]
    agent += ["--isolation", "none", "--no-journal"]
    code, out, err = run_cli(agent, project, 120)
    assert (code, out) == (1, "") and "Traceback" not in err
    assert "assay-baseline.json: no baseline file; write one first with --write-baseline" in err
    assert not marker.exists() and not (project / ".assay").exists()
    # A baseline of a goldens gate run is refused before any agent runs too.
    assert run_cli(["gate", "--example", "--write-baseline", "--no-save"], project)[0] == 0
    code, _, err = run_cli(agent, project, 120)
    assert code == 1 and "this baseline was written by a goldens gate run" in err
    assert not marker.exists() and not (project / ".assay" / "agent-runs").exists()
