"""evaluate_prompt_candidates: order, targets, aggregates, ranking, validation, abort,
concurrency, privacy."""

from __future__ import annotations

import asyncio
import functools
import inspect
import logging
import math
import random
import threading
import typing
from collections.abc import Callable
from typing import Any

import pytest

import assay
from assay import (
    AbortController,
    AbortError,
    AbortSignal,
    CandidateSummary,
    CheckResult,
    EvaluationItem,
    PromptCandidate,
    Result,
    ValidationError,
    evaluate_prompt_candidates,
    evaluate_prompt_candidates_sync,
)

# --------------------------------------------------------------------------- helpers


def cands(*ids: str) -> list[dict[str, Any]]:
    return [{"id": i, "prompt": f"prompt {i}"} for i in ids]


def items(*ids: str) -> list[dict[str, Any]]:
    return [{"id": i, "input": {"q": i}} for i in ids]


def cid(candidate: Any) -> str:
    return candidate["id"] if isinstance(candidate, dict) else candidate.id


def iid(item: Any) -> str:
    return item["id"] if isinstance(item, dict) else item.id


async def echo_run(candidate: Any, item: Any, signal: AbortSignal) -> Any:
    return {"c": cid(candidate), "i": iid(item)}


def table_scorer(table: dict[tuple[str, str], tuple[float, bool]]) -> Callable[..., Any]:
    """A sync scorer reading (score, passed) for the pair from the output of echo_run."""

    def scorer(target: dict[str, Any], signal: AbortSignal) -> dict[str, Any]:
        out = target["output"]
        value, passed = table[out["c"], out["i"]]
        return {"score": value, "passed": passed, "evidence": {"pair": [out["c"], out["i"]]}}

    return scorer


def const_scorer(value: float = 1, passed: bool = True) -> Callable[..., Any]:
    def scorer(target: dict[str, Any], signal: AbortSignal) -> dict[str, Any]:
        return {"score": value, "passed": passed}

    return scorer


def evaluate(*args: Any, **kwargs: Any) -> list[CandidateSummary]:
    return asyncio.run(evaluate_prompt_candidates(*args, **kwargs))


def ranked(
    per_candidate: dict[str, list[tuple[float, bool]]], max_concurrency: int = 1
) -> list[str]:
    """Run with a table of (score, passed) per candidate; return the ranked candidate ids."""
    n_items = len(next(iter(per_candidate.values())))
    item_ids = [f"i{k}" for k in range(n_items)]
    table = {
        (c, item_ids[k]): entry
        for c, entries in per_candidate.items()
        for k, entry in enumerate(entries)
    }
    scores = evaluate(
        cands(*per_candidate),
        items(*item_ids),
        echo_run,
        table_scorer(table),
        AbortController().signal,
        max_concurrency=max_concurrency,
    )
    return [s.candidate for s in scores]


def scored(
    item_id: str, candidate: str, value: float, passed: bool, evidence: Any = None
) -> Result:
    """The per-item result the API returns: no tier, decided by the scorer, one scorer check."""
    return Result(
        item_id,
        None,
        candidate,
        "pass" if passed else "fail",
        passed,
        value,
        "scorer",
        (CheckResult("scorer", "scorer", passed, None, evidence),),
    )


def counts(passed: int, failed: int) -> dict[str, int]:
    return {"pass": passed, "fail": failed, "needs-judge": 0, "no-output": 0, "error": 0}


class Boom(Exception):
    pass


# --------------------------------------------------------------------------- exports


def test_top_level_exports() -> None:
    assert assay.evaluate_prompt_candidates is evaluate_prompt_candidates
    assert assay.evaluate_prompt_candidates_sync is evaluate_prompt_candidates_sync
    assert assay.AbortController is AbortController
    assert assay.PromptCandidate is PromptCandidate
    assert assay.EvaluationItem is EvaluationItem
    assert assay.CandidateSummary is CandidateSummary
    assert assay.Result is Result


# --------------------------------------------------------------------------- AbortController


def test_abort_controller_basics() -> None:
    controller = AbortController()
    signal = controller.signal
    assert signal.aborted is False
    assert signal.reason is None
    signal.throw_if_aborted()  # no-op
    controller.abort()
    assert signal.aborted is True
    assert isinstance(signal.reason, AbortError)
    with pytest.raises(AbortError):
        signal.throw_if_aborted()


def test_abort_with_exception_reason_and_abort_is_once() -> None:
    controller = AbortController()
    reason = Boom("stop now")
    controller.abort(reason)
    controller.abort(Boom("later"))
    assert controller.signal.reason is reason
    with pytest.raises(Boom) as info:
        controller.signal.throw_if_aborted()
    assert info.value is reason


# --------------------------------------------------------------------------- call order


def test_sequential_call_order_is_candidate_major() -> None:
    calls: list[tuple[str, str, str]] = []

    async def run(candidate: Any, item: Any, signal: AbortSignal) -> Any:
        calls.append(("run", cid(candidate), iid(item)))
        await asyncio.sleep(0)
        return {"c": cid(candidate), "i": iid(item)}

    async def scorer(target: dict[str, Any], signal: AbortSignal) -> dict[str, Any]:
        calls.append(("score", target["output"]["c"], target["output"]["i"]))
        await asyncio.sleep(0)
        return {"score": 1, "passed": True}

    evaluate(cands("z", "a", "m"), items("2", "1"), run, scorer, AbortController().signal)
    assert calls == [
        ("run", "z", "2"),
        ("score", "z", "2"),
        ("run", "z", "1"),
        ("score", "z", "1"),
        ("run", "a", "2"),
        ("score", "a", "2"),
        ("run", "a", "1"),
        ("score", "a", "1"),
        ("run", "m", "2"),
        ("score", "m", "2"),
        ("run", "m", "1"),
        ("score", "m", "1"),
    ]


def test_callbacks_receive_the_inputs_and_the_same_signal() -> None:
    controller = AbortController()
    candidates = [{"id": "c1", "prompt": "P1", "metadata": {"v": 1}}]
    its = [{"id": "i1", "input": {"x": 1}, "expected": "E"}]
    seen: list[Any] = []

    async def run(candidate: Any, item: Any, signal: AbortSignal) -> Any:
        seen.append((candidate, item, signal))
        return "OUT"

    def scorer(target: dict[str, Any], signal: AbortSignal) -> dict[str, Any]:
        seen.append((target, signal))
        return {"score": 1, "passed": True}

    evaluate(candidates, its, run, scorer, controller.signal)
    (candidate, item, run_signal), (target, score_signal) = seen
    assert candidate == {"id": "c1", "prompt": "P1", "metadata": {"v": 1}}
    assert item == {"id": "i1", "input": {"x": 1}, "expected": "E"}
    assert run_signal is controller.signal
    assert score_signal is controller.signal
    assert target == {"input": {"x": 1}, "output": "OUT", "expected": "E"}


def test_typed_inputs_are_accepted() -> None:
    seen: list[tuple[str, str, str]] = []

    async def run(candidate: Any, item: Any, signal: AbortSignal) -> Any:
        seen.append((candidate.id, candidate.prompt, item.id))
        return item.input

    candidates = [PromptCandidate("b", "pb", {"k": "v"}), PromptCandidate("a", "pa")]
    its = [EvaluationItem("x", 1), EvaluationItem("y", 2, expected=2)]

    def scorer(target: dict[str, Any], signal: AbortSignal) -> dict[str, Any]:
        return {"score": target["output"] / 2, "passed": target["output"] == 2}

    scores = evaluate(candidates, its, run, scorer, AbortController().signal)
    assert seen == [("b", "pb", "x"), ("b", "pb", "y"), ("a", "pa", "x"), ("a", "pa", "y")]
    assert [s.candidate for s in scores] == ["a", "b"]
    assert scores[0].mean_score == 0.75
    assert scores[0].pass_rate == 0.5


# --------------------------------------------------------------------------- target shape


