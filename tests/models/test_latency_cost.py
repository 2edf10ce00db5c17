"""latency and cost asserts: measured on live calls (against the loopback fake), failing
closed on static outputs, which have no measurement."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers.cli import run_cli
from tests.helpers.fake_openai import fake_openai
from tests.models.test_cache import live_run, write_candidates, write_goldens

GOLDENS = [
    {"id": "fast", "input": "a", "asserts": [{"op": "latency", "threshold": 60000}]},
    {"id": "instant", "input": "b", "asserts": [{"op": "latency", "threshold": 0}]},
    {"id": "cheap", "input": "c", "asserts": [{"op": "cost", "threshold": 0.01}]},
    {"id": "free", "input": "d", "asserts": [{"op": "cost", "threshold": 0}]},
]


def test_latency_and_cost_are_checked_on_live_calls(tmp_path: Path) -> None:
    with fake_openai() as server:
        goldens = write_goldens(tmp_path, GOLDENS)
        candidates = write_candidates(
            tmp_path, server, cost_per_1k_input=1.0, cost_per_1k_output=1.0
        )
        document = live_run(tmp_path, goldens, candidates, "--no-cache")
    by_id = {r["id"]: r for r in document["results"]}
    assert by_id["fast"]["status"] == "pass"
    # No call takes 0 ms: the measured latency reaches the check.
    [instant] = by_id["instant"]["checks"]
    assert instant["passed"] is False
    assert instant["evidence"]["reason"] == "over_budget"
    assert instant["evidence"]["latency_ms"] > 0
    assert by_id["cheap"]["status"] == "pass"
    [free] = by_id["free"]["checks"]
    assert free["passed"] is False
    assert free["evidence"]["cost_usd"] > 0


def test_latency_fails_closed_on_a_static_output(tmp_path: Path) -> None:
    goldens = write_goldens(tmp_path, GOLDENS[:1])
    (tmp_path / "out.json").write_text(json.dumps({"fast": "hi"}), encoding="utf-8")
    code, out, _ = run_cli(["gate", goldens, "--outputs", "out.json", "--json"], tmp_path)
    assert code == 0
    [result] = json.loads(out)["results"]
    assert result["status"] == "fail"
    assert result["checks"][0]["reason"] == "no latency measured (static outputs)"
