"""The agent benchmark's composite score: every component and gate on hand-worked examples.

Every expected number below is worked out by hand in the comment above its assertion, from the
formulas of the agent-benchmark issue:

    TaskSuccess = passed / n
    CodeQuality = mean over judged tasks of Σ(4 scores clamped to [0, 5]) / 20   (0.0 when none)
    Efficiency  = 0 when p = 0, else
                  0.5·min(Bc / max(C/p, 0.01), 1) + 0.5·min(Bd / max(D/p, 0.1), 1)
    Reliability = max(0, 1 − 0.1·Σcrashes − 0.05·Σorphans)
                  × (0.5 if a selected task lacks telemetry)
    Safety      = 0 when any task has tests_failed > 0, else 1
    Score       = (0.5·TS + 0.3·CQ + 0.2·Eff) · Reliability · Safety
"""

from __future__ import annotations

from typing import Any

import pytest

from assay.agent import (
    AGENT,
    COST_BASELINE_USD,
    DURATION_BASELINE_S,
    AgentRun,
    Components,
    Telemetry,
    parse_record,
    score_tasks,
)
from assay.asserts import CheckResult
from assay.goldens import Golden, build_goldens
from assay.results import Result
from tests.cli.test_agent_benchmark import MEASURED_ZERO

# ------------------------------------------------------------------------------------ helpers


def golden(task_id: str, tier: str = "smoke", **fields: Any) -> Golden:
    return build_goldens(
        {"id": task_id, "tier": tier, **fields},
        source=f"goldens/{task_id}.md",
        default_id=None,
        folder_tier=None,
    )[0]


def record(task_id: str, **fields: Any) -> Telemetry:
    return parse_record({"task_id": task_id, **fields}, f"telemetry/{task_id}.json")


def telemetry(*records: Telemetry) -> dict[str, Telemetry]:
    return {r.task_id: r for r in records}


def result(run: AgentRun, task_id: str) -> Any:
    (found,) = [t for t in run.tasks if t.id == task_id]
    return found


def components(run: AgentRun) -> dict[str, float]:
    return run.components.to_dict()


# ---------------------------------------------------------------------- the worked example


def mixed_tasks() -> list[Golden]:
    return [
        golden("t1"),
        golden("t2"),
        golden("t3", tier="standard", completion_signals=["the thing works"]),
        golden("t4", tier="standard"),
    ]


def mixed_telemetry(**t4: Any) -> dict[str, Telemetry]:
    return telemetry(
        record(
            "t1",
            cost_usd=0.2,
            duration_s=60,
            judge={"correctness": 5, "style": 5, "test_coverage": 5, "safety": 5},
        ),
        record(
            "t2",
            cost_usd=0.4,
            duration_s=100,
            crashes=1,
            judge={"correctness": 4, "style": 3, "test_coverage": 5, "safety": 4},
        ),
        # Declares a completion signal; only 1 of the 2 checked passed: fails.
        record(
            "t3",
            cost_usd=1.8,
            duration_s=440,
            orphans=2,
            completion_signals_checked=2,
            completion_signals_passed=1,
        ),
        record("t4", **t4),
    )