def collect_targets(its: list[Any]) -> list[dict[str, Any]]:
    targets: list[dict[str, Any]] = []

    async def run(candidate: Any, item: Any, signal: AbortSignal) -> Any:
        return f"out-{iid(item)}"

    def scorer(target: dict[str, Any], signal: AbortSignal) -> dict[str, Any]:
        targets.append(dict(target))
        return {"score": 1, "passed": True}

    evaluate(cands("c"), its, run, scorer, AbortController().signal)
    return targets


def test_target_shape_for_dict_items() -> None:
    targets = collect_targets(
        [
            {"id": "plain", "input": "in1"},
            {"id": "exp", "input": "in2", "expected": "E"},
            {"id": "ctx", "input": "in3", "context": ["doc"]},
            {"id": "both", "input": "in4", "expected": {"k": 1}, "context": []},
            {"id": "nones", "input": None, "expected": None, "context": None},
        ]
    )
    assert targets == [
        {"input": "in1", "output": "out-plain"},
        {"input": "in2", "output": "out-exp", "expected": "E"},
        {"input": "in3", "output": "out-ctx", "context": ["doc"]},
        {"input": "in4", "output": "out-both", "expected": {"k": 1}, "context": []},
        {"input": None, "output": "out-nones", "expected": None, "context": None},
    ]
    assert "expected" not in targets[0]
    assert "context" not in targets[0]


def test_target_shape_for_typed_items() -> None:
    targets = collect_targets(
        [
            EvaluationItem("plain", "in1"),
            EvaluationItem("exp", "in2", expected="E"),
            EvaluationItem("ctx", "in3", context=["doc"]),
            EvaluationItem("nones", "in4", expected=None, context=None),
        ]
    )
    assert targets == [
        {"input": "in1", "output": "out-plain"},
        {"input": "in2", "output": "out-exp", "expected": "E"},
        {"input": "in3", "output": "out-ctx", "context": ["doc"]},
        {"input": "in4", "output": "out-nones", "expected": None, "context": None},
    ]
    assert set(targets[0]) == {"input", "output"}


def test_output_none_and_falsy_outputs_reach_the_scorer() -> None:
    outputs = {"a": None, "b": 0, "c": "", "d": False}
    seen: list[Any] = []

    async def run(candidate: Any, item: Any, signal: AbortSignal) -> Any:
        return outputs[iid(item)]

    def scorer(target: dict[str, Any], signal: AbortSignal) -> dict[str, Any]:
        assert "output" in target
        seen.append(target["output"])
        return {"score": 0, "passed": False}

    evaluate(cands("c"), items("a", "b", "c", "d"), run, scorer, AbortController().signal)
    assert seen == [None, 0, "", False]


# --------------------------------------------------------------------------- aggregates


def test_aggregates_and_per_item_records() -> None:
    table = {
        ("c", "i1"): (1, True),
        ("c", "i2"): (0, False),
        ("c", "i3"): (0.5, True),
        ("c", "i4"): (0.25, False),
    }
    scores = evaluate(
        cands("c"),
        items("i1", "i2", "i3", "i4"),
        echo_run,
        table_scorer(table),
        AbortController().signal,
    )
    assert len(scores) == 1
    (s,) = scores
    assert s.candidate == "c"
    assert s.mean_score == 0.4375
    assert s.pass_rate == 0.5
    assert s.total == 4
    assert s.counts == counts(2, 2)
    assert s.results == (
        scored("i1", "c", 1.0, True, {"pair": ["c", "i1"]}),
        scored("i2", "c", 0.0, False, {"pair": ["c", "i2"]}),
        scored("i3", "c", 0.5, True, {"pair": ["c", "i3"]}),
        scored("i4", "c", 0.25, False, {"pair": ["c", "i4"]}),
    )
    assert all(isinstance(r.score, float) for r in s.results)
    assert s.to_dict() == {
        "candidate": "c",
        "total": 4,
        "counts": counts(2, 2),
        "pass_rate": 0.5,
        "mean_score": 0.4375,
    }
    assert s.to_dict(with_results=True)["results"][2] == {
        "id": "i3",
        "tier": None,
        "candidate": "c",
        "status": "pass",
        "passed": True,
        "score": 0.5,
        "decided_by": "scorer",
        "checks": [
            {
                "text": "scorer",
                "op": "scorer",
                "passed": True,
                "reason": None,
                "evidence": {"pair": ["c", "i3"]},
            }
        ],
    }


def test_failed_item_is_status_fail_with_its_score() -> None:
    table = {("c", "i"): (0.25, False)}
    (s,) = evaluate(cands("c"), items("i"), echo_run, table_scorer(table), AbortController().signal)
    (r,) = s.results
    assert (r.status, r.passed, r.score, r.decided_by, r.tier) == (
        "fail",
        False,
        0.25,
        "scorer",
        None,
    )
    assert r.failed_checks() == [r.checks[0]]


def test_per_item_records_follow_item_input_order() -> None:
    ids = ["zz", "a", "M", "0", "b"]
    scores = evaluate(cands("c"), items(*ids), echo_run, const_scorer(), AbortController().signal)
    assert [i.id for i in scores[0].results] == ids


def test_evidence_omitted_is_none() -> None:
    scores = evaluate(
        cands("c"), items("i"), echo_run, const_scorer(1, True), AbortController().signal
    )
    assert scores[0].results == (scored("i", "c", 1.0, True, None),)
    assert scores[0].results[0].checks[0].evidence is None


def test_mean_is_accurate() -> None:
    values = [0.1] * 10
    table = {("c", f"i{k}"): (v, True) for k, v in enumerate(values)}
    scores = evaluate(
        cands("c"),
        items(*(f"i{k}" for k in range(10))),
        echo_run,
        table_scorer(table),
        AbortController().signal,
    )
    assert scores[0].mean_score == pytest.approx(0.1, rel=1e-15)
    assert scores[0].pass_rate == 1.0


def test_scores_outside_unit_interval_are_averaged_as_given() -> None:
    table = {("c", "i1"): (3, True), ("c", "i2"): (-1, False)}
    scores = evaluate(
        cands("c"), items("i1", "i2"), echo_run, table_scorer(table), AbortController().signal
    )
    assert scores[0].mean_score == 1.0
    assert scores[0].pass_rate == 0.5


def test_every_candidate_gets_every_item() -> None:
    scores = evaluate(
        cands("a", "b", "c"),
        items("1", "2", "3", "4", "5"),
        echo_run,
        const_scorer(0.5, False),
        AbortController().signal,
    )
    assert len(scores) == 3
    for s in scores:
        assert s.total == 5
        assert s.counts == counts(0, 5)
        assert len(s.results) == 5
        assert s.mean_score == 0.5
        assert s.pass_rate == 0.0
        assert [i.id for i in s.results] == ["1", "2", "3", "4", "5"]


# --------------------------------------------------------------------------- ranking


def test_rank_by_mean_score_desc() -> None:
    order = ranked(
        {
            "low": [(0.1, True), (0.1, True)],
            "high": [(0.9, False), (0.9, False)],
            "mid": [(0.5, True), (0.5, False)],
        }
    )
    assert order == ["high", "mid", "low"]


def test_mean_beats_pass_rate() -> None:
    # 'a' has the better pass rate, 'b' the better mean: mean decides.
    order = ranked({"a": [(0.6, True), (0.6, True)], "b": [(1.0, False), (0.4, False)]})
    assert order == ["b", "a"]


def test_equal_mean_then_pass_rate_desc() -> None:
    order = ranked(
        {
            "a": [(0.5, False), (0.5, False)],
            "b": [(0.5, True), (0.5, True)],
            "c": [(1.0, True), (0.0, False)],
        }
    )
    assert order == ["b", "c", "a"]


def test_full_tie_is_id_ascending_in_code_point_order() -> None:
    ids = ["alpha", "Zeta", "a", "B", "_x", "b", "Ä", "0"]
    order = ranked({i: [(0.5, True)] for i in ids})
    assert order == ["0", "B", "Zeta", "_x", "a", "alpha", "b", "Ä"]
    assert order.index("B") < order.index("a")
    assert order.index("Zeta") < order.index("alpha")


