"""The gate's verdict from two kinds of evidence: the exact rule for deterministic outcomes,
one-sided exact tests (corrected for many goldens) for random ones; errors never regress; a
selection compares only what it selected."""

from __future__ import annotations

from fractions import Fraction
from math import comb
from typing import Any

import pytest

from assay.gate._regressions import SUITE_ID, Rules, Trials, diff
from assay.results import Result

JUDGE = "tier3-judge"
ASSERTS = "tier1-asserts"


def entry(
    passes: int,
    trials: int,
    *,
    scores: list[float] | None = None,
    random: bool = True,
    decided_by: str = ASSERTS,
) -> dict[str, Any]:
    status = "pass" if passes == trials else "fail"
    samples = scores if scores is not None else [1.0] * passes + [0.0] * (trials - passes)
    return {
        "tier": "standard",
        "status": status,
        "passed": status == "pass",
        "score": sum(samples) / len(samples) if samples else None,
        "decided_by": decided_by,
        "fingerprint": None,
        "trials": trials,
        "passes": passes,
        "errors": 0,
        "scores": samples,
        "random": random,
    }


def plain(status: str, score: float | None = None) -> dict[str, Any]:
    """A schema 1 style entry: one deterministic trial."""
    return {
        "tier": "standard",
        "status": status,
        "passed": {"pass": True, "fail": False}.get(status),
        "score": score if score is not None else (1.0 if status == "pass" else 0.0),
        "decided_by": ASSERTS,
        "fingerprint": None,
    }


def result(gid: str, status: str, score: float | None = None, decided_by: str = ASSERTS) -> Result:
    return Result(
        id=gid,
        tier="standard",
        candidate="c",
        status=status,  # type: ignore[arg-type]
        passed={"pass": True, "fail": False}.get(status),
        score=score if score is not None else (1.0 if status == "pass" else 0.0),
        decided_by=decided_by if status != "error" else None,
    )


def trials(passes: int, n: int, scores: list[float] | None = None) -> Trials:
    samples = scores if scores is not None else [1.0] * passes + [0.0] * (n - passes)
    return Trials(decided=n, passes=passes, scores=tuple(samples), random=True)


def run(
    base: dict[str, dict[str, Any]],
    now: dict[str, tuple[Result, Trials | None]],
    **kwargs: Any,
) -> Any:
    document = {"schema_version": 2, "goldens": {"c": base}}
    results = [r for r, _ in now.values()]
    evidence = {("c", gid): t for gid, (_, t) in now.items() if t is not None}
    kwargs.setdefault("selected", list(now))
    kwargs.setdefault("whole_suite", True)
    return diff(document, results, evidence, **kwargs)


def fisher_less(k0: int, n0: int, k1: int, n1: int) -> float:
    """P(X <= k1) for X hypergeometric: the one-sided Fisher p-value, by hand."""
    total, draws = k0 + k1, n1
    population = n0 + n1
    return float(
        sum(
            Fraction(comb(total, x) * comb(population - total, draws - x), comb(population, draws))
            for x in range(0, k1 + 1)
        )
    )


# --- deterministic outcomes: the exact rule -------------------------------------------------


def test_a_deterministic_pass_to_fail_is_a_regression_at_one_sample() -> None:
    out = run({"g": plain("pass")}, {"g": (result("g", "fail"), None)})
    assert [(r.id, r.why) for r in out.regressions] == [
        ("g", "passed in the baseline, now fail; score dropped 1.000 → 0.000")
    ]


def test_score_tolerance_allows_a_small_deterministic_drop() -> None:
    base = {"g": plain("pass", 0.9)}
    now = {"g": (result("g", "pass", 0.85), None)}
    assert [r.why for r in run(base, now).regressions] == ["score dropped 0.900 → 0.850"]
    assert run(base, now, rules=Rules(score_tolerance=0.05)).regressions == []
    assert len(run(base, now, rules=Rules(score_tolerance=0.04)).regressions) == 1


def test_an_error_is_never_a_regression() -> None:
    assert run({"g": plain("pass")}, {"g": (result("g", "error"), None)}).regressions == []
    random = {"g": (result("g", "error"), Trials(decided=0, errors=3, random=True))}
    assert run({"g": entry(3, 3)}, random).regressions == []


# --- random outcomes: statistics ------------------------------------------------------------


def test_a_real_pass_rate_drop_is_a_regression_with_the_exact_p_value() -> None:
    out = run({"g": entry(9, 10)}, {"g": (result("g", "fail"), trials(1, 10))})
    [reg] = out.regressions
    p = fisher_less(9, 10, 1, 10)
    assert reg.evidence is not None
    assert reg.evidence["p"] == pytest.approx(p, rel=1e-12)
    assert reg.evidence["p_adjusted"] == pytest.approx(p, rel=1e-12)  # one test: Holm is p
    assert reg.evidence["before"] == {"passes": 9, "trials": 10}
    assert reg.evidence["after"] == {"passes": 1, "trials": 10}
    assert reg.evidence["effect"] == pytest.approx(-0.8)
    low, high = reg.evidence["ci95"]
    assert low < -0.8 < high < 0
    assert reg.why.startswith("passes 9/10 → 1/10: Fisher's exact test (one-sided) p = ")