def test_worked_example_every_component() -> None:
    run = score_tasks(mixed_tasks(), mixed_telemetry())
    assert [t.passed for t in run.tasks] == [True, True, False, True]
    # n = 4, p = 3 → TS = 3/4 = 0.75
    # CQ: t1 = 20/20 = 1.0, t2 = (4+3+5+4)/20 = 0.8; t3, t4 unjudged → mean = 0.9
    # C = 0.2+0.4+1.8+0 = 2.4, C/p = 0.8 → 0.5·min(0.5/0.8, 1) = 0.5·0.625 = 0.3125
    # D = 60+100+440+0 = 600, D/p = 200 → 0.5·min(120/200, 1) = 0.5·0.6 = 0.3 → Eff = 0.6125
    # Reliability = 1 − 0.1·1 − 0.05·2 = 0.8 (everyone has telemetry); Safety = 1
    # Score = (0.5·0.75 + 0.3·0.9 + 0.2·0.6125)·0.8·1 = (0.375 + 0.27 + 0.1225)·0.8 = 0.614
    assert components(run) == {
        "task_success": pytest.approx(0.75),
        "code_quality": pytest.approx(0.9),
        "efficiency": pytest.approx(0.6125),
        "reliability": pytest.approx(0.8),
        "safety": 1.0,
    }
    assert run.score == pytest.approx(0.614)
    assert run.composite()["score"] == pytest.approx(0.614)
    # smoke: t1, t2 both pass → 1.0; standard: t4 passes, t3 fails → 0.5; the rest: no tasks.
    assert run.per_tier == {
        "smoke": pytest.approx(1.0),
        "standard": pytest.approx(0.5),
        "stretch": None,
        "adversarial": None,
    }
    assert run.total_cost_usd == pytest.approx(2.4)


def test_summary_carries_the_composite() -> None:
    run = score_tasks(mixed_tasks(), mixed_telemetry())
    document = run.to_dict()
    assert document["schema_version"] == 2
    assert document["kind"] == "agent"
    summary = document["summary"]
    assert "tasks" not in summary and "passed" not in summary
    assert summary["total"] == 4
    assert summary["counts"] == {
        "pass": 3,
        "fail": 1,
        "needs-judge": 0,
        "no-output": 0,
        "error": 0,
    }
    assert summary["pass_rate"] == pytest.approx(0.75)
    # scores 1, 1, 0, 1 → mean 0.75
    assert summary["mean_score"] == pytest.approx(0.75)
    assert summary["candidates"] == [
        {
            "candidate": "agent",
            "total": 4,
            "counts": summary["counts"],
            "pass_rate": pytest.approx(0.75),
            "mean_score": pytest.approx(0.75),
        }
    ]
    assert summary["total_cost_usd"] == pytest.approx(2.4)
    assert summary["tiers"] == ["smoke", "standard", "stretch"]
    assert "safety_notes" not in summary
    assert [r["id"] for r in document["results"]] == ["t1", "t2", "t3", "t4"]
    composite = summary["composite"]
    assert set(composite) == {"score", "components", "per_tier"}
    assert set(composite["components"]) == {
        "task_success",
        "code_quality",
        "efficiency",
        "reliability",
        "safety",
    }
    assert composite["score"] == pytest.approx(0.614)
    assert composite["per_tier"]["stretch"] is None
    assert composite["per_tier"]["adversarial"] is None
    # Each failed task carries failure {category, details}; passing ones carry none.
    t3 = result(run, "t3").to_dict()
    assert t3["failure"]["category"] == "incomplete"
    assert isinstance(t3["failure"]["details"], str) and t3["failure"]["details"]
    assert "failure" not in result(run, "t1").to_dict()


def test_agent_results_are_the_one_result_shape() -> None:
    import assay.agent

    assert not hasattr(assay.agent, "TaskResult")
    run = score_tasks(
        [golden("t1", title="First"), *mixed_tasks()[1:]], mixed_telemetry(tests_failed=2)
    )
    assert all(isinstance(t, Result) for t in run.tasks)
    assert {t.candidate for t in run.tasks} == {AGENT} == {"agent"}
    t1, t3, t4 = result(run, "t1"), result(run, "t3"), result(run, "t4")
    assert (t1.status, t1.passed, t1.score, t1.decided_by) == ("pass", True, 1.0, "agent-telemetry")
    assert (t3.status, t3.passed, t3.score, t3.decided_by) == (
        "fail",
        False,
        0.0,
        "agent-telemetry",
    )
    # Every measured figure of the record (a field it lacks at its zero value), its judge.
    judged = {"correctness": 5, "style": 5, "test_coverage": 5, "safety": 5}
    t1_telemetry = {**MEASURED_ZERO, "cost_usd": 0.2, "duration_s": 60.0, "judge": judged}
    assert t1.telemetry == t1_telemetry
    assert t4.telemetry == {**MEASURED_ZERO, "tests_failed": 2}
    assert t1.title == "First" and t3.title is None
    assert t1.failure is None and t4.failure is not None
    assert t1.to_dict() == {
        "id": "t1",
        "tier": "smoke",
        "candidate": "agent",
        "status": "pass",
        "passed": True,
        "score": 1.0,
        "decided_by": "agent-telemetry",
        "checks": [],
        "title": "First",
        "telemetry": t1_telemetry,
    }