def test_ranking_does_not_depend_on_input_order() -> None:
    entries = {
        "a": [(0.5, True)],
        "B": [(0.5, True)],
        "c": [(0.5, False)],
        "d": [(0.7, False)],
    }
    expected = ["d", "B", "a", "c"]
    for perm_seed in range(6):
        keys = list(entries)
        random.Random(perm_seed).shuffle(keys)
        assert ranked({k: entries[k] for k in keys}) == expected
        assert ranked({k: entries[k] for k in keys}, max_concurrency=3) == expected


# --------------------------------------------------------------------------- validation


def never_run() -> tuple[list[Any], Callable[..., Any], Callable[..., Any]]:
    calls: list[Any] = []

    async def run(candidate: Any, item: Any, signal: AbortSignal) -> Any:
        calls.append((candidate, item))
        return None

    def scorer(target: dict[str, Any], signal: AbortSignal) -> dict[str, Any]:
        calls.append(target)
        return {"score": 1, "passed": True}

    return calls, run, scorer


def test_empty_candidates_is_checked_first() -> None:
    calls, run, scorer = never_run()
    with pytest.raises(ValidationError) as info:
        evaluate([], [], run, scorer, AbortController().signal)
    assert info.value.field == "candidates"
    assert "candidates" in str(info.value)
    with pytest.raises(ValidationError) as info:
        evaluate([], items("i"), run, scorer, AbortController().signal)
    assert info.value.field == "candidates"
    assert calls == []


def test_empty_candidates_is_checked_before_the_other_arguments() -> None:
    calls, run, scorer = never_run()
    with pytest.raises(ValidationError) as info:
        evaluate([], [], run, scorer, None, max_concurrency=0)  # type: ignore[arg-type]
    assert info.value.field == "candidates"
    with pytest.raises(ValidationError) as info:
        evaluate(cands("c"), [], run, scorer, None, max_concurrency=0)  # type: ignore[arg-type]
    assert info.value.field == "items"
    assert calls == []


def test_empty_items_raises() -> None:
    calls, run, scorer = never_run()
    with pytest.raises(ValidationError) as info:
        evaluate(cands("c"), [], run, scorer, AbortController().signal)
    assert info.value.field == "items"
    assert "items" in str(info.value)
    assert calls == []


def test_validation_error_is_a_value_error() -> None:
    _calls, run, scorer = never_run()
    with pytest.raises(ValueError):
        evaluate([], items("i"), run, scorer, AbortController().signal)


@pytest.mark.parametrize("bad_signal", ["signal", object(), AbortController()])
def test_signal_must_be_an_abort_signal_or_none(bad_signal: Any) -> None:
    calls, run, scorer = never_run()
    with pytest.raises(ValidationError) as info:
        evaluate(cands("c"), items("i"), run, scorer, bad_signal)
    assert "signal" in str(info.value)
    assert info.value.field == "signal"
    with pytest.raises(ValidationError) as info:
        evaluate_prompt_candidates_sync(cands("c"), items("i"), run, scorer, signal=bad_signal)
    assert info.value.field == "signal"
    assert calls == []


def test_empty_candidates_is_checked_before_a_bad_signal() -> None:
    calls, run, scorer = never_run()
    with pytest.raises(ValidationError) as info:
        evaluate([], items("i"), run, scorer, "signal")
    assert info.value.field == "candidates"
    with pytest.raises(ValidationError) as info:
        evaluate(cands("c"), [], run, scorer, "signal")
    assert info.value.field == "items"
    assert calls == []


@pytest.mark.parametrize("bad", [0, -1, True, False, 2.0, "2", None])
def test_max_concurrency_must_be_a_positive_int(bad: Any) -> None:
    calls, run, scorer = never_run()
    with pytest.raises(ValidationError) as info:
        evaluate(cands("c"), items("i"), run, scorer, AbortController().signal, max_concurrency=bad)
    assert "max_concurrency" in str(info.value)
    assert calls == []


@pytest.mark.parametrize(
    ("candidates", "its"),
    [
        (cands("a", "b", "a"), items("i")),
        (cands("a"), items("i", "j", "i")),
        ([{"id": 1, "prompt": "p"}], items("i")),
        ([{"id": None, "prompt": "p"}], items("i")),
        ([{"id": "", "prompt": "p"}], items("i")),
        ([{"prompt": "p"}], items("i")),
        (cands("a"), [{"id": 2, "input": "x"}]),
        (cands("a"), [{"input": "x"}]),
        ([{"id": "a"}], items("i")),
        ([{"id": "a", "prompt": None}], items("i")),
        ([{"id": "a", "prompt": 5}], items("i")),
        ([PromptCandidate("a", "p"), PromptCandidate("a", "q")], items("i")),
        (cands("a"), [EvaluationItem("i", 1), EvaluationItem("i", 2)]),
    ],
)
def test_bad_ids_and_prompts_raise_before_anything_runs(candidates: Any, its: Any) -> None:
    calls, run, scorer = never_run()
    with pytest.raises(ValidationError):
        evaluate(candidates, its, run, scorer, AbortController().signal)
    with pytest.raises(ValidationError):
        evaluate(candidates, its, run, scorer, AbortController().signal, max_concurrency=4)
    assert calls == []


def test_duplicate_id_message_names_the_id() -> None:
    _calls, run, scorer = never_run()
    with pytest.raises(ValidationError) as info:
        evaluate(
            cands("x", "dupe-id"),
            items("i", "dupe-id", "dupe-id"),
            run,
            scorer,
            AbortController().signal,
        )
    assert "dupe-id" in str(info.value)


def test_invalid_later_candidate_means_nothing_runs() -> None:
    calls, run, scorer = never_run()
    candidates = [*cands("a", "b"), {"id": "c"}]
    with pytest.raises(ValidationError):
        evaluate(candidates, items("i"), run, scorer, AbortController().signal)
    assert calls == []


# --------------------------------------------------------------------------- malformed scores

SECRET_OUTPUT = "SECRET-OUTPUT-7f3a"


@pytest.mark.parametrize(
    "bad",
    [
        {"passed": True},
        {"score": None, "passed": True},
        {"score": True, "passed": True},
        {"score": False, "passed": False},
        {"score": math.nan, "passed": True},
        {"score": math.inf, "passed": True},
        {"score": -math.inf, "passed": False},
        {"score": "1", "passed": True},
        {"score": 1},
        {"score": 1, "passed": None},
        {"score": 1, "passed": 1},
        {"score": 0, "passed": 0},
        {"score": 1, "passed": "true"},
        None,
        "pass",
        1,
        [1, True],
    ],
)
@pytest.mark.parametrize("concurrency", [1, 3])
def test_malformed_scorer_result_names_the_pair(bad: Any, concurrency: int) -> None:
    async def run(candidate: Any, item: Any, signal: AbortSignal) -> Any:
        return {"answer": SECRET_OUTPUT, "c": cid(candidate), "i": iid(item)}

    def scorer(target: dict[str, Any], signal: AbortSignal) -> Any:
        out = target["output"]
        if (out["c"], out["i"]) == ("cand-77", "item-42"):
            return bad
        return {"score": 1, "passed": True}

    with pytest.raises(ValidationError) as info:
        evaluate(
            cands("cand-1", "cand-77"),
            items("item-1", "item-42", "item-3"),
            run,
            scorer,
            AbortController().signal,
            max_concurrency=concurrency,
        )
    message = str(info.value)
    assert "cand-77" in message
    assert "item-42" in message
    assert SECRET_OUTPUT not in message
    assert SECRET_OUTPUT not in repr(info.value)


def test_malformed_async_scorer_result() -> None:
    async def scorer(target: dict[str, Any], signal: AbortSignal) -> Any:
        return {"score": 0.5}

    with pytest.raises(ValidationError) as info:
        evaluate(cands("cA"), items("iB"), echo_run, scorer, AbortController().signal)
    assert "cA" in str(info.value)
    assert "iB" in str(info.value)


def test_integer_and_float_scores_are_fine() -> None:
    table = {("c", "i1"): (1, True), ("c", "i2"): (0.0, False)}
    scores = evaluate(
        cands("c"), items("i1", "i2"), echo_run, table_scorer(table), AbortController().signal
    )
    assert scores[0].mean_score == 0.5


# --------------------------------------------------------------------------- sync / async scorer


