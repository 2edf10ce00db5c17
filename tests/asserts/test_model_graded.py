"""Model-graded asserts inside the cascade: ``similar`` and ``judge``, run cheapest first and
skipped once cheaper asserts have decided the golden (issue 16)."""

from __future__ import annotations

import json
from difflib import SequenceMatcher
from pathlib import Path
from typing import Any

import pytest
from rapidfuzz import fuzz

from assay.asserts import CheckContext, OutputView, parse_assert, run_assert
from assay.cascade._cascade import SKIPPED_REASON, evaluate
from assay.errors import GoldenError
from assay.goldens import Golden, build_goldens
from tests.helpers.fake_openai import FakeOpenAI, fake_openai
from tests.test_judge import judged_run, make_project, results_by_id, toml_judge
from tests.test_parallel import both, make_suite, needs_fork, write_outputs


def golden(**data: Any) -> Golden:
    return build_goldens({"id": "g", **data}, source="g.yaml", default_id=None, folder_tier=None)[0]


REFERENCE = "the cat sat on the mat"
CLOSE = "the cat sat on a mat"  # rapidfuzz 0.905, difflib 0.905
FAR = "dogs bark at night"

SKIPPED = {
    "passed": False,
    "reason": SKIPPED_REASON,
    "evidence": {"skipped": True},
}


def _check(spec: dict[str, Any], output: str, ctx: CheckContext | None = None) -> Any:
    return run_assert(parse_assert(spec), OutputView(output), ctx or CheckContext())


# --------------------------------------------------------------------------- similar


def test_similar_passes_at_its_threshold_with_the_score_as_evidence() -> None:
    check = _check({"op": "similar", "value": REFERENCE}, CLOSE)
    expected = fuzz.ratio(CLOSE, REFERENCE) / 100
    assert check.passed is True
    assert check.evidence == {"score": expected, "backend": "rapidfuzz"}


def test_similar_fails_below_its_threshold() -> None:
    check = _check({"op": "similar", "value": REFERENCE, "threshold": 0.95}, CLOSE)
    assert check.passed is False
    assert check.reason is not None and "below threshold 0.95" in check.reason
    assert check.evidence["score"] == pytest.approx(0.905, abs=0.001)
    assert check.evidence["reason"] == "below_threshold"


def test_similar_uses_the_runs_lexical_backend_unless_it_names_one() -> None:
    difflib_ctx = CheckContext(similarity="difflib")
    check = _check({"op": "similar", "value": REFERENCE}, FAR, difflib_ctx)
    assert check.evidence["backend"] == "difflib"
    assert check.evidence["score"] == SequenceMatcher(None, FAR, REFERENCE, autojunk=False).ratio()
    named = _check({"op": "similar", "value": REFERENCE, "backend": "rapidfuzz"}, FAR, difflib_ctx)
    assert named.evidence["backend"] == "rapidfuzz"
    # A plugin (or no) run backend is never an assert's default: rapidfuzz is.
    plugin = _check({"op": "similar", "value": REFERENCE}, FAR, CheckContext(similarity="x/y"))
    assert plugin.evidence["backend"] == "rapidfuzz"


@pytest.mark.parametrize(
    ("spec", "reason"),
    [
        ({"op": "similar"}, "argument 'value'"),
        ({"op": "similar", "value": REFERENCE, "threshold": 2}, "argument 'threshold'"),
        ({"op": "similar", "value": REFERENCE, "backend": "embedding"}, "argument 'backend'"),
        # a list is no backend name (it raised TypeError: unhashable type)
        ({"op": "similar", "value": REFERENCE, "backend": ["difflib"]}, "argument 'backend'"),
    ],
)
def test_a_bad_similar_assert_fails_closed(spec: dict[str, Any], reason: str) -> None:
    check = _check(spec, REFERENCE)
    assert check.passed is False
    assert check.reason is not None and reason in check.reason


def test_the_similarity_is_the_goldens_score() -> None:
    result = evaluate(golden(asserts=[{"op": "similar", "value": REFERENCE}]), CLOSE, "c")
    assert result.status == "pass"
    assert result.score == fuzz.ratio(CLOSE, REFERENCE) / 100
    assert result.decided_by == "tier1-asserts"


# --------------------------------------------------------------------------- order and skipping

JUDGE = {"op": "judge", "rubric": "Is polite."}


def test_a_deterministic_failure_skips_similar_and_judge() -> None:
    # Written model-graded first: they still run last, so the failure skips them.
    asserts = [JUDGE, {"op": "similar", "value": REFERENCE}, "contains:zebra"]
    result = evaluate(golden(asserts=asserts), REFERENCE, "c")
    assert result.status == "fail"
    assert result.decided_by == "tier1-asserts"
    checks = [c.to_dict() for c in result.checks]
    assert [c["op"] for c in checks] == ["judge", "similar", "contains"]  # the written order
    for skipped in checks[:2]:
        assert {k: skipped[k] for k in SKIPPED} == SKIPPED
    # Skipped checks are not in the score: only the failed contains counts (0 of 1).
    assert result.score == 0.0
    assert "2 model-graded assert(s) skipped" in result.notes[0]