# --------------------------------------------------------------------------------- the gates


def test_safety_gate_one_test_regression_zeroes_the_score() -> None:
    run = score_tasks(mixed_tasks(), mixed_telemetry(tests_failed=1, tests_run=7))
    # t4 now fails (tests_failed = 1): p = 2, TS = 2/4 = 0.5
    # CQ unchanged = 0.9
    # C/p = 2.4/2 = 1.2 → 0.5·(0.5/1.2) = 0.208333…; D/p = 300 → 0.5·(120/300) = 0.2
    # Eff = 0.408333…; Reliability = 0.8; Safety = 0 → Score = 0
    assert components(run) == {
        "task_success": pytest.approx(0.5),
        "code_quality": pytest.approx(0.9),
        "efficiency": pytest.approx(0.5 * 0.5 / 1.2 + 0.2),
        "reliability": pytest.approx(0.8),
        "safety": 0.0,
    }
    assert run.score == 0.0
    assert result(run, "t4").failure[0] == "test_regression"


def test_safety_gate_ignores_tests_failed_zero() -> None:
    run = score_tasks([golden("a")], telemetry(record("a", tests_run=10, tests_passed=10)))
    assert run.components.safety == 1.0


def test_reliability_gate_ten_crashes_zeroes_the_score() -> None:
    tasks = [golden("a"), golden("b")]
    run = score_tasks(
        tasks,
        telemetry(
            record("a", cost_usd=0.1, duration_s=10, crashes=4),
            record("b", cost_usd=0.1, duration_s=10, crashes=6),
        ),
    )
    # Both pass: TS = 1; Eff = 0.5·1 + 0.5·1 = 1 (C/p = 0.1 ≤ 0.5, D/p = 10 ≤ 120)
    # Σcrashes = 10 → Reliability = max(0, 1 − 1.0) = 0 → Score = 0
    assert run.components.task_success == pytest.approx(1.0)
    assert run.components.efficiency == pytest.approx(1.0)
    assert run.components.reliability == pytest.approx(0.0)
    assert run.score == pytest.approx(0.0)


def test_reliability_never_goes_negative() -> None:
    # 1 − 0.1·12 − 0.05·30 = −1.7 → clamped to 0.0
    run = score_tasks([golden("a")], telemetry(record("a", crashes=12, orphans=30)))
    assert run.components.reliability == 0.0
    assert run.score == 0.0


def test_reliability_orphans_alone() -> None:
    # 20 orphans: 1 − 0.05·20 = 0.0; 6 orphans: 1 − 0.3 = 0.7
    run = score_tasks([golden("a")], telemetry(record("a", orphans=20)))
    assert run.components.reliability == pytest.approx(0.0)
    run = score_tasks([golden("a")], telemetry(record("a", orphans=6)))
    assert run.components.reliability == pytest.approx(0.7)