def test_sync_and_async_scorers_give_the_same_result() -> None:
    table = {
        ("a", "1"): (0.25, True),
        ("a", "2"): (1, True),
        ("b", "1"): (0.5, False),
        ("b", "2"): (0.5, True),
    }
    sync_scorer = table_scorer(table)

    async def async_scorer(target: dict[str, Any], signal: AbortSignal) -> dict[str, Any]:
        await asyncio.sleep(0)
        return sync_scorer(target, signal)

    one = evaluate(
        cands("a", "b"), items("1", "2"), echo_run, sync_scorer, AbortController().signal
    )
    two = evaluate(
        cands("a", "b"), items("1", "2"), echo_run, async_scorer, AbortController().signal
    )
    assert one == two
    assert [(s.candidate, s.mean_score, s.pass_rate) for s in one] == [
        ("a", 0.625, 1.0),
        ("b", 0.5, 0.5),
    ]


# --------------------------------------------------------------------------- sync / async callables

SYNC_TABLE = {
    ("a", "1"): (0.25, True),
    ("a", "2"): (1, True),
    ("a", "3"): (0, False),
    ("b", "1"): (0.5, False),
    ("b", "2"): (0.5, True),
    ("b", "3"): (0.75, True),
    ("c", "1"): (0.5, False),
    ("c", "2"): (0.5, True),
    ("c", "3"): (0.75, True),
}


def sync_echo_run(candidate: Any, item: Any, signal: AbortSignal) -> Any:
    return {"c": cid(candidate), "i": iid(item)}


async def suspending_echo_run(candidate: Any, item: Any, signal: AbortSignal) -> Any:
    await asyncio.sleep(0)
    return {"c": cid(candidate), "i": iid(item)}


def async_table_scorer(table: dict[tuple[str, str], tuple[float, bool]]) -> Callable[..., Any]:
    sync_scorer = table_scorer(table)

    async def scorer(target: dict[str, Any], signal: AbortSignal) -> dict[str, Any]:
        await asyncio.sleep(0)
        return sync_scorer(target, signal)

    return scorer


@pytest.mark.parametrize("concurrency", [1, 4])
def test_sync_callables_through_the_sync_api_equal_async_ones(concurrency: int) -> None:
    args = (cands("c", "a", "b"), items("1", "2", "3"))
    reference = evaluate(
        *args,
        suspending_echo_run,
        async_table_scorer(SYNC_TABLE),
        AbortController().signal,
        max_concurrency=concurrency,
    )
    through_sync_api = evaluate_prompt_candidates_sync(
        *args,
        sync_echo_run,
        table_scorer(SYNC_TABLE),
        AbortController().signal,
        max_concurrency=concurrency,
    )
    through_async_api = evaluate(
        *args,
        sync_echo_run,
        table_scorer(SYNC_TABLE),
        AbortController().signal,
        max_concurrency=concurrency,
    )
    assert through_sync_api == reference
    assert through_async_api == reference
    assert [s.to_dict(with_results=True) for s in through_sync_api] == [
        s.to_dict(with_results=True) for s in reference
    ]
    # b and c tie on mean and pass rate (so the id decides); a has the lowest mean.
    assert [(s.candidate, s.mean_score, s.pass_rate) for s in reference] == [
        ("b", 0.5833333333333334, pytest.approx(2 / 3)),
        ("c", 0.5833333333333334, pytest.approx(2 / 3)),
        ("a", 0.4166666666666667, pytest.approx(2 / 3)),
    ]


@pytest.mark.parametrize(
    ("run", "scorer"),
    [
        (sync_echo_run, table_scorer(SYNC_TABLE)),
        (sync_echo_run, async_table_scorer(SYNC_TABLE)),
        (suspending_echo_run, table_scorer(SYNC_TABLE)),
    ],
    ids=["sync-sync", "sync-async", "async-sync"],
)
def test_mixed_sync_and_async_callables_give_the_same_summaries(
    run: Callable[..., Any], scorer: Callable[..., Any]
) -> None:
    args = (cands("a", "b", "c"), items("1", "2", "3"))
    reference = evaluate(
        *args, suspending_echo_run, async_table_scorer(SYNC_TABLE), AbortController().signal
    )
    for concurrency in (1, 2, 16):
        assert evaluate(*args, run, scorer, max_concurrency=concurrency) == reference
        assert evaluate_prompt_candidates_sync(*args, run, scorer) == reference


def test_sync_run_candidate_call_order_inputs_and_signal() -> None:
    controller = AbortController()
    calls: list[Any] = []

    def run(candidate: Any, item: Any, signal: AbortSignal) -> Any:
        calls.append(("run", cid(candidate), iid(item), signal))
        return f"{cid(candidate)}/{iid(item)}"

    def scorer(target: dict[str, Any], signal: AbortSignal) -> dict[str, Any]:
        calls.append(("score", target["output"], signal))
        return {"score": 1, "passed": True}

    evaluate_prompt_candidates_sync(
        cands("z", "a"), items("2", "1"), run, scorer, controller.signal
    )
    s = controller.signal
    assert calls == [
        ("run", "z", "2", s),
        ("score", "z/2", s),
        ("run", "z", "1", s),
        ("score", "z/1", s),
        ("run", "a", "2", s),
        ("score", "a/2", s),
        ("run", "a", "1", s),
        ("score", "a/1", s),
    ]
    assert all(call[-1] is s for call in calls)


def test_sync_callables_run_on_the_event_loop_thread() -> None:
    threads: set[int] = set()

    def run(candidate: Any, item: Any, signal: AbortSignal) -> Any:
        threads.add(threading.get_ident())
        return 1

    def scorer(target: dict[str, Any], signal: AbortSignal) -> dict[str, Any]:
        threads.add(threading.get_ident())
        return {"score": 1, "passed": True}

    async def main() -> list[CandidateSummary]:
        threads.add(threading.get_ident())
        return await evaluate_prompt_candidates(
            cands("a", "b"), items("1", "2"), run, scorer, max_concurrency=3
        )

    asyncio.run(main())
    assert threads == {threading.get_ident()}


def test_the_result_is_awaited_not_the_function() -> None:
    """A plain function returning an awaitable (here a future) is awaited; a sync function's
    result is used as is, whatever it is."""

    def run(candidate: Any, item: Any, signal: AbortSignal) -> Any:
        future = asyncio.get_running_loop().create_future()
        future.set_result({"c": cid(candidate), "i": iid(item)})
        return future

    def scorer(target: dict[str, Any], signal: AbortSignal) -> Any:
        return asyncio.sleep(0, result=table_scorer(SYNC_TABLE)(target, signal))

    args = (cands("a", "b", "c"), items("1", "2", "3"))
    reference = evaluate(*args, echo_run, table_scorer(SYNC_TABLE))
    assert evaluate(*args, run, scorer) == reference
    assert evaluate(*args, run, scorer, max_concurrency=3) == reference


class SyncRun:
    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, candidate: Any, item: Any, signal: AbortSignal) -> Any:
        self.calls += 1
        return {"c": cid(candidate), "i": iid(item)}


class AsyncRun:
    def __init__(self) -> None:
        self.calls = 0

    async def __call__(self, candidate: Any, item: Any, signal: AbortSignal) -> Any:
        self.calls += 1
        await asyncio.sleep(0)
        return {"c": cid(candidate), "i": iid(item)}


class SyncScorer:
    def __call__(self, target: dict[str, Any], signal: AbortSignal) -> dict[str, Any]:
        return table_scorer(SYNC_TABLE)(target, signal)


class AsyncScorer:
    async def __call__(self, target: dict[str, Any], signal: AbortSignal) -> dict[str, Any]:
        await asyncio.sleep(0)
        return table_scorer(SYNC_TABLE)(target, signal)


def run_with_offset(offset: float, candidate: Any, item: Any, signal: AbortSignal) -> Any:
    return {"c": cid(candidate), "i": iid(item), "offset": offset}


async def async_run_with_offset(
    offset: float, candidate: Any, item: Any, signal: AbortSignal
) -> Any:
    await asyncio.sleep(0)
    return {"c": cid(candidate), "i": iid(item), "offset": offset}


