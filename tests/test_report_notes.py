"""What a new user reads next to a number and would otherwise have to look up (issue 27, "also
seen"): the pass rate under repeats is pass^k, and an agent run with no judge verdict tops out
at 0.700."""

from __future__ import annotations

import json
from pathlib import Path

from assay.agent._telemetry import JUDGE_KEYS
from tests.helpers.cli import run_cli
from tests.helpers.telemetry import smoke_telemetry

PASS_HAT_K = "note: with repeats the pass rate is pass^k"
TOPS_OUT = "the score tops out at 0.700 until one exists"


def test_a_run_with_repeats_names_its_pass_rate_rule(tmp_path: Path) -> None:
    (tmp_path / "g.jsonl").write_text(
        json.dumps({"id": "q", "input": "hi", "asserts": ["contains:hi"]}) + "\n", encoding="utf-8"
    )
    spec = {"provider": {"type": "echo"}, "candidates": [{"id": "c", "prompt": "{{ input }}"}]}
    (tmp_path / "c.yaml").write_text(json.dumps(spec), encoding="utf-8")
    args = ["eval", "g.jsonl", "--candidates", "c.yaml", "--no-save", "--no-cache"]
    code, out, err = run_cli([*args, "-r", "3"], tmp_path)
    assert code == 0, err
    assert PASS_HAT_K in out
    code, out, err = run_cli(args, tmp_path)
    assert code == 0 and PASS_HAT_K not in out  # one answer each: no rule to name


def test_an_agent_run_without_a_judge_verdict_says_why_it_scores_0_700(tmp_path: Path) -> None:
    telemetry = smoke_telemetry(tmp_path / "telemetry")
    code, out, err = run_cli(["bench", "--telemetry", telemetry, "--no-save"], tmp_path)
    assert code == 0, err
    assert TOPS_OUT in out
    judged = {"judge": dict.fromkeys(JUDGE_KEYS, 5)}
    for path in telemetry.glob("*.json"):
        row = json.loads(path.read_text(encoding="utf-8"))
        path.write_text(json.dumps({**row, **judged}), encoding="utf-8")
    code, out, err = run_cli(["bench", "--telemetry", telemetry, "--no-save"], tmp_path)
    assert code == 0, err
    assert TOPS_OUT not in out