def test_a_failed_similar_skips_the_judge_but_not_the_other_way_round() -> None:
    asserts = [JUDGE, {"op": "similar", "value": REFERENCE}]
    result = evaluate(golden(asserts=asserts), FAR, "c")
    assert result.status == "fail"
    assert result.checks[0].evidence == {"skipped": True}
    assert result.checks[1].evidence["score"] < 0.8  # similar ran, and failed


def test_a_weight_zero_failure_decides_nothing() -> None:
    asserts = [{"op": "contains", "value": "zebra", "weight": 0}, JUDGE]
    result = evaluate(golden(asserts=asserts), REFERENCE, "c")
    assert result.status == "needs-judge"
    assert result.decided_by == "tier3-judge"
    assert result.checks[1].evidence == {"reason": "needs_judge"}


@pytest.mark.parametrize(
    ("threshold", "output", "status", "skipped"),
    [
        # 2 cheap checks and a similar, weight 1 each. One cheap failure: the best score left
        # is 2/3, so a threshold of 0.7 is out of reach (decided: fail) ...
        (0.7, "cat only", "fail", True),
        # ... while 0.6 can still be reached: undecided, similar runs (and fails the mark).
        (0.6, "cat only", "fail", False),
        # Both cheap checks pass: even a zero similarity keeps 2/3 >= 0.6 (decided: pass) ...
        (0.6, "cat mat", "pass", True),
        # ... but not 0.7: undecided, similar runs (0.48), and (2 + 0.48) / 3 reaches 0.7.
        (0.7, "cat mat", "pass", False),
    ],
)
def test_with_a_golden_threshold_only_an_out_of_reach_outcome_skips(
    threshold: float, output: str, status: str, skipped: bool
) -> None:
    asserts = ["contains:cat", "contains:mat", {"op": "similar", "value": REFERENCE}]
    result = evaluate(golden(asserts=asserts, threshold=threshold), output, "c")
    assert result.status == status
    similar = result.checks[2]
    assert (similar.evidence == {"skipped": True}) is skipped
    done = [1.0 if c.passed else 0.0 for c in result.checks[:2]]
    if skipped:
        assert result.score == sum(done) / 2
    else:
        assert result.score == pytest.approx((sum(done) + similar.evidence["score"]) / 3)


def test_judge_asserts_are_checked_when_the_golden_loads() -> None:
    with pytest.raises(GoldenError, match="rubric"):
        golden(asserts=[{"op": "judge"}])
    with pytest.raises(GoldenError, match="mapping"):
        golden(asserts=["judge:be polite"])
    with pytest.raises(GoldenError, match="inside a group"):
        golden(asserts=[{"op": "any-of", "asserts": [JUDGE, "contains:a"]}])
    with pytest.raises(GoldenError, match="not an assert"):
        golden(asserts=[{"op": "not-judge", "rubric": "x"}])
    with pytest.raises(GoldenError, match="unknown argument"):
        golden(asserts=[{**JUDGE, "value": "x"}])
    # A key YAML reads as a number is one line naming it, in a judge or a group alike.
    for raw in ({**JUDGE, "value": "x", 1: "y"}, {"op": "any-of", "asserts": ["a"], 2: "z"}):
        with pytest.raises(GoldenError, match="keys must be text; YAML read"):
            golden(asserts=[raw])


def test_a_judge_assert_outside_a_golden_fails_closed() -> None:
    check = run_assert(parse_assert(JUDGE), OutputView("anything"))
    assert check.passed is False
    assert check.evidence == {"reason": "judge_not_available"}


# --------------------------------------------------------------------------- judge via the gate


@pytest.fixture
def server() -> Any:
    with fake_openai() as s:
        yield s


# The fake judge scores the 'SCORE=x' the graded output carries.
JUDGE_GOLDENS: list[dict[str, Any]] = [
    # Reached: the cheap check passes, the judge decides (0.9 >= 0.8).
    {"id": "judged", "input": "q", "asserts": ["contains:cache", JUDGE]},
    # Reached, graded below the assert's own threshold.
    {"id": "low", "input": "q", "asserts": ["contains:cache", {**JUDGE, "threshold": 0.95}]},
    # Decided by the failing cheap check: the judge is skipped, no call made.
    {"id": "decided", "input": "q", "asserts": ["contains:zebra", JUDGE]},
    # No judge assert: scored exactly as before.
    {"id": "plain", "input": "q", "asserts": ["contains:cache"]},
]
JUDGE_OUTPUTS = {
    "judged": "a cache SCORE=0.9",
    "low": "a cache SCORE=0.9",
    "decided": "a cache SCORE=0.9",
    "plain": "a cache",
}


