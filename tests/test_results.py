"""assay.results: the one result shape and the aggregates computed from results (in one place):
totals, candidate summaries, the ranking and the results document."""

from __future__ import annotations

import math

import pytest

from assay.asserts import CheckResult
from assay.results import (
    SCHEMA_VERSION,
    CandidateSummary,
    Result,
    rank,
    results_document,
    summarize,
    summarize_by_candidate,
    totals,
)
from assay.vocabulary import STATUSES, Status


def scored(candidate: str, score: float | None, status: Status | None = None) -> Result:
    status = status or ("pass" if score == 1.0 else "fail")
    passed = None if status == "needs-judge" else status == "pass"
    decided_by = "tier3-judge" if score is None else "tier1-asserts"
    return Result(f"g-{candidate}-{score}", "smoke", candidate, status, passed, score, decided_by)


def judge_error(candidate: str) -> Result:
    return Result(
        "g-judged",
        "smoke",
        candidate,
        "error",
        None,
        None,
        "tier3-judge",
        notes=("judge-error: the verdict was not JSON",),
    )


def counts(**by_status: int) -> dict[str, int]:
    out = dict.fromkeys(STATUSES, 0)
    for key, n in by_status.items():
        out[key.replace("_", "-")] = n
    return out


# --------------------------------------------------------------- the worked example


def test_a_judge_error_does_not_drag_the_mean_down() -> None:
    # Candidate A: one result scored 1.0 and one judge error (status error, no score);
    # candidate B: one result scored 0.0. Mean over the results that have a score:
    # A = 1.0 / 1 = 1.0, B = 0.0 / 1 = 0.0, all = (1.0 + 0.0) / 2 = 0.5, not (1 + 0 + 0) / 3.
    a_pass = Result("g1", "smoke", "A", "pass", True, 1.0, "tier1-asserts")
    a_error = judge_error("A")
    b_fail = Result("g1", "smoke", "B", "fail", False, 0.0, "tier1-asserts")
    every = [a_pass, a_error, b_fail]

    overall = totals(every)
    assert overall.mean_score == 0.5
    assert overall.total == 3
    assert overall.counts == counts(**{"pass": 1, "fail": 1, "error": 1})
    assert overall.pass_rate == pytest.approx(1 / 3)

    summaries = summarize_by_candidate(every)
    by_candidate = {s.candidate: s for s in summaries}
    assert by_candidate["A"].mean_score == 1.0
    assert by_candidate["B"].mean_score == 0.0
    assert by_candidate["A"].total == 2
    assert by_candidate["A"].pass_rate == 0.5

    document = results_document("gate", every, summaries)
    assert document["summary"]["mean_score"] == 0.5
    assert [c["candidate"] for c in document["summary"]["candidates"]] == ["A", "B"]
    assert [c["mean_score"] for c in document["summary"]["candidates"]] == [1.0, 0.0]
    error_record = document["results"][1]
    assert (error_record["status"], error_record["score"]) == ("error", None)


def test_a_needs_judge_result_has_no_score_and_does_not_count_in_the_mean() -> None:
    mixed = [scored("A", 0.5), scored("A", None, "needs-judge")]
    t = totals(mixed)
    assert t.mean_score == 0.5
    assert t.counts == counts(fail=1, needs_judge=1)
    assert t.pass_rate == 0.0  # needs-judge is not a pass


def test_a_no_output_result_scores_zero_and_counts() -> None:
    mixed = [scored("A", 1.0), Result("g2", "smoke", "A", "no-output", False, 0.0, None)]
    assert totals(mixed).mean_score == 0.5


# ----------------------------------------------------------------------------- totals


def test_totals_of_nothing() -> None:
    t = totals([])
    assert (t.total, t.pass_rate, t.mean_score) == (0, 0.0, None)
    assert t.counts == counts()
    assert t.to_dict() == {"total": 0, "counts": counts(), "pass_rate": 0.0, "mean_score": None}


def test_totals_when_no_result_has_a_score() -> None:
    t = totals([judge_error("A"), scored("A", None, "needs-judge")])
    assert t.mean_score is None
    assert t.total == 2


def test_every_status_is_counted_and_every_key_is_present() -> None:
    every = [
        scored("A", 1.0),
        scored("A", 0.0),
        scored("A", None, "needs-judge"),
        Result("n", "smoke", "A", "no-output", False, 0.0, None),
        judge_error("A"),
    ]
    t = totals(every)
    assert list(t.counts) == list(STATUSES)
    assert t.counts == dict.fromkeys(STATUSES, 1)
    assert t.pass_rate == pytest.approx(0.2)
    assert t.mean_score == pytest.approx(1 / 3)


def test_the_mean_is_exact() -> None:
    t = totals([scored("A", 0.1, "fail") for _ in range(10)])
    assert t.mean_score == pytest.approx(0.1, rel=1e-15)
    assert math.fsum([0.1] * 10) / 10 == t.mean_score


