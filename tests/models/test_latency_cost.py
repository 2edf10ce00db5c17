"""latency and cost asserts: measured on live calls (against the loopback fake), kept with a
cached answer (a re-run from the cache gives the same verdicts), failing closed on static
outputs, which have no measurement."""

from __future__ import annotations

import json
from pathlib import Path

from assay.models import OutputCache
from assay.models.providers import Completion
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
    assert result["checks"][0]["reason"] == (
        "no latency measured (a static output, or an answer cached before assay kept it)"
    )


def verdicts(document: dict[str, object]) -> dict[str, tuple[object, ...]]:
    """Per golden: its status and each check's (passed, reason, evidence)."""
    results = document["results"]
    assert isinstance(results, list)
    return {
        r["id"]: (r["status"], *((c["passed"], c["reason"], c["evidence"]) for c in r["checks"]))
        for r in results
    }


def test_a_cached_answer_keeps_its_latency_and_cost_verdicts(tmp_path: Path) -> None:
    # Issue 27, item 11: a re-run read from the cache failed every latency assert with "no
    # latency measured (static outputs)"; the cached answer keeps what its call measured.
    with fake_openai() as server:
        goldens = write_goldens(tmp_path, GOLDENS)
        candidates = write_candidates(
            tmp_path, server, cost_per_1k_input=1.0, cost_per_1k_output=1.0
        )
        first = live_run(tmp_path, goldens, candidates)
        calls = server.total
        second = live_run(tmp_path, goldens, candidates)
        assert server.total == calls  # the second run made no call
    assert second["summary"]["model_calls"]["cache_hits"] == len(GOLDENS)
    assert verdicts(second) == verdicts(first)
    assert verdicts(second)["fast"][0] == "pass"
    # And no cached answer counts as money spent by the run that read it.
    assert second["summary"]["model_calls"]["cost_usd"] == 0


def test_the_cache_stores_the_latency_and_an_old_entry_has_none(tmp_path: Path) -> None:
    with OutputCache(tmp_path / "c.sqlite") as cache:
        cache.put("k", Completion("Paris", 3, 1, "stop"), 12.5)
        cache.put("old", Completion("Lyon", 2, 1, "stop"))
        assert cache.lookup("k") == (Completion("Paris", 3, 1, "stop"), 12.5)
        assert cache.lookup("old") == (Completion("Lyon", 2, 1, "stop"), None)
        assert cache.lookup("missing") is None
        assert cache.get("k") == Completion("Paris", 3, 1, "stop")