def test_missing_telemetry_halves_reliability_and_the_score() -> None:
    tasks = [golden("a"), golden("b", tier="standard")]
    run = score_tasks(tasks, telemetry(record("a", cost_usd=0.25, duration_s=60)))
    # n = 2, p = 1 (b has no telemetry) → TS = 0.5; CQ = 0 (no judge)
    # C/p = 0.25 → min(0.5/0.25, 1) = 1; D/p = 60 → min(2, 1) = 1 → Eff = 1
    # Reliability = 1 × 0.5 = 0.5; Safety = 1
    # Score = (0.25 + 0 + 0.2)·0.5 = 0.225
    assert components(run) == {
        "task_success": pytest.approx(0.5),
        "code_quality": 0.0,
        "efficiency": pytest.approx(1.0),
        "reliability": pytest.approx(0.5),
        "safety": 1.0,
    }
    assert run.score == pytest.approx(0.225)
    b = result(run, "b")
    assert b.passed is False
    assert (b.status, b.score, b.decided_by, b.telemetry) == ("no-output", 0.0, None, None)
    assert "telemetry" not in b.to_dict()
    assert b.failure[0] == "incomplete"
    assert run.per_tier["smoke"] == pytest.approx(1.0)
    assert run.per_tier["standard"] == pytest.approx(0.0)


def test_missing_telemetry_halving_multiplies_the_crash_penalty() -> None:
    tasks = [golden("a"), golden("b")]
    run = score_tasks(tasks, telemetry(record("a", crashes=2)))
    # (1 − 0.2) × 0.5 = 0.4
    assert run.components.reliability == pytest.approx(0.4)


def test_unselected_tasks_do_not_count() -> None:
    tasks = [golden("a"), golden("adv", tier="adversarial")]
    run = score_tasks(
        tasks,
        telemetry(
            record("a", cost_usd=0.5, duration_s=120),
            record("adv", crashes=10, tests_failed=3, cost_usd=9.0),
        ),
    )
    # Only "a" is selected (default tiers exclude adversarial): TS = 1, Eff = 0.5 + 0.5 = 1,
    # Reliability = 1, Safety = 1 → Score = 0.5 + 0.2 = 0.7
    assert [t.id for t in run.tasks] == ["a"]
    assert components(run) == {
        "task_success": 1.0,
        "code_quality": 0.0,
        "efficiency": pytest.approx(1.0),
        "reliability": 1.0,
        "safety": 1.0,
    }
    assert run.score == pytest.approx(0.7)
    assert run.total_cost_usd == pytest.approx(0.5)
    assert run.per_tier["adversarial"] is None


def test_missing_telemetry_of_an_unselected_task_does_not_halve() -> None:
    tasks = [golden("a"), golden("s", tier="stretch")]
    run = score_tasks(tasks, telemetry(record("a")), tiers=("smoke",))
    assert run.components.reliability == 1.0
    assert run.per_tier == {"smoke": 1.0, "standard": None, "stretch": None, "adversarial": None}


# ------------------------------------------------------------------------------- CodeQuality


def test_code_quality_clamps_each_judge_score() -> None:
    judge = {"correctness": 7, "style": -2, "test_coverage": 5, "safety": 2.5}
    run = score_tasks([golden("a")], telemetry(record("a", judge=judge)))
    # clamp: 7 → 5, −2 → 0, 5, 2.5 → (5 + 0 + 5 + 2.5)/20 = 0.625
    assert run.components.code_quality == pytest.approx(0.625)


def test_code_quality_clamps_all_high_to_one() -> None:
    judge = {"correctness": 100, "style": 6, "test_coverage": 5.5, "safety": 9}
    run = score_tasks([golden("a")], telemetry(record("a", judge=judge)))
    # every score clamps to 5 → 20/20 = 1.0 (never above 1)
    assert run.components.code_quality == pytest.approx(1.0)


def test_code_quality_is_the_mean_over_judged_tasks_only() -> None:
    tasks = [golden("a"), golden("b"), golden("c")]
    run = score_tasks(
        tasks,
        telemetry(
            record("a", judge={"correctness": 3, "style": 3, "test_coverage": 3, "safety": 3}),
            # A partial verdict: absent scores count as 0 → 4/20 = 0.2
            record("b", judge={"correctness": 4}),
            record("c"),
        ),
    )
    # a = 12/20 = 0.6, b = 0.2, c unjudged (not counted as 0) → (0.6 + 0.2)/2 = 0.4
    assert run.components.code_quality == pytest.approx(0.4)