def scorer_with_offset(
    table: dict[tuple[str, str], tuple[float, bool]], target: dict[str, Any], signal: AbortSignal
) -> dict[str, Any]:
    out = target["output"]
    value, passed = table[out["c"], out["i"]]
    return {
        "score": value + out["offset"],
        "passed": passed,
        "evidence": {"pair": [out["c"], out["i"]]},
    }


async def async_scorer_with_offset(
    table: dict[tuple[str, str], tuple[float, bool]], target: dict[str, Any], signal: AbortSignal
) -> dict[str, Any]:
    await asyncio.sleep(0)
    return scorer_with_offset(table, target, signal)


@pytest.mark.parametrize("api", ["async", "sync"])
def test_callable_objects_are_accepted(api: str) -> None:
    args = (cands("a", "b", "c"), items("1", "2", "3"))
    call = evaluate if api == "async" else evaluate_prompt_candidates_sync
    reference = evaluate(*args, echo_run, table_scorer(SYNC_TABLE))
    for run in (SyncRun(), AsyncRun()):
        for scorer in (SyncScorer(), AsyncScorer()):
            assert call(*args, run, scorer, max_concurrency=2) == reference
        assert run.calls == 2 * 9


@pytest.mark.parametrize("api", ["async", "sync"])
def test_partials_are_accepted(api: str) -> None:
    args = (cands("a", "b", "c"), items("1", "2", "3"))
    call = evaluate if api == "async" else evaluate_prompt_candidates_sync
    reference = evaluate(*args, echo_run, table_scorer(SYNC_TABLE))
    # The bound arguments are used: the run adds 0.5 to every output, the scorer adds it.
    shifted = {key: (value + 0.5, passed) for key, (value, passed) in SYNC_TABLE.items()}
    expected = evaluate(*args, echo_run, table_scorer(shifted))
    assert expected != reference
    for run in (
        functools.partial(run_with_offset, 0.5),
        functools.partial(async_run_with_offset, 0.5),
    ):
        for scorer in (
            functools.partial(scorer_with_offset, SYNC_TABLE),
            functools.partial(async_scorer_with_offset, SYNC_TABLE),
        ):
            assert call(*args, run, scorer) == expected
            assert call(*args, run, scorer, max_concurrency=4) == expected


def test_sync_run_candidate_error_propagates_through_the_sync_api() -> None:
    runs: list[str] = []
    error = Boom("model failed")

    def run(candidate: Any, item: Any, signal: AbortSignal) -> Any:
        runs.append(iid(item))
        if iid(item) == "2":
            raise error
        return 1

    with pytest.raises(Boom) as info:
        evaluate_prompt_candidates_sync(cands("a"), items("1", "2", "3"), run, const_scorer())
    assert info.value is error
    assert runs == ["1", "2"]


def test_concurrency_bound_with_a_sync_run_candidate_and_an_async_scorer() -> None:
    state = {"pairs": 0, "max_pairs": 0}

    def run(candidate: Any, item: Any, signal: AbortSignal) -> Any:
        state["pairs"] += 1
        state["max_pairs"] = max(state["max_pairs"], state["pairs"])
        return 1

    async def scorer(target: dict[str, Any], signal: AbortSignal) -> dict[str, Any]:
        for _ in range(3):
            await asyncio.sleep(0)
        state["pairs"] -= 1
        return {"score": 1, "passed": True}

    for n in (1, 2, 5):
        state.update(pairs=0, max_pairs=0)
        scores = evaluate(
            cands("a", "b"), items(*(str(k) for k in range(10))), run, scorer, max_concurrency=n
        )
        assert state["max_pairs"] == n
        assert state["pairs"] == 0
        assert [s.total for s in scores] == [10, 10]


# --------------------------------------------------------------------------- optional signal


def test_signal_is_optional_and_keeps_its_place_in_the_signature() -> None:
    for function in (evaluate_prompt_candidates, evaluate_prompt_candidates_sync):
        parameters = list(inspect.signature(function).parameters.values())
        assert [p.name for p in parameters] == [
            "candidates",
            "items",
            "run_candidate",
            "scorer",
            "signal",
            "max_concurrency",
        ]
        signal = parameters[4]
        assert signal.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
        assert signal.default is None
        assert parameters[5].default == 1
    assert typing.get_type_hints(evaluate_prompt_candidates)["signal"] == AbortSignal | None


def signal_probe() -> tuple[list[Any], Callable[..., Any], Callable[..., Any]]:
    seen: list[Any] = []

    async def run(candidate: Any, item: Any, signal: AbortSignal) -> Any:
        seen.append(signal)
        return {"c": cid(candidate), "i": iid(item)}

    def scorer(target: dict[str, Any], signal: AbortSignal) -> dict[str, Any]:
        seen.append(signal)
        return table_scorer(SYNC_TABLE)(target, signal)

    return seen, run, scorer


@pytest.mark.parametrize("how", ["omitted", "positional-none", "keyword-none"])
@pytest.mark.parametrize("api", ["async", "sync"])
def test_no_signal_works_and_the_callables_still_get_one(api: str, how: str) -> None:
    args = (cands("b", "a", "c"), items("1", "2", "3"))
    reference = evaluate(*args, echo_run, table_scorer(SYNC_TABLE), AbortController().signal)
    call = evaluate if api == "async" else evaluate_prompt_candidates_sync
    for concurrency in (1, 3):
        seen, run, scorer = signal_probe()
        if how == "omitted":
            scores = call(*args, run, scorer, max_concurrency=concurrency)
        elif how == "positional-none":
            scores = call(*args, run, scorer, None, concurrency)
        else:
            scores = call(*args, run, scorer, signal=None, max_concurrency=concurrency)
        assert scores == reference
        assert len(seen) == 2 * 9
        # One internal signal per call, never None and never aborted, for run and scorer alike.
        assert all(isinstance(s, AbortSignal) for s in seen)
        assert all(s is seen[0] for s in seen)
        assert seen[0].aborted is False
        seen[0].throw_if_aborted()


def test_each_call_without_a_signal_gets_its_own() -> None:
    first, run1, scorer1 = signal_probe()
    second, run2, scorer2 = signal_probe()
    evaluate_prompt_candidates_sync(cands("a"), items("1"), run1, scorer1)
    evaluate_prompt_candidates_sync(cands("a"), items("1"), run2, scorer2)
    assert first[0] is not second[0]


def test_sync_callables_without_a_signal_through_the_sync_api() -> None:
    """The plain-Python form: no AbortController, no async anywhere."""
    scores = evaluate_prompt_candidates_sync(
        [PromptCandidate("a", "pa"), PromptCandidate("b", "pb")],
        [EvaluationItem("1", 1), EvaluationItem("2", 2)],
        lambda candidate, item, signal: candidate.prompt + str(item.input),
        lambda target, signal: {"score": float(target["output"] == "pb2"), "passed": True},
    )
    assert [(s.candidate, s.mean_score, s.pass_rate) for s in scores] == [
        ("b", 0.5, 1.0),
        ("a", 0.0, 1.0),
    ]


# --------------------------------------------------------------------------- abort, sync callables


@pytest.mark.parametrize("api", ["async", "sync"])
@pytest.mark.parametrize("concurrency", [1, 4])
@pytest.mark.parametrize("reason", [None, Boom("from a sync run")])
def test_a_sync_run_candidate_aborting_the_given_signal_stops_the_run(
    api: str, concurrency: int, reason: Any
) -> None:
    controller = AbortController()
    runs: list[tuple[str, bool]] = []
    scored: list[Any] = []

    def run(candidate: Any, item: Any, signal: AbortSignal) -> Any:
        runs.append((iid(item), signal.aborted))
        if iid(item) == "3":
            controller.abort(reason)  # returns normally: checked before scoring
        return iid(item)

    def scorer(target: dict[str, Any], signal: AbortSignal) -> dict[str, Any]:
        scored.append(target["output"])
        return {"score": 1, "passed": True}

    call = evaluate if api == "async" else evaluate_prompt_candidates_sync
    expected = AbortError if reason is None else Boom
    with pytest.raises(expected) as info:
        call(
            cands("a"),
            items(*(str(n) for n in range(10))),
            run,
            scorer,
            controller.signal,
            max_concurrency=concurrency,
        )
    if reason is not None:
        assert info.value is reason
    # Sync pairs run one at a time: exactly pairs 0..3 started, the aborting one not scored.
    assert runs == [(str(n), False) for n in range(4)]
    assert scored == ["0", "1", "2"]