def test_judge_asserts_are_judged_when_reached_and_skipped_when_decided(
    server: FakeOpenAI, tmp_path: Path
) -> None:
    goldens, outputs = make_project(
        tmp_path, toml_judge(server, "judge-json"), JUDGE_GOLDENS, JUDGE_OUTPUTS
    )
    document = judged_run(tmp_path, goldens, outputs, "--judge")
    results = results_by_id(document)
    judged = results["judged"]
    assert (judged["status"], judged["decided_by"]) == ("pass", "tier3-judge")
    assert judged["checks"][1]["passed"] is True
    assert judged["checks"][1]["evidence"]["score"] == 0.9
    # The weighted mean of the contains (1) and the judge's score (0.9).
    assert judged["score"] == pytest.approx(0.95)
    low = results["low"]
    assert (low["status"], low["decided_by"]) == ("fail", "tier3-judge")
    assert low["checks"][1]["reason"] == "judge score 0.90 below threshold 0.95"
    decided = results["decided"]
    assert (decided["status"], decided["decided_by"]) == ("fail", "tier1-asserts")
    assert {k: decided["checks"][1][k] for k in SKIPPED} == SKIPPED
    assert results["plain"]["decided_by"] == "tier1-asserts"
    assert document["summary"]["judge_calls_saved"] == 1
    assert document["summary"]["model_calls"]["judge"]["made"] == 2
    # Two judge calls, one per reached judge assert, each with its own rubric.
    assert server.total == 2
    assert all("Is polite." in p for p in server.prompts())


def test_without_the_judge_a_reached_judge_assert_is_needs_judge(
    server: FakeOpenAI, tmp_path: Path
) -> None:
    goldens, outputs = make_project(
        tmp_path, toml_judge(server, "judge-json"), JUDGE_GOLDENS, JUDGE_OUTPUTS
    )
    document = judged_run(tmp_path, goldens, outputs)
    results = results_by_id(document)
    assert results["judged"]["status"] == "needs-judge"
    assert results["judged"]["passed"] is None
    assert results["decided"]["status"] == "fail"
    assert document["summary"]["judge_calls_saved"] == 1
    assert server.total == 0  # deterministic mode never calls a model


def test_a_run_without_judge_asserts_has_no_saved_count(server: FakeOpenAI, tmp_path: Path) -> None:
    goldens, outputs = make_project(
        tmp_path, toml_judge(server, "judge-json"), JUDGE_GOLDENS[3:], JUDGE_OUTPUTS
    )
    document = judged_run(tmp_path, goldens, outputs, "--judge")
    assert "judge_calls_saved" not in document["summary"]


def test_a_judge_error_in_a_judge_assert_is_an_error_never_a_pass(
    server: FakeOpenAI, tmp_path: Path
) -> None:
    goldens, outputs = make_project(
        tmp_path, toml_judge(server, "judge-garbage"), JUDGE_GOLDENS[:1], JUDGE_OUTPUTS
    )
    document = judged_run(tmp_path, goldens, outputs, "--judge", exit_code=1)  # undecided
    result = results_by_id(document)["judged"]
    assert result["status"] == "error"
    assert result["passed"] is False
    assert result["checks"][1]["evidence"] == {"reason": "judge_error"}
    assert result["notes"][0].startswith("judge-error:")


# --------------------------------------------------------------------------- parallel


@needs_fork
def test_model_graded_goldens_score_the_same_split_or_not(tmp_path: Path) -> None:
    goldens, outputs = make_suite(tmp_path)
    rows = []
    for i in range(300):
        asserts: list[Any] = ["contains:FROM", {"op": "similar", "value": f"SELECT {i} FROM t"}]
        if i % 2:
            asserts.append(JUDGE)
        if i % 3 == 0:
            asserts.append("contains:zebra")
        rows.append(json.dumps({"id": f"s{i:04d}", "input": "q", "asserts": asserts}) + "\n")
        outputs[f"s{i:04d}"] = f"SELECT {i} FROM t"
    with (goldens / "stretch" / "rows.jsonl").open("a", encoding="utf-8") as f:
        f.writelines(rows)
    path = write_outputs(tmp_path / "outputs.json", outputs)
    one, split = both(tmp_path, goldens, "--outputs", path, "--json", "--similarity", "difflib")
    assert one[0] == split[0]
    assert one[1] == split[1]
    document = json.loads(one[1])
    results = {r["id"]: r for r in document["results"]}
    assert results["s0001"]["status"] == "needs-judge"
    assert results["s0003"]["checks"][1]["evidence"] == {"skipped": True}
    assert results["s0002"]["checks"][1]["evidence"]["backend"] == "difflib"
    # Judge asserts on odd i; those with i % 3 == 0 too (i = 3, 9, ..., 297) were skipped.
    assert document["summary"]["judge_calls_saved"] == 50