def test_code_quality_is_zero_without_any_judge() -> None:
    run = score_tasks([golden("a")], telemetry(record("a")))
    assert run.components.code_quality == 0.0
    # TS = 1, Eff = 1 (zero cost and duration hit the floors) → Score = 0.5 + 0.2 = 0.7
    assert run.score == pytest.approx(0.7)


def test_code_quality_counts_failed_tasks_verdicts() -> None:
    tasks = [golden("a", asserts=["contains:ok"])]
    judge = {"correctness": 1, "style": 1, "test_coverage": 1, "safety": 1}
    run = score_tasks(tasks, telemetry(record("a", output="nope", judge=judge)))
    # The task fails its assert, but its verdict still counts: 4/20 = 0.2; TS = 0, Eff = 0
    # Score = 0.3·0.2 = 0.06
    assert run.tasks[0].passed is False
    assert run.components.code_quality == pytest.approx(0.2)
    assert run.components.efficiency == 0.0
    assert run.score == pytest.approx(0.06)


# -------------------------------------------------------------------------------- Efficiency


def test_efficiency_is_zero_when_nothing_passed() -> None:
    tasks = [golden("a", completion_signals=["done"])]
    run = score_tasks(tasks, telemetry(record("a", cost_usd=0.01, duration_s=1)))
    # declared signal never checked → fails; p = 0 → Eff = 0 (no division by zero)
    assert run.tasks[0].passed is False
    assert run.components.efficiency == 0.0
    assert run.components.task_success == 0.0
    assert run.score == 0.0


def test_efficiency_uses_cost_and_duration_of_failed_tasks_too() -> None:
    tasks = [golden("a"), golden("b", asserts=["contains:ok"])]
    run = score_tasks(
        tasks,
        telemetry(
            record("a", cost_usd=0.5, duration_s=120),
            record("b", output="nope", cost_usd=1.5, duration_s=360),
        ),
    )
    # p = 1; C = 2.0 → C/p = 2.0 → 0.5·(0.5/2) = 0.125; D = 480 → 0.5·(120/480) = 0.125
    assert run.components.efficiency == pytest.approx(0.25)


def test_efficiency_floors_below_one_cent_and_a_tenth_of_a_second() -> None:
    settings = {"cost_baseline_usd": 0.005, "duration_baseline_s": 0.05}
    run = score_tasks(
        [golden("a")],
        telemetry(record("a", cost_usd=0.001, duration_s=0.01)),
        settings=settings,
    )
    # C/p = 0.001 < 0.01 floor → 0.005/0.01 = 0.5 (without the floor: 5 → capped 1)
    # D/p = 0.01 < 0.1 floor → 0.05/0.1 = 0.5 (without the floor: 5 → capped 1)
    # Eff = 0.5·0.5 + 0.5·0.5 = 0.5
    assert run.components.efficiency == pytest.approx(0.5)


def test_efficiency_with_zero_cost_hits_the_floor_not_a_division_by_zero() -> None:
    run = score_tasks([golden("a")], telemetry(record("a", cost_usd=0, duration_s=0)))
    # 0.5/0.01 = 50 → 1; 120/0.1 = 1200 → 1 → Eff = 1
    assert run.components.efficiency == pytest.approx(1.0)


def test_default_baselines() -> None:
    assert COST_BASELINE_USD == 0.50
    assert DURATION_BASELINE_S == 120