@pytest.mark.parametrize("api", ["async", "sync"])
def test_a_sync_scorer_aborting_the_given_signal_stops_the_run(api: str) -> None:
    controller = AbortController()
    runs: list[str] = []

    def run(candidate: Any, item: Any, signal: AbortSignal) -> Any:
        runs.append(iid(item))
        return iid(item)

    def scorer(target: dict[str, Any], signal: AbortSignal) -> dict[str, Any]:
        if target["output"] == "2":
            controller.abort(Boom("from scorer"))
        return {"score": 1, "passed": True}

    call = evaluate if api == "async" else evaluate_prompt_candidates_sync
    with pytest.raises(Boom):
        call(cands("a"), items("1", "2", "3", "4"), run, scorer, signal=controller.signal)
    assert runs == ["1", "2"]


def test_a_pre_aborted_signal_still_aborts_the_sync_api() -> None:
    calls: list[Any] = []

    def run(candidate: Any, item: Any, signal: AbortSignal) -> Any:
        calls.append(item)
        return 1

    controller = AbortController()
    reason = Boom("before")
    controller.abort(reason)
    with pytest.raises(Boom) as info:
        evaluate_prompt_candidates_sync(
            cands("a"), items("1"), run, const_scorer(), controller.signal
        )
    assert info.value is reason
    assert calls == []


# --------------------------------------------------------------------------- abort


def test_pre_aborted_signal_raises_before_any_call() -> None:
    calls, run, scorer = never_run()
    controller = AbortController()
    controller.abort()
    with pytest.raises(AbortError):
        evaluate(cands("a"), items("i"), run, scorer, controller.signal)
    assert calls == []


@pytest.mark.parametrize("concurrency", [1, 4])
def test_pre_aborted_with_custom_reason_raises_that_reason(concurrency: int) -> None:
    calls, run, scorer = never_run()
    controller = AbortController()
    reason = Boom("custom")
    controller.abort(reason)
    with pytest.raises(Boom) as info:
        evaluate(
            cands("a", "b"),
            items("i", "j"),
            run,
            scorer,
            controller.signal,
            max_concurrency=concurrency,
        )
    assert info.value is reason
    assert calls == []


def test_pre_aborted_with_non_exception_reason_raises_abort_error() -> None:
    calls, run, scorer = never_run()
    controller = AbortController()
    controller.abort("user pressed stop")
    with pytest.raises(AbortError):
        evaluate(cands("a"), items("i"), run, scorer, controller.signal)
    assert calls == []


class AbortAt:
    """run_candidate that aborts the controller when the k-th pair (0-based) runs."""

    def __init__(self, k: int, reason: Any = None, after_abort_await: bool = False):
        self.controller = AbortController()
        self.k = k
        self.reason = reason
        self.after_abort_await = after_abort_await
        self.runs: list[tuple[str, str, bool]] = []
        self.scored: list[tuple[str, str]] = []

    async def run(self, candidate: Any, item: Any, signal: AbortSignal) -> Any:
        self.runs.append((cid(candidate), iid(item), signal.aborted))
        index = len(self.runs) - 1
        await asyncio.sleep(0)
        if index == self.k:
            if self.reason is None:
                self.controller.abort()
            else:
                self.controller.abort(self.reason)
            if self.after_abort_await:
                await asyncio.sleep(0)
        await asyncio.sleep(0)
        return {"c": cid(candidate), "i": iid(item)}

    def scorer(self, target: dict[str, Any], signal: AbortSignal) -> dict[str, Any]:
        self.scored.append((target["output"]["c"], target["output"]["i"]))
        return {"score": 1, "passed": True}


def test_sequential_mid_run_abort_stops_after_pair_k() -> None:
    probe = AbortAt(4)
    with pytest.raises(AbortError):
        evaluate(
            cands("a", "b", "c"),
            items("1", "2", "3"),
            probe.run,
            probe.scorer,
            probe.controller.signal,
        )
    # Exactly pairs 0..4 started, in order, and the aborting pair was never scored.
    assert probe.runs == [
        ("a", "1", False),
        ("a", "2", False),
        ("a", "3", False),
        ("b", "1", False),
        ("b", "2", False),
    ]
    assert probe.scored == [("a", "1"), ("a", "2"), ("a", "3"), ("b", "1")]


@pytest.mark.parametrize("concurrency", [1, 4])
@pytest.mark.parametrize("k", [0, 3, 9])
def test_mid_run_abort_no_pair_starts_after_it(concurrency: int, k: int) -> None:
    reason = Boom(f"abort at {k}")
    probe = AbortAt(k, reason)
    with pytest.raises(Boom) as info:
        evaluate(
            cands("a", "b", "c", "d"),
            items("1", "2", "3", "4", "5"),
            probe.run,
            probe.scorer,
            probe.controller.signal,
            max_concurrency=concurrency,
        )
    assert info.value is reason
    # No call started once the signal was aborted.
    assert all(not aborted for _, _, aborted in probe.runs)
    # At most the pairs already in flight (k .. k + N - 1) were started.
    assert k + 1 <= len(probe.runs) <= k + concurrency
    aborting_pair = probe.runs[k][:2]
    assert aborting_pair not in probe.scored
    # Nothing was scored after the abort, and nothing runs later either.
    assert len(probe.scored) <= k


def test_abort_between_run_and_score_skips_the_scorer() -> None:
    controller = AbortController()
    scored: list[Any] = []

    async def run(candidate: Any, item: Any, signal: AbortSignal) -> Any:
        if iid(item) == "2":
            controller.abort()  # returns normally: the helper must check before scoring
        return iid(item)

    def scorer(target: dict[str, Any], signal: AbortSignal) -> dict[str, Any]:
        scored.append(target["output"])
        return {"score": 1, "passed": True}

    with pytest.raises(AbortError):
        evaluate(cands("a"), items("1", "2", "3"), run, scorer, controller.signal)
    assert scored == ["1"]


@pytest.mark.parametrize("concurrency", [1, 4])
def test_abort_without_reason_raises_abort_error(concurrency: int) -> None:
    probe = AbortAt(2, after_abort_await=True)
    with pytest.raises(AbortError):
        evaluate(
            cands("a", "b"),
            items("1", "2", "3", "4"),
            probe.run,
            probe.scorer,
            probe.controller.signal,
            max_concurrency=concurrency,
        )
    assert all(not aborted for _, _, aborted in probe.runs)
    assert len(probe.runs) <= 2 + concurrency


def test_abort_from_the_scorer_stops_the_run() -> None:
    controller = AbortController()
    runs: list[str] = []

    async def run(candidate: Any, item: Any, signal: AbortSignal) -> Any:
        runs.append(iid(item))
        return iid(item)

    def scorer(target: dict[str, Any], signal: AbortSignal) -> dict[str, Any]:
        if target["output"] == "2":
            controller.abort(Boom("from scorer"))
        return {"score": 1, "passed": True}

    with pytest.raises(Boom):
        evaluate(cands("a"), items("1", "2", "3", "4"), run, scorer, controller.signal)
    assert runs == ["1", "2"]


def test_run_candidate_raising_signal_reason_propagates() -> None:
    """The seed's callback style: signal.throw_if_aborted() inside run_candidate."""
    controller = AbortController()
    reason = Boom("stop")
    runs: list[str] = []

    async def run(candidate: Any, item: Any, signal: AbortSignal) -> Any:
        runs.append(iid(item))
        if iid(item) == "2":
            controller.abort(reason)
        signal.throw_if_aborted()
        return iid(item)

    with pytest.raises(Boom) as info:
        evaluate(cands("a"), items("1", "2", "3"), run, const_scorer(), controller.signal)
    assert info.value is reason
    assert runs == ["1", "2"]


