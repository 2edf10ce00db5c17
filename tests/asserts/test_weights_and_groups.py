"""Weights, the golden threshold over asserts, assert-set and any-of (promptfoo's semantics)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from assay.asserts import AssertSpec, OutputView, parse_assert, run_assert
from assay.cascade._cascade import evaluate
from assay.errors import GoldenError
from assay.gate._baseline import fingerprint
from assay.goldens import Golden, build_goldens
from assay.results import Result
from tests.test_parallel import both, make_suite, needs_fork, write_outputs


def golden(**data: Any) -> Golden:
    return build_goldens({"id": "g", **data}, source="g.yaml", default_id=None, folder_tier=None)[0]


# Four asserts on "alpha beta gamma": three pass, delta fails -> score 0.75 unweighted.
THREE_OF_FOUR = ["contains:alpha", "contains:beta", "contains:gamma", "contains:delta"]
OUTPUT = "alpha beta gamma"


def test_failing_assert_rescued_by_golden_threshold() -> None:
    # promptfoo: a test with threshold passes on its weighted score, failing asserts or not.
    result = evaluate(golden(asserts=THREE_OF_FOUR, threshold=0.5), OUTPUT, "c")
    assert result.status == "pass"
    assert result.passed is True
    assert result.score == 0.75
    assert result.decided_by == "tier1-asserts"
    assert [c.passed for c in result.checks] == [True, True, True, False]
    assert any("rescued" in note for note in result.notes)


def test_golden_threshold_above_the_score_fails() -> None:
    result = evaluate(golden(asserts=THREE_OF_FOUR, threshold=0.9), OUTPUT, "c")
    assert result.status == "fail"
    assert result.score == 0.75
    assert result.decided_by == "tier1-asserts"
    assert "assert score 0.750 below threshold 0.9" in result.notes


def test_threshold_exactly_met_passes() -> None:
    assert evaluate(golden(asserts=THREE_OF_FOUR, threshold=0.75), OUTPUT, "c").status == "pass"


def test_without_threshold_any_failure_fails_as_before() -> None:
    result = evaluate(golden(asserts=THREE_OF_FOUR), OUTPUT, "c")
    g = golden(asserts=THREE_OF_FOUR)
    # Byte-identical to the rule before weights: fail, passed/total, no notes.
    assert result == Result(
        "g", g.tier, "c", "fail", False, 0.75, "tier1-asserts", result.checks, ()
    )


def test_weight_zero_failing_assert_does_not_fail_the_golden() -> None:
    asserts = ["contains:alpha", {"op": "contains", "value": "delta", "weight": 0}]
    result = evaluate(golden(asserts=asserts), OUTPUT, "c")
    assert result.status == "pass"
    assert result.score == 1.0  # weight 0 adds nothing
    assert result.checks[1].passed is False  # run and reported
    assert "informational (weight 0): contains:delta failed" in result.notes


def test_weight_zero_failing_assert_does_not_lower_a_threshold_score() -> None:
    asserts = ["contains:alpha", {"op": "contains", "value": "delta", "weight": 0}]
    result = evaluate(golden(asserts=asserts, threshold=1.0), OUTPUT, "c")
    assert (result.status, result.score) == ("pass", 1.0)


def test_weights_make_a_weighted_mean() -> None:
    asserts = [
        {"op": "contains", "value": "alpha", "weight": 3},
        {"op": "contains", "value": "delta", "weight": 1},
    ]
    result = evaluate(golden(asserts=asserts), OUTPUT, "c")
    assert (result.status, result.score) == ("fail", 0.75)
    rescued = evaluate(golden(asserts=asserts, threshold=0.7), OUTPUT, "c")
    assert (rescued.status, rescued.score) == ("pass", 0.75)


def test_all_weights_zero_scores_one() -> None:
    asserts = [{"op": "contains", "value": "delta", "weight": 0}]
    result = evaluate(golden(asserts=asserts), OUTPUT, "c")
    assert (result.status, result.score) == ("pass", 1.0)


@pytest.mark.parametrize("weight", [True, -1, float("nan"), float("inf"), "2", None])
def test_bad_weight_is_a_load_error(weight: Any) -> None:
    with pytest.raises(GoldenError) as info:
        golden(asserts=["is-json", {"op": "contains", "value": "a", "weight": weight}])
    assert info.value.field == "asserts[1].weight"


def test_weight_is_in_the_fingerprint() -> None:
    plain = golden(asserts=[{"op": "contains", "value": "a"}])
    heavy = golden(asserts=[{"op": "contains", "value": "a", "weight": 2}])
    assert fingerprint(plain) != fingerprint(heavy)


ASSERT_SET = {
    "op": "assert-set",
    "threshold": 0.5,
    "asserts": ["contains:alpha", "contains:delta"],  # scores 0.5: passes at 0.5
}


def test_assert_set_with_threshold_inside_a_golden() -> None:
    g = golden(asserts=[ASSERT_SET, "contains:gamma"])
    result = evaluate(g, OUTPUT, "c")
    assert result.status == "pass"  # the set passes on its own threshold
    group = result.checks[0]
    assert group.passed is True
    assert group.op == "assert-set"
    assert group.text == "assert-set (1 of 2 passed)"
    assert group.evidence["score"] == 0.5
    assert [c["passed"] for c in group.evidence["checks"]] == [True, False]
    # The set counts as one assert with its own score: (0.5 + 1) / 2.
    assert result.score == 0.75


def test_assert_set_below_its_threshold_fails_naming_the_failures() -> None:
    raw = {**ASSERT_SET, "threshold": 0.6}
    check = run_assert(parse_assert(raw), OutputView(OUTPUT))
    assert check.passed is False
    assert "contains:delta" in (check.reason or "")
    assert "0.6" in (check.reason or "")
    assert check.evidence["reason"] == "group_failed"


def test_assert_set_without_threshold_needs_every_weighted_child() -> None:
    raw = {"op": "assert-set", "asserts": ["contains:alpha", "contains:delta"]}
    check = run_assert(parse_assert(raw), OutputView(OUTPUT))
    assert check.passed is False
    assert check.evidence["score"] == 0.5
    informational = {
        "op": "assert-set",
        "asserts": ["contains:alpha", {"op": "contains", "value": "delta", "weight": 0}],
    }
    assert run_assert(parse_assert(informational), OutputView(OUTPUT)).passed is True


def test_assert_set_weight_counts_in_the_parent() -> None:
    heavy_set = {"op": "assert-set", "weight": 3, "asserts": ["contains:delta"]}
    result = evaluate(golden(asserts=[heavy_set, "contains:alpha"]), OUTPUT, "c")
    assert result.score == 0.25


def test_any_of_passes_when_one_child_passes() -> None:
    raw = {"op": "any-of", "asserts": ["contains:delta", "contains:beta"]}
    check = run_assert(parse_assert(raw), OutputView(OUTPUT))
    assert check.passed is True
    assert check.evidence["score"] == 1.0
    assert check.text == "any-of (1 of 2 passed)"


def test_any_of_fails_when_no_child_passes() -> None:
    raw = {"op": "any-of", "asserts": ["contains:delta", "contains:omega"]}
    check = run_assert(parse_assert(raw), OutputView(OUTPUT))
    assert check.passed is False
    assert "contains:delta" in (check.reason or "")
    assert "contains:omega" in (check.reason or "")
    assert check.evidence["score"] == 0.0


def test_bad_child_is_a_load_error_naming_it() -> None:
    bad = {"op": "assert-set", "asserts": [{"value": "x", "weight": 1}]}
    with pytest.raises(GoldenError) as info:
        golden(asserts=["is-json", "is-json", bad])
    assert info.value.field == "asserts[2].asserts[0]"


def test_bad_child_weight_is_named() -> None:
    bad = {"op": "any-of", "asserts": [{"op": "contains", "value": "x", "weight": -2}]}
    with pytest.raises(GoldenError) as info:
        golden(asserts=[bad])
    assert info.value.field == "asserts[0].asserts[0].weight"


def test_nested_assert_set_is_a_load_error() -> None:
    inner = {"op": "assert-set", "asserts": ["is-json"]}
    with pytest.raises(GoldenError) as info:
        golden(asserts=[{"op": "assert-set", "asserts": [inner]}])
    assert info.value.field == "asserts[0].asserts[0]"
    assert "nested" in info.value.message


@pytest.mark.parametrize(
    "raw",
    [
        {"op": "assert-set", "asserts": []},
        {"op": "any-of"},
        {"op": "not-any-of", "asserts": ["is-json"]},
        {"op": "assert-set", "asserts": ["is-json"], "threshold": 2},
        {"op": "any-of", "asserts": ["is-json"], "threshold": 0.5},
    ],
)
def test_malformed_groups_are_load_errors(raw: dict[str, Any]) -> None:
    with pytest.raises(GoldenError):
        golden(asserts=[raw])


def test_group_children_and_weights_are_in_the_fingerprint() -> None:
    one = golden(asserts=[{"op": "any-of", "asserts": ["contains:a"]}])
    two = golden(asserts=[{"op": "any-of", "asserts": ["contains:b"]}])
    weighted = golden(asserts=[{"op": "any-of", "asserts": [{"op": "contains", "value": "a"}]}])
    heavier = golden(
        asserts=[{"op": "any-of", "asserts": [{"op": "contains", "value": "a", "weight": 2}]}]
    )
    prints = {fingerprint(g) for g in (one, two, weighted, heavier)}
    assert len(prints) == 4


def test_a_group_written_as_a_string_is_a_load_error() -> None:
    with pytest.raises(GoldenError) as info:
        golden(asserts=["is-json", "any-of"])
    assert info.value.field == "asserts[1]"


def test_a_group_built_in_python_without_children_fails_closed() -> None:
    check = run_assert(AssertSpec("any-of", False), OutputView(OUTPUT))
    assert check.passed is False
    assert "asserts" in (check.reason or "")
    negated = run_assert(AssertSpec("assert-set", True, {"asserts": ["is-json"]}), OutputView("{}"))
    assert negated.passed is False


def test_a_group_built_in_python_parses_its_children() -> None:
    spec = AssertSpec("any-of", False, {"asserts": ["contains:delta", "contains:beta"]})
    assert run_assert(spec, OutputView(OUTPUT)).passed is True


# ------------------------------------------------------------------ forked workers


NEW_KEY_ASSERTS: list[Any] = [
    [{"op": "contains", "value": "FROM", "weight": 2}, "contains:nowhere"],
    [{"op": "contains", "value": "nowhere", "weight": 0}, "is-json"],
    [{"op": "assert-set", "threshold": 0.5, "asserts": ["contains:FROM", "contains:nope"]}],
    [{"op": "any-of", "asserts": ["contains:nope", "is-json"]}, "contains:zzz"],
    [{"op": "python", "value": "checks.py:score"}, "is-json"],
    [{"op": "tool-call", "name": "f"}],
]


@needs_fork
def test_forked_workers_score_the_new_keys_identically(tmp_path: Path) -> None:
    goldens, outputs = make_suite(tmp_path)
    (tmp_path / "checks.py").write_text(
        "def score(output, context):\n    return (len(output) % 10) / 10\n", encoding="utf-8"
    )
    lines = []
    for i in range(600):
        row: dict[str, Any] = {
            "id": f"w{i:05d}",
            "input": "q",
            "asserts": NEW_KEY_ASSERTS[i % len(NEW_KEY_ASSERTS)],
        }
        if i % 4 == 0:
            row["threshold"] = 0.5
        lines.append(json.dumps(row) + "\n")
        outputs[f"w{i:05d}"] = json.dumps({"answer": f"SELECT {i} FROM t"})
    with (goldens / "stretch" / "rows.jsonl").open("a", encoding="utf-8") as f:
        f.writelines(lines)
    path = write_outputs(tmp_path / "outputs.json", outputs)
    one, split = both(tmp_path, goldens, "--outputs", path, "--json")
    assert one[0] == split[0]
    assert one[1] == split[1]
    results = {r["id"]: r for r in json.loads(one[1])["results"]}
    # The new keys were scored (not errors): a rescued weighted golden, a python score.
    assert results["w00000"]["status"] == "pass"  # (2·1 + 0) / 3 rescued by 0.5
    assert results["w00006"]["status"] == "fail"  # the same without a threshold
    assert results["w00004"]["checks"][0]["evidence"]["function"] == "checks.py:score"