def test_noise_is_a_note_not_a_regression() -> None:
    # 9/10 then 8/10: the kind of difference two identical runs show.
    out = run({"g": entry(9, 10)}, {"g": (result("g", "fail"), trials(8, 10))})
    assert out.regressions == []
    assert any("did worse without significance" in n for n in out.notes)


def test_a_single_judge_score_that_falls_but_stays_above_threshold_is_a_note() -> None:
    base = {"g": entry(1, 1, scores=[0.90], decided_by=JUDGE)}
    now = {"g": (result("g", "pass", 0.85, JUDGE), trials(1, 1, [0.85]))}
    out = run(base, now)
    assert out.regressions == []
    assert any("did worse without significance" in n for n in out.notes)


def test_a_score_drop_over_repeats_is_tested_on_the_scores() -> None:
    base = {"g": entry(5, 5, scores=[0.9, 0.95, 0.9, 0.92, 0.94], decided_by=JUDGE)}
    after = [0.2, 0.3, 0.25, 0.1, 0.2]
    now = {"g": (result("g", "fail", 0.21, JUDGE), trials(0, 5, after))}
    [reg] = run(base, now).regressions
    assert reg.why.startswith("mean score 0.922 → 0.210: exact permutation test")
    # all 5 lower values in the "after" group: 1 split of C(10, 5) = 252 is as extreme
    assert reg.evidence is not None
    assert reg.evidence["p"] == pytest.approx(1 / 252)


def test_many_goldens_are_corrected_for_multiple_testing() -> None:
    # Each golden alone: 5/5 → 2/5 has p = 0.083 > 0.05; 10/10 → 6/10: p = 0.043 < 0.05. Among
    # 20 such goldens Holm's correction keeps a lone p = 0.043 from failing the gate.
    base = {f"g{i}": entry(10, 10) for i in range(20)}
    now = {f"g{i}": (result(f"g{i}", "pass"), trials(10, 10)) for i in range(20)}
    now["g0"] = (result("g0", "fail"), trials(6, 10))
    assert fisher_less(10, 10, 6, 10) < 0.05
    out = run(base, now)
    assert out.regressions == []
    # The note shows the p that missed alpha (the adjusted one), not only the raw p below it.
    raw = fisher_less(10, 10, 6, 10)
    [note] = [n for n in out.notes if "did worse without significance" in n]
    assert note.endswith(
        f"(largest: c/g0, change -0.40, p = {raw:.3g}, Holm-adjusted {20 * raw:.3g} over 20 "
        "golden tests)"
    )


def test_a_broad_drop_at_one_sample_each_fails_the_suite_test() -> None:
    # 50 goldens, one trial each: 30 went pass -> fail, none the other way. No single golden is
    # significant, the paired suite test is: p = 2**-30.
    base = {f"g{i}": entry(1, 1) for i in range(50)}
    now = {
        f"g{i}": (result(f"g{i}", "fail"), trials(0, 1))
        if i < 30
        else (result(f"g{i}", "pass"), trials(1, 1))
        for i in range(50)
    }
    out = run(base, now)
    assert [r.id for r in out.regressions] == [SUITE_ID]
    [suite] = out.regressions
    assert suite.evidence is not None
    assert suite.evidence["p"] == pytest.approx(2.0**-30)
    assert (suite.evidence["worse"], suite.evidence["better"]) == (30, 0)
    assert "paired sign-flip permutation test" in suite.why


def test_gate_strict_keeps_the_exact_rule_for_a_random_golden() -> None:
    base = {"g": entry(10, 10)}
    now = {"g": (result("g", "fail"), trials(9, 10))}
    assert run(base, now).regressions == []
    [reg] = run(base, now, strict=["g"]).regressions
    assert reg.why.startswith("passed in the baseline, now fail")


def test_a_schema_1_entry_is_one_deterministic_trial() -> None:
    # Compared with a live run it is one trial: 1/1 -> 0/1 is not significant.
    out = run({"g": plain("pass")}, {"g": (result("g", "fail"), trials(0, 1))})
    assert out.regressions == []
    assert Trials.from_entry(plain("pass")) == Trials(decided=1, passes=1, scores=(1.0,))


# --- what a selection compares --------------------------------------------------------------


def test_a_subset_compares_only_what_it_selected() -> None:
    base = {"a": plain("pass"), "b": plain("pass")}
    now = {"a": (result("a", "pass"), None)}
    out = run(base, now, whole_suite=False)
    assert out.regressions == []
    assert "1 baseline golden(s) outside this selection were not compared" in out.notes


def test_a_golden_removed_from_the_whole_suite_is_a_regression() -> None:
    base = {"a": plain("pass"), "b": plain("pass")}
    out = run(base, {"a": (result("a", "pass"), None)}, whole_suite=True)
    assert [(r.id, r.why) for r in out.regressions] == [
        ("b", "passed in the baseline, now missing from the suite")
    ]