def test_settings_override_the_baselines() -> None:
    tasks = [golden("a")]
    tel = telemetry(record("a", cost_usd=0.8, duration_s=200))
    default = score_tasks(tasks, tel)
    # defaults: 0.5·(0.5/0.8) + 0.5·(120/200) = 0.3125 + 0.3 = 0.6125
    assert default.components.efficiency == pytest.approx(0.6125)
    assert default.score == pytest.approx(0.5 + 0.2 * 0.6125)
    overridden = score_tasks(
        tasks, tel, settings={"cost_baseline_usd": 1.0, "duration_baseline_s": 60}
    )
    # overridden: 0.5·min(1.0/0.8, 1) + 0.5·(60/200) = 0.5 + 0.15 = 0.65
    assert overridden.components.efficiency == pytest.approx(0.65)
    assert overridden.score == pytest.approx(0.5 + 0.2 * 0.65)


def test_settings_override_one_baseline_keeps_the_other_default() -> None:
    tasks = [golden("a")]
    tel = telemetry(record("a", cost_usd=0.8, duration_s=200))
    run = score_tasks(tasks, tel, settings={"duration_baseline_s": 400})
    # cost keeps 0.50: 0.5·0.625 = 0.3125; duration 400/200 → capped 1 → 0.5 → 0.8125
    assert run.components.efficiency == pytest.approx(0.8125)


# ---------------------------------------------------------------------------- passed(task)


@pytest.mark.parametrize(
    ("fields", "tel", "passed"),
    [
        # no signals declared: none need be checked, but every check that ran must pass
        ({}, {}, True),
        ({}, {"completion_signals_checked": 3, "completion_signals_passed": 1}, False),
        # verify counts as a check: a verify-only task needs it checked and passed
        ({"verify": "pytest"}, {}, False),
        ({"verify": "pytest"}, {"completion_signals_checked": 1}, False),
        (
            {"verify": "pytest"},
            {"completion_signals_checked": 1, "completion_signals_passed": 1},
            True,
        ),
        # declared signals: at least one checked, all checked passed
        ({"completion_signals": ["x", "y"]}, {}, False),
        (
            {"completion_signals": ["x", "y"]},
            {"completion_signals_checked": 2, "completion_signals_passed": 2},
            True,
        ),
        (
            {"completion_signals": ["x", "y"]},
            {"completion_signals_checked": 2, "completion_signals_passed": 1},
            False,
        ),
        (
            {"completion_signals": ["x"]},
            {"completion_signals_checked": 1, "completion_signals_passed": 1},
            True,
        ),
        # tests_failed
        ({}, {"tests_failed": 1}, False),
        ({}, {"tests_run": 5, "tests_passed": 5, "tests_failed": 0}, True),
        # asserts on output
        ({"asserts": ["contains:ok"]}, {"output": "all ok"}, True),
        ({"asserts": ["contains:ok"]}, {"output": "nope"}, False),
        ({"asserts": ["contains:ok", "contains:done"]}, {"output": "ok"}, False),
        ({"asserts": ["contains:ok"]}, {}, False),
        # The limits decide pass or fail.
        ({"max_duration_s": 10}, {"duration_s": 11}, False),
        ({"max_duration_s": 10}, {"duration_s": 10}, True),
        ({"max_cost_usd": 0.1}, {"cost_usd": 0.2}, False),
        ({"owned_files": ["src/**"]}, {"files_modified": ["docs/x.md"]}, False),
        ({"owned_files": ["src/**"]}, {"files_modified": ["src/x.py"]}, True),
        # nothing else fails a task by itself (these only classify a failure)
        ({}, {"merge_conflicts": 2, "compile_error": True}, True),
        ({"expected_files_modified": ["src/a.py"]}, {"files_modified": []}, True),
    ],
)
def test_passed_is_exactly_the_documented_formula(
    fields: dict[str, Any], tel: dict[str, Any], passed: bool
) -> None:
    run = score_tasks([golden("a", **fields)], telemetry(record("a", **tel)))
    assert run.tasks[0].passed is passed
    assert (run.tasks[0].failure is None) is passed
    assert run.components.task_success == (1.0 if passed else 0.0)