@pytest.mark.parametrize("concurrency", [1, 4])
@pytest.mark.parametrize("reason", [None, Boom("external")])
def test_abort_from_another_task_while_a_pair_is_awaiting(concurrency: int, reason: Any) -> None:
    started: list[str] = []
    scored: list[Any] = []

    async def main() -> None:
        controller = AbortController()
        blocked = asyncio.Event()

        async def run(candidate: Any, item: Any, signal: AbortSignal) -> Any:
            started.append(iid(item))
            if iid(item) == "5":
                blocked.set()
                await asyncio.Event().wait()  # only an abort or a cancel ends this
            await asyncio.sleep(0)
            return iid(item)

        def scorer(target: dict[str, Any], signal: AbortSignal) -> dict[str, Any]:
            scored.append(target["output"])
            return {"score": 1, "passed": True}

        task = asyncio.ensure_future(
            evaluate_prompt_candidates(
                cands("a"),
                items(*(str(n) for n in range(30))),
                run,
                scorer,
                controller.signal,
                max_concurrency=concurrency,
            )
        )
        await blocked.wait()
        # Let the other workers settle on their next pairs (or block behind pair 5).
        for _ in range(3):
            await asyncio.sleep(0)
        count = len(started)
        controller.abort(reason)
        expected = Boom if reason is not None else AbortError
        with pytest.raises(expected) as info:
            await task
        if reason is not None:
            assert info.value is reason
        for _ in range(20):
            await asyncio.sleep(0)
        assert len(started) == count
        assert asyncio.all_tasks() == {asyncio.current_task()}

    asyncio.run(main())
    assert "5" not in scored
    if concurrency == 1:
        assert started == [str(n) for n in range(6)]
        assert scored == [str(n) for n in range(5)]
    else:
        assert len(started) < 30


# --------------------------------------------------------------------------- task cancellation


@pytest.mark.parametrize("concurrency", [1, 3])
def test_outer_task_cancellation(concurrency: int) -> None:
    started: list[str] = []
    finished: list[str] = []

    async def main() -> None:
        gate = asyncio.Event()
        third_started = asyncio.Event()

        async def run(candidate: Any, item: Any, signal: AbortSignal) -> Any:
            started.append(iid(item))
            if len(started) == 3:
                third_started.set()
            if concurrency > 1 or int(iid(item)) >= 2:
                await gate.wait()  # blocks until the test opens the gate
            finished.append(iid(item))
            return 1

        task = asyncio.ensure_future(
            evaluate_prompt_candidates(
                cands("a"),
                items(*(str(n) for n in range(20))),
                run,
                const_scorer(),
                AbortController().signal,
                max_concurrency=concurrency,
            )
        )
        await third_started.wait()
        count = len(started)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert task.cancelled()
        # Nothing new starts afterwards, even when the gate opens and the loop spins.
        gate.set()
        for _ in range(20):
            await asyncio.sleep(0)
        assert len(started) == count
        assert asyncio.all_tasks() == {asyncio.current_task()}

    asyncio.run(main())
    assert len(started) == 3
    assert finished == (["0", "1"] if concurrency == 1 else [])


def test_outer_task_cancellation_sequential_simple() -> None:
    runs: list[str] = []

    async def main() -> None:
        entered = asyncio.Event()

        async def run(candidate: Any, item: Any, signal: AbortSignal) -> Any:
            runs.append(iid(item))
            if iid(item) == "3":
                entered.set()
                await asyncio.Event().wait()
            return 1

        task = asyncio.ensure_future(
            evaluate_prompt_candidates(
                cands("a", "b"),
                items("1", "2", "3", "4"),
                run,
                const_scorer(),
                AbortController().signal,
            )
        )
        await entered.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        for _ in range(10):
            await asyncio.sleep(0)

    asyncio.run(main())
    assert runs == ["1", "2", "3"]


# --------------------------------------------------------------------------- errors from callbacks


@pytest.mark.parametrize("concurrency", [1, 4])
def test_run_candidate_error_propagates_and_stops_the_run(concurrency: int) -> None:
    runs: list[tuple[str, str]] = []
    after: list[int] = []
    error = Boom("model failed")

    async def run(candidate: Any, item: Any, signal: AbortSignal) -> Any:
        runs.append((cid(candidate), iid(item)))
        await asyncio.sleep(0)
        if (cid(candidate), iid(item)) == ("a", "5"):
            raise error
        await asyncio.sleep(0)
        return 1

    async def main() -> None:
        with pytest.raises(Boom) as info:
            await evaluate_prompt_candidates(
                cands("a", "b"),
                items(*(str(n) for n in range(100))),
                run,
                const_scorer(),
                AbortController().signal,
                max_concurrency=concurrency,
            )
        assert info.value is error
        after.append(len(runs))
        for _ in range(50):
            await asyncio.sleep(0)
        after.append(len(runs))
        assert asyncio.all_tasks() == {asyncio.current_task()}

    asyncio.run(main())
    # The run stopped: nothing started after the call returned, and far from all 200 pairs ran.
    assert after[0] == after[1]
    if concurrency == 1:
        assert runs == [("a", str(n)) for n in range(6)]
    else:
        assert 6 <= len(runs) <= 6 + 3 * concurrency


def test_scorer_error_propagates() -> None:
    def scorer(target: dict[str, Any], signal: AbortSignal) -> dict[str, Any]:
        raise Boom("scorer broke")

    with pytest.raises(Boom):
        evaluate(cands("a"), items("1"), echo_run, scorer, AbortController().signal)


# --------------------------------------------------------------------------- concurrency


def random_workload(seed: int, n_candidates: int = 6, n_items: int = 15):
    rng = random.Random(seed)
    candidate_ids = [f"c{k}" for k in range(n_candidates)]
    rng.shuffle(candidate_ids)
    item_ids = [f"item-{k}" for k in range(n_items)]
    latency = {(c, i): rng.uniform(0, 0.003) for c in candidate_ids for i in item_ids}
    score_latency = {(c, i): rng.choice([0, 0, 0.001]) for c in candidate_ids for i in item_ids}
    results = {
        (c, i): (rng.choice([0, 0.25, 0.5, 0.75, 1, rng.random()]), rng.random() < 0.5)
        for c in candidate_ids
        for i in item_ids
    }
    # Two candidates share a score table so a tie is broken by pass rate or id.
    results.update({(candidate_ids[1], i): results[candidate_ids[0], i] for i in item_ids})

    async def run(candidate: Any, item: Any, signal: AbortSignal) -> Any:
        await asyncio.sleep(latency[cid(candidate), iid(item)])
        return {"c": cid(candidate), "i": iid(item)}

    async def scorer(target: dict[str, Any], signal: AbortSignal) -> dict[str, Any]:
        key = (target["output"]["c"], target["output"]["i"])
        await asyncio.sleep(score_latency[key])
        value, passed = results[key]
        return {"score": value, "passed": passed, "evidence": {"key": list(key)}}

    return cands(*candidate_ids), items(*item_ids), run, scorer


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_concurrent_results_equal_sequential(seed: int) -> None:
    candidates, its, run, scorer = random_workload(seed)
    sequential = evaluate(candidates, its, run, scorer, AbortController().signal)
    assert len(sequential) == 6
    assert all(s.total == 15 for s in sequential)
    for n in (2, 7, 64):
        concurrent = evaluate(
            candidates, its, run, scorer, AbortController().signal, max_concurrency=n
        )
        assert concurrent == sequential
        assert [s.to_dict() for s in concurrent] == [s.to_dict() for s in sequential]


def test_concurrency_bound_is_respected_and_reached() -> None:
    state = {"run": 0, "pairs": 0, "max_run": 0, "max_pairs": 0}

    async def run(candidate: Any, item: Any, signal: AbortSignal) -> Any:
        state["run"] += 1
        state["pairs"] += 1
        state["max_run"] = max(state["max_run"], state["run"])
        state["max_pairs"] = max(state["max_pairs"], state["pairs"])
        for _ in range(3):
            await asyncio.sleep(0)
        state["run"] -= 1
        return 1

    async def scorer(target: dict[str, Any], signal: AbortSignal) -> dict[str, Any]:
        await asyncio.sleep(0)
        state["pairs"] -= 1
        return {"score": 1, "passed": True}

    for n in (1, 2, 5, 16):
        state.update(run=0, pairs=0, max_run=0, max_pairs=0)
        scores = evaluate(
            cands("a", "b", "c"),
            items(*(str(k) for k in range(20))),
            run,
            scorer,
            AbortController().signal,
            max_concurrency=n,
        )
        assert state["max_run"] == n
        assert state["max_pairs"] == n
        assert state["run"] == 0
        assert state["pairs"] == 0
        assert [s.total for s in scores] == [20, 20, 20]