def test_totals_take_any_iterable() -> None:
    assert totals(iter([scored("A", 1.0)])).total == 1


# ------------------------------------------------------------------ candidate summaries


def test_summarize_keeps_the_results_in_order() -> None:
    rs = [scored("A", 0.0), scored("A", 1.0), scored("A", 0.5)]
    s = summarize("A", rs)
    assert isinstance(s, CandidateSummary)
    assert s.results == tuple(rs)
    assert (s.candidate, s.total, s.pass_rate, s.mean_score) == ("A", 3, pytest.approx(1 / 3), 0.5)
    assert s.to_dict() == {
        "candidate": "A",
        "total": 3,
        "counts": counts(**{"pass": 1, "fail": 2}),
        "pass_rate": pytest.approx(1 / 3),
        "mean_score": 0.5,
    }
    assert s.to_dict(with_results=True)["results"] == [r.to_dict() for r in rs]


def test_summarize_by_candidate_includes_candidates_without_results() -> None:
    summaries = summarize_by_candidate([scored("A", 1.0)], ["Z", "A"])
    assert [s.candidate for s in summaries] == ["A", "Z"]
    empty = summaries[1]
    assert (empty.total, empty.mean_score, empty.pass_rate) == (0, None, 0.0)


def test_the_ranking_mean_then_pass_rate_then_code_point_id() -> None:
    summaries = [
        summarize("b", [scored("b", 0.5, "fail")]),
        summarize("a", [scored("a", 0.5, "fail")]),
        summarize("B", [scored("B", 0.5, "fail")]),
        summarize("passing", [scored("passing", 0.5, "pass")]),
        summarize("top", [scored("top", 0.9, "fail")]),
        summarize("none", [scored("none", None, "needs-judge")]),
    ]
    assert [s.candidate for s in rank(summaries)] == ["top", "passing", "B", "a", "b", "none"]


def test_a_candidate_with_no_score_ranks_below_a_zero() -> None:
    zero = summarize("z", [scored("z", 0.0)])
    unscored = summarize("a", [judge_error("a")])
    assert [s.candidate for s in rank([unscored, zero])] == ["z", "a"]


# ------------------------------------------------------------------ the results document


def test_results_document_shape() -> None:
    check = CheckResult("contains:secret", "contains", False, "no 'secret'", {"k": 1})
    r = Result("g", "smoke", "A", "fail", False, 0.0, "tier1-asserts", (check,))
    document = results_document("gate", [r], summarize_by_candidate([r]))
    assert list(document) == ["schema_version", "kind", "results", "summary"]
    assert document["schema_version"] == SCHEMA_VERSION == 2
    assert document["kind"] == "gate"
    assert document["results"] == [r.to_dict()]
    assert document["results"][0]["checks"] == [
        {
            "text": "contains:secret",
            "op": "contains",
            "passed": False,
            "reason": "no 'secret'",
            "evidence": {"k": 1},
        }
    ]
    assert set(document["summary"]) == {"total", "counts", "pass_rate", "mean_score", "candidates"}
    redacted = results_document("agent", [r], summarize_by_candidate([r]), redact=True)
    assert redacted["results"][0]["checks"] == [
        {"text": "contains", "op": "contains", "passed": False, "reason": None, "evidence": None}
    ]
    assert "secret" not in repr(redacted)


# --------------------------------------------------------------------------- the record


def test_result_to_dict_has_the_shared_keys_and_only_the_extras_given() -> None:
    bare = Result("g", None, "c", "pass", True, 1.0, "scorer")
    assert bare.to_dict() == {
        "id": "g",
        "tier": None,
        "candidate": "c",
        "status": "pass",
        "passed": True,
        "score": 1.0,
        "decided_by": "scorer",
        "checks": [],
    }
    full = Result(
        "t",
        "smoke",
        "agent",
        "fail",
        False,
        0.0,
        "agent-telemetry",
        notes=("n",),
        repeats=(1, 3),
        title="T",
        telemetry={"cost_usd": 0.5, "duration_s": 2.0, "tests_failed": 1},
        failure=("test_regression", "1 test(s) failed of 1 run"),
        safety="DIRTY",
    ).to_dict()
    assert full["notes"] == ["n"]
    assert full["repeats"] == {
        "k": 3,
        "passed": 1,
        "pass_fraction": pytest.approx(1 / 3),
        "pass_at_k": True,
        "pass_hat_k": False,
        "flaky": True,
    }
    assert full["title"] == "T"
    assert full["telemetry"] == {"cost_usd": 0.5, "duration_s": 2.0, "tests_failed": 1}
    assert full["failure"] == {
        "category": "test_regression",
        "details": "1 test(s) failed of 1 run",
    }
    assert full["safety"] == "DIRTY"


def test_failed_checks() -> None:
    ok = CheckResult("a", "a", True)
    bad = CheckResult("b", "b", False, "why")
    r = Result("g", "smoke", "c", "fail", False, 0.5, "tier1-asserts", (ok, bad))
    assert r.failed_checks() == [bad]