def test_no_telemetry_never_passes() -> None:
    run = score_tasks([golden("a")], {})
    task = run.tasks[0]
    assert task.passed is False
    assert (task.status, task.score, task.decided_by, task.telemetry) == (
        "no-output",
        0.0,
        None,
        None,
    )
    assert task.candidate == "agent"
    assert task.failure is not None and task.failure[0] == "incomplete"
    assert task.notes == ("no telemetry for this task",)
    # TS = 0, Eff = 0, Reliability = 1 × 0.5 → Score = 0
    assert components(run) == {
        "task_success": 0.0,
        "code_quality": 0.0,
        "efficiency": 0.0,
        "reliability": pytest.approx(0.5),
        "safety": 1.0,
    }
    assert run.score == 0.0


def test_checks_recorded_by_op_not_argument() -> None:
    tasks = [golden("a", asserts=["contains:secret-answer", "icontains:OK"])]
    run = score_tasks(tasks, telemetry(record("a", output="ok")))
    task = run.tasks[0]
    # The in-memory result holds the real checks; the run record (the document) redacts them.
    assert [(c.text, c.op, c.passed) for c in task.checks] == [
        ("contains:secret-answer", "contains", False),
        ("icontains:OK", "icontains", True),
    ]
    assert all(isinstance(c, CheckResult) for c in task.checks)
    (data,) = run.to_dict()["results"]
    assert data["checks"] == [
        {"text": "contains", "op": "contains", "passed": False, "reason": None, "evidence": None},
        {"text": "icontains", "op": "icontains", "passed": True, "reason": None, "evidence": None},
    ]
    assert "secret-answer" not in repr(data)
    assert task.to_dict(redact=True) == data


# ----------------------------------------------------------------------------- Components


def test_components_score_formula() -> None:
    c = Components(task_success=0.6, code_quality=0.5, efficiency=0.25, reliability=0.9, safety=1.0)
    # (0.3 + 0.15 + 0.05)·0.9·1 = 0.45
    assert c.score == pytest.approx(0.45)
    assert Components(1.0, 1.0, 1.0, 1.0, 0.0).score == 0.0
    assert Components(1.0, 1.0, 1.0, 1.0, 1.0).score == pytest.approx(1.0)


def test_tier_selection_changes_the_denominator() -> None:
    tasks = [golden("a"), golden("b", tier="standard", asserts=["contains:ok"])]
    tel = telemetry(record("a"), record("b", output="nope"))
    both = score_tasks(tasks, tel)
    smoke = score_tasks(tasks, tel, tiers=("smoke",))
    assert both.components.task_success == pytest.approx(0.5)
    assert smoke.components.task_success == pytest.approx(1.0)
    assert smoke.tiers == ("smoke",)
    assert smoke.per_tier == {"smoke": 1.0, "standard": None, "stretch": None, "adversarial": None}
    assert both.per_tier == {"smoke": 1.0, "standard": 0.0, "stretch": None, "adversarial": None}


def test_adversarial_only_when_asked() -> None:
    tasks = [golden("a"), golden("adv", tier="adversarial")]
    tel = telemetry(record("a"), record("adv"))
    run = score_tasks(tasks, tel, tiers=("adversarial",))
    assert [t.id for t in run.tasks] == ["adv"]
    assert run.per_tier == {"smoke": None, "standard": None, "stretch": None, "adversarial": 1.0}


def test_a_task_that_could_not_be_run_is_out_of_the_composite() -> None:
    # Infrastructure failures are never regressions: an error lowers no component.
    tasks = [golden("a"), golden("b")]
    run = score_tasks(tasks, telemetry(record("a"), record("b", error="disk full")))
    assert [r.status for r in run.tasks] == ["pass", "error"]
    assert result(run, "b").score is None  # an error has no score (issue 27, item 16)
    assert run.components.task_success == 1.0
    assert run.components.reliability == 1.0 and run.components.safety == 1.0
    # The same outside record with tests_failed does not zero Safety either: it was not scored.
    run = score_tasks(tasks, telemetry(record("a"), record("b", error="x", tests_failed=2)))
    assert run.components.safety == 1.0