def test_concurrency_larger_than_pair_count() -> None:
    in_flight = {"now": 0, "max": 0}

    async def run(candidate: Any, item: Any, signal: AbortSignal) -> Any:
        in_flight["now"] += 1
        in_flight["max"] = max(in_flight["max"], in_flight["now"])
        await asyncio.sleep(0)
        in_flight["now"] -= 1
        return 1

    scores = evaluate(
        cands("a", "b"),
        items("1", "2"),
        run,
        const_scorer(),
        AbortController().signal,
        max_concurrency=1000,
    )
    assert in_flight["max"] == 4
    assert [s.candidate for s in scores] == ["a", "b"]


def test_large_item_list_does_not_create_a_task_per_pair() -> None:
    n = 8
    n_items = 20_000
    observed = {"max_tasks": 0, "created": 0, "calls": 0}

    async def run(candidate: Any, item: Any, signal: AbortSignal) -> Any:
        observed["calls"] += 1
        if observed["calls"] % 250 == 0:
            observed["max_tasks"] = max(observed["max_tasks"], len(asyncio.all_tasks()))
        await asyncio.sleep(0)
        return 1

    def scorer(target: dict[str, Any], signal: AbortSignal) -> dict[str, Any]:
        return {"score": 1, "passed": True}

    async def main() -> list[CandidateSummary]:
        loop = asyncio.get_running_loop()

        def factory(loop: asyncio.AbstractEventLoop, coro: Any, **kwargs: Any) -> asyncio.Task[Any]:
            observed["created"] += 1
            return asyncio.Task(coro, loop=loop, **kwargs)

        loop.set_task_factory(factory)
        try:
            return await evaluate_prompt_candidates(
                cands("c"),
                [{"id": f"i{k}", "input": k} for k in range(n_items)],
                run,
                scorer,
                AbortController().signal,
                max_concurrency=n,
            )
        finally:
            loop.set_task_factory(None)

    scores = asyncio.run(main())
    assert observed["calls"] == n_items
    assert scores[0].total == n_items
    assert scores[0].mean_score == 1.0
    assert observed["max_tasks"] <= n + 3
    assert observed["max_tasks"] >= 2
    assert observed["created"] <= n + 3


# --------------------------------------------------------------------------- sync wrapper


def test_sync_wrapper_works() -> None:
    table = {("a", "1"): (1, True), ("b", "1"): (0, False)}
    scores = evaluate_prompt_candidates_sync(
        cands("b", "a"), items("1"), echo_run, table_scorer(table), AbortController().signal
    )
    assert [s.candidate for s in scores] == ["a", "b"]
    assert scores[0] == CandidateSummary(
        "a", 1, counts(1, 0), 1.0, 1.0, (scored("1", "a", 1.0, True, {"pair": ["a", "1"]}),)
    )
    assert scores[1] == CandidateSummary(
        "b", 1, counts(0, 1), 0.0, 0.0, (scored("1", "b", 0.0, False, {"pair": ["b", "1"]}),)
    )


def test_sync_wrapper_keeps_the_signature_of_the_async_function() -> None:
    assert inspect.signature(evaluate_prompt_candidates_sync) == inspect.signature(
        evaluate_prompt_candidates
    )
    assert evaluate_prompt_candidates_sync.__name__ == "evaluate_prompt_candidates_sync"
    assert evaluate_prompt_candidates_sync.__wrapped__ is evaluate_prompt_candidates
    assert not inspect.iscoroutinefunction(evaluate_prompt_candidates_sync)
    assert evaluate_prompt_candidates_sync.__doc__


def test_sync_wrapper_with_concurrency_and_keywords() -> None:
    candidates, its, run, scorer = random_workload(11, 3, 5)
    sequential = evaluate_prompt_candidates_sync(
        candidates=candidates,
        items=its,
        run_candidate=run,
        scorer=scorer,
        signal=AbortController().signal,
    )
    concurrent = evaluate_prompt_candidates_sync(
        candidates=candidates,
        items=its,
        run_candidate=run,
        scorer=scorer,
        signal=AbortController().signal,
        max_concurrency=4,
    )
    assert concurrent == sequential


def test_sync_wrapper_propagates_validation_errors() -> None:
    calls, run, scorer = never_run()
    with pytest.raises(ValidationError) as info:
        evaluate_prompt_candidates_sync([], items("i"), run, scorer, AbortController().signal)
    assert info.value.field == "candidates"
    assert calls == []


def test_sync_wrapper_inside_a_running_loop_raises_validation_error() -> None:
    calls, run, scorer = never_run()

    async def main() -> None:
        with pytest.raises(ValidationError) as info:
            evaluate_prompt_candidates_sync(
                cands("a"), items("i"), run, scorer, AbortController().signal
            )
        assert "event loop" in str(info.value)
        assert "await evaluate_prompt_candidates" in str(info.value)

    asyncio.run(main())
    assert calls == []


# --------------------------------------------------------------------------- privacy


SECRETS = {
    "prompt": "SECRET-PROMPT-91b2",
    "input": "SECRET-INPUT-c4d5",
    "expected": "SECRET-EXPECTED-e6f7",
    "context": "SECRET-CONTEXT-a8b9",
    "output": "SECRET-OUTPUT-0c1d",
    "metadata": "SECRET-META-2e3f",
}


@pytest.mark.parametrize("concurrency", [1, 2])
def test_nothing_is_logged_or_printed(
    concurrency: int, caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    caplog.set_level(logging.DEBUG)
    candidates = [
        {"id": "c1", "prompt": SECRETS["prompt"], "metadata": {"m": SECRETS["metadata"]}},
        PromptCandidate("c2", SECRETS["prompt"] + "-2"),
    ]
    its = [
        {
            "id": "i1",
            "input": {"q": SECRETS["input"]},
            "expected": SECRETS["expected"],
            "context": [SECRETS["context"]],
        },
        EvaluationItem("i2", SECRETS["input"], expected=SECRETS["expected"]),
    ]

    async def run(candidate: Any, item: Any, signal: AbortSignal) -> Any:
        return {"answer": SECRETS["output"]}

    def scorer(target: dict[str, Any], signal: AbortSignal) -> dict[str, Any]:
        return assay.evaluate_deterministic_scorer(
            {"type": "contains", "path": "/answer", "value": SECRETS["expected"]}, target
        )

    scores = evaluate(
        candidates, its, run, scorer, AbortController().signal, max_concurrency=concurrency
    )
    assert [s.pass_rate for s in scores] == [0.0, 0.0]

    # A failing run too: a malformed score and an abort.
    def bad_scorer(target: dict[str, Any], signal: AbortSignal) -> Any:
        return {"score": SECRETS["output"], "passed": True}

    with pytest.raises(ValidationError) as info:
        evaluate(
            candidates, its, run, bad_scorer, AbortController().signal, max_concurrency=concurrency
        )
    for secret in SECRETS.values():
        assert secret not in str(info.value)

    captured = capsys.readouterr()
    for secret in SECRETS.values():
        assert secret not in caplog.text
        assert secret not in captured.out
        assert secret not in captured.err
    for record in caplog.records:
        for secret in SECRETS.values():
            assert secret not in record.getMessage()
            assert secret not in repr(record.args)


def test_inputs_are_not_mutated() -> None:
    candidates = [{"id": "a", "prompt": "p", "metadata": {"k": [1]}}]
    its = [{"id": "i", "input": {"x": [1, 2]}, "expected": "e"}]
    snapshot = repr((candidates, its))
    evaluate(candidates, its, echo_run, const_scorer(), AbortController().signal, max_concurrency=2)
    assert repr((candidates, its)) == snapshot
