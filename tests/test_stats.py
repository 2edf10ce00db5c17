"""assay.gate._stats: published values, brute-force cross-checks, properties, seeded calibration."""

from __future__ import annotations

import itertools
import math
import random
from fractions import Fraction

import pytest

from assay.gate import _stats as stats
from assay.gate._stats import (
    holm,
    mean_difference_ci,
    paired_drop_p,
    pass_drop_p,
    proportion_difference_ci,
    score_drop_p,
    wilson_interval,
)

ALPHA = 0.05


def _binomial_upper_tail(k: int, n: int) -> Fraction:
    """P(Binomial(n, 1/2) >= k), exactly: the one-sided sign test."""
    return Fraction(sum(math.comb(n, i) for i in range(k, n + 1)), 2**n)


# --- pass_drop_p: Fisher's exact test ---------------------------------------------------------


def test_fisher_lady_tasting_tea() -> None:
    # Fisher (1935), The Design of Experiments: the table [[3, 1], [1, 3]] has one-sided
    # p = 17/70 = 0.2429. Here: 3 of 4 before, 1 of 4 after.
    assert pass_drop_p(3, 4, 1, 4) == pytest.approx(17 / 70, abs=1e-15)
    assert round(pass_drop_p(3, 4, 1, 4), 4) == 0.2429
    # The other direction is no evidence of a drop: P(X <= 3) = 69/70.
    assert pass_drop_p(1, 4, 3, 4) == pytest.approx(69 / 70, abs=1e-15)


def test_fisher_hand_values() -> None:
    # 10/10 -> 5/10: only the observed table is as extreme, C(15,5) C(5,5) / C(20,10).
    assert pass_drop_p(10, 10, 5, 10) == pytest.approx(3003 / 184756, abs=1e-15)
    # No change at the top: 10/10 -> 10/10 is P(X <= 10) = 1.
    assert pass_drop_p(10, 10, 10, 10) == 1.0
    # 0/1 -> 0/1 and 1/1 -> 1/1: degenerate, no evidence.
    assert pass_drop_p(0, 1, 0, 1) == 1.0
    assert pass_drop_p(1, 1, 1, 1) == 1.0


def test_fisher_matches_scipy_on_a_grid_of_small_tables() -> None:
    from scipy.stats import fisher_exact

    for nb, na in itertools.product(range(1, 7), repeat=2):
        for pb, pa in itertools.product(range(nb + 1), range(na + 1)):
            # Rows: after, before; "less": the after-row's odds of passing are lower.
            expected = fisher_exact([[pa, na - pa], [pb, nb - pb]], alternative="less").pvalue
            assert pass_drop_p(pb, nb, pa, na) == pytest.approx(expected, rel=1e-12, abs=1e-15)


def test_fisher_large_counts_have_no_cancellation() -> None:
    from scipy.stats import fisher_exact

    expected = fisher_exact([[30, 70], [50, 50]], alternative="less").pvalue
    assert pass_drop_p(50, 100, 30, 100) == pytest.approx(expected, rel=1e-9)
    tiny = pass_drop_p(300, 300, 200, 300)
    assert 0.0 < tiny < 1e-30


def test_fisher_no_trials_is_no_evidence_and_bad_counts_are_refused() -> None:
    assert pass_drop_p(0, 0, 0, 10) == 1.0
    assert pass_drop_p(5, 5, 0, 0) == 1.0
    for bad in [(6, 5, 0, 5), (0, 5, -1, 5), (0, -1, 0, 5)]:
        with pytest.raises(ValueError):
            pass_drop_p(*bad)


# --- score_drop_p: two-sample permutation test ------------------------------------------------


def _brute_score_p(before: list[float], after: list[float]) -> float:
    pooled = before + after
    observed = math.fsum(after)
    splits = list(itertools.combinations(range(len(pooled)), len(after)))
    hits = sum(math.fsum(pooled[i] for i in s) <= observed + 1e-9 for s in splits)
    return hits / len(splits)


def test_score_hand_computed_exact_values() -> None:
    # Pooled [1.0, 0.9, 0.8], one score after: only the split that puts 0.8 after is as low.
    assert score_drop_p([1.0, 0.9], [0.8]) == pytest.approx(1 / 3)
    # Ties: pooled {0.8, 0.9 x 3}, 2 after: the 3 of 6 splits holding the 0.8 are as low.
    assert score_drop_p([0.9, 0.9], [0.8, 0.9]) == pytest.approx(1 / 2)
    # 0.8 + 0.9 and 0.7 + 1.0 are equal in decimal, not in binary: the split {0.8, 0.9} ties
    # the observed {0.7, 1.0} and must count. Sums 1.7, 1.5, 1.6, 1.8, 1.9, 1.7: 4 of 6.
    assert score_drop_p([0.8, 0.9], [0.7, 1.0]) == pytest.approx(4 / 6)
    # The most extreme of C(6, 3) = 20 splits.
    assert score_drop_p([1.0, 0.9, 0.9], [0.5, 0.4, 0.6]) == pytest.approx(1 / 20)


def test_score_exact_matches_brute_force_enumeration() -> None:
    rng = random.Random(7)
    for _ in range(40):
        before = [rng.choice([0.5, 0.7, 0.8, 0.9, 1.0]) for _ in range(rng.randint(1, 6))]
        after = [rng.choice([0.4, 0.6, 0.8, 0.9, 1.0, rng.random()]) for _ in range(4)]
        assert score_drop_p(before, after) == pytest.approx(_brute_score_p(before, after))


def test_score_edge_cases() -> None:
    assert score_drop_p([], [0.1, 0.2]) == 1.0
    assert score_drop_p([0.9], []) == 1.0
    assert score_drop_p([1.0, 1.0, 1.0], [1.0, 1.0]) == 1.0  # nothing varies
    with pytest.raises(ValueError):
        score_drop_p([0.5, math.nan], [0.5])


def test_score_monte_carlo_is_deterministic_and_close_to_exact(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rng = random.Random(3)
    before = [round(rng.uniform(0.5, 1.0), 1) for _ in range(9)]
    after = [round(rng.uniform(0.4, 0.95), 1) for _ in range(8)]
    exact = score_drop_p(before, after)
    monkeypatch.setattr(stats, "EXACT_SPLITS_MAX", 0)
    mc = score_drop_p(before, after)
    assert mc == score_drop_p(before, after)  # seeded: the same answer every time
    assert mc != score_drop_p(before, after, seed=1)
    assert abs(mc - exact) < 4 * math.sqrt(exact * (1 - exact) / stats.RESAMPLES) + 1e-4
    # The (b + 1) / (m + 1) correction: never 0, even when no resample is as extreme.
    assert score_drop_p([1.0] * 12, [0.0] * 12, resamples=100) == pytest.approx(1 / 101)


@pytest.mark.parametrize(("n_before", "n_after"), [(3, 4), (6, 6), (13, 12)])  # (13, 12): MC
def test_score_lowering_after_never_raises_p(n_before: int, n_after: int) -> None:
    rng = random.Random(n_before * 100 + n_after)
    for _ in range(5):
        before = [rng.choice([0.6, 0.7, 0.8, 0.9, 1.0]) for _ in range(n_before)]
        after = [rng.choice([0.6, 0.7, 0.8, 0.9, 1.0]) for _ in range(n_after)]
        previous = 1.0
        for shift in [0.0, 0.05, 0.1, 0.2, 0.4]:
            p = score_drop_p(before, [x - shift for x in after], resamples=2000)
            assert 0.0 < p <= 1.0
            assert p <= previous + 1e-12
            previous = p


# --- paired_drop_p: sign-flip permutation test ------------------------------------------------


def test_paired_is_the_sign_test_for_unit_differences() -> None:
    # 8 goldens worse, 2 better (of 10 discordant), plus ties that drop out: 56/1024.
    pairs = [(1.0, 0.0)] * 8 + [(0.0, 1.0)] * 2 + [(1.0, 1.0)] * 5 + [(0.0, 0.0)] * 3
    assert paired_drop_p(pairs) == 56 / 1024 == 0.0546875
    for n in range(1, 31):  # n > 24 still exact: the lattice path
        for k in range(n + 1):
            pairs = [(1.0, 0.0)] * k + [(0.0, 1.0)] * (n - k)
            exact = float(_binomial_upper_tail(k, n))
            assert paired_drop_p(pairs) == exact
            if n <= 16:  # the enumeration path agrees where it is cheap to run
                diffs = [1.0] * k + [-1.0] * (n - k)
                assert stats._sign_flip_enumerate(diffs) == pytest.approx(exact)


def test_paired_hand_value_and_edges() -> None:
    # d = 0.5, 0.25, -0.25; the 8 flips sum to 1, .5, .5, 0, 0, -.5, -.5, -1: 3 reach 0.5.
    assert paired_drop_p([(1.0, 0.5), (0.75, 0.5), (0.25, 0.5)]) == 3 / 8
    assert paired_drop_p([]) == 1.0
    assert paired_drop_p([(0.7, 0.7), (0.2, 0.2)]) == 1.0
    with pytest.raises(ValueError):
        paired_drop_p([(math.inf, 0.0)])


def _brute_sign_flip(diffs: list[float]) -> float:
    observed = math.fsum(diffs)
    flips = list(itertools.product((1, -1), repeat=len(diffs)))
    hits = sum(
        math.fsum(s * d for s, d in zip(f, diffs, strict=True)) >= observed - 1e-9 for f in flips
    )
    return hits / len(flips)


def test_paired_every_exact_path_matches_brute_force() -> None:
    rng = random.Random(11)
    for _ in range(30):
        n = rng.randint(1, 10)
        # Pass fractions with assorted trial counts (lattice) and raw float scores (enumeration).
        fractions = [
            (rng.randint(0, t) / t, rng.randint(0, t) / t) for t in rng.choices([3, 5, 10], k=n)
        ]
        floats = [(rng.random(), rng.random()) for _ in range(n)]
        for pairs in (fractions, floats):
            diffs = [b - a for b, a in pairs if abs(b - a) > 1e-9]
            if not diffs:
                continue
            brute = _brute_sign_flip(diffs)
            assert paired_drop_p(pairs) == pytest.approx(brute)
            assert stats._sign_flip_enumerate(diffs) == pytest.approx(brute)
        steps = stats._lattice_steps([b - a for b, a in fractions if b != a])
        assert steps is not None or all(b == a for b, a in fractions)


def test_lattice_detection() -> None:
    assert stats._lattice_steps([1 / 3, -0.5, 2 / 3 - 1 / 2]) == [2, -3, 1]  # L = 6
    assert stats._lattice_steps([0.9 - 0.8, 1.0 - 0.7]) == [1, 3]  # float noise is forgiven
    assert stats._lattice_steps([math.pi / 10]) is None


def test_paired_monte_carlo_is_deterministic_and_close_to_exact(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rng = random.Random(5)
    pairs = [(rng.random(), rng.random() - 0.1) for _ in range(16)]
    exact = paired_drop_p(pairs)
    monkeypatch.setattr(stats, "ENUMERATE_MAX", 0)
    mc = paired_drop_p(pairs)
    assert mc == paired_drop_p(pairs)
    assert abs(mc - exact) < 4 * math.sqrt(exact * (1 - exact) / stats.RESAMPLES) + 1e-4
    # 40 raw float differences: beyond enumeration and off the lattice, so Monte Carlo.
    many = [(rng.random(), rng.random()) for _ in range(40)]
    assert paired_drop_p(many) == paired_drop_p(many)
    assert paired_drop_p([(1.0, 0.0 + 1e-3 * i * math.pi) for i in range(40)]) == 1 / (
        stats.RESAMPLES + 1
    )


def test_paired_lowering_after_never_raises_p() -> None:
    rng = random.Random(2)
    base = [(rng.randint(0, 5) / 5, rng.randint(0, 5) / 5) for _ in range(30)]
    previous = 1.0
    for shift in [0.0, 0.1, 0.2, 0.4]:
        p = paired_drop_p([(b, a - shift) for b, a in base])
        assert 0.0 < p <= previous + 1e-12
        previous = p


# --- holm -------------------------------------------------------------------------------------


def test_holm_worked_examples() -> None:
    # Wikipedia, "Holm–Bonferroni method": p = 0.01, 0.03, 0.04, 0.005 at alpha = 0.05 rejects
    # H1 and H4. Adjusted: 4 x 0.005, 3 x 0.01, 2 x 0.03, then max(0.06, 1 x 0.04).
    adjusted = holm([0.01, 0.03, 0.04, 0.005])
    assert adjusted == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert [p <= ALPHA for p in adjusted] == [True, False, False, True]
    # R's p.adjust(c(.01, .04, .20, .03, .005, .07), "holm"), worked by hand.
    assert holm([0.01, 0.04, 0.20, 0.03, 0.005, 0.07]) == pytest.approx(
        [0.05, 0.12, 0.20, 0.12, 0.03, 0.14]
    )


def test_holm_properties() -> None:
    assert holm([]) == []
    assert holm([0.5, 0.6]) == [1.0, 1.0]  # capped
    assert holm([0.02]) == [0.02]  # one test: unchanged
    rng = random.Random(4)
    for _ in range(50):
        raw = [rng.random() ** 3 for _ in range(rng.randint(1, 12))]
        adj = holm(raw)
        for (r1, a1), (r2, a2) in itertools.combinations(zip(raw, adj, strict=True), 2):
            if r1 <= r2:
                assert a1 <= a2  # monotone in the raw p-value
        assert all(r <= a <= min(1.0, len(raw) * r) + 1e-15 for r, a in zip(raw, adj, strict=True))
    with pytest.raises(ValueError):
        holm([0.1, 1.5])


# --- intervals --------------------------------------------------------------------------------

# Newcombe (1998), Statistics in Medicine 17:873-890, Table II, method 10 (score, no continuity
# correction), 95%: (k1/n1 - k2/n2) -> (lower, upper) for p1 - p2. p1 is the after-run here.
NEWCOMBE_TABLE_II = [
    (56, 70, 48, 80, 0.0524, 0.3339),
    (9, 10, 3, 10, 0.1705, 0.8090),
    (6, 7, 2, 7, 0.0582, 0.8062),
    (5, 56, 0, 29, -0.0381, 0.1926),
    (0, 10, 0, 20, -0.1611, 0.2775),
    (0, 10, 0, 10, -0.2775, 0.2775),
    (10, 10, 0, 20, 0.6791, 1.0000),
    (10, 10, 0, 10, 0.6075, 1.0000),
]


@pytest.mark.parametrize(("k1", "n1", "k2", "n2", "lower", "upper"), NEWCOMBE_TABLE_II)
def test_newcombe_table_ii(k1: int, n1: int, k2: int, n2: int, lower: float, upper: float) -> None:
    got = proportion_difference_ci(k2, n2, k1, n1)
    assert got == pytest.approx((lower, upper), abs=5e-5)
    # Swapping the runs mirrors the interval.
    assert proportion_difference_ci(k1, n1, k2, n2) == pytest.approx((-upper, -lower), abs=5e-5)


def test_wilson_and_interval_edges() -> None:
    # Wilson (1927) at 0/10: (0, 0.2775), the bound Newcombe's rows (e) and (f) are built from.
    assert wilson_interval(0, 10) == pytest.approx((0.0, 0.2775), abs=5e-5)
    assert wilson_interval(0, 0) == (0.0, 1.0)
    assert proportion_difference_ci(0, 0, 3, 5) == (-1.0, 1.0)
    wide = proportion_difference_ci(48, 80, 56, 70, confidence=0.99)
    narrow = proportion_difference_ci(48, 80, 56, 70, confidence=0.95)
    assert wide[0] < narrow[0] < narrow[1] < wide[1]
    with pytest.raises(ValueError):
        proportion_difference_ci(1, 2, 1, 2, confidence=1.0)


def test_mean_difference_ci_is_welch() -> None:
    from scipy.stats import ttest_ind

    before, after = [0.8, 0.9, 0.7], [0.6, 0.7, 0.8, 0.5]
    expected = ttest_ind(after, before, equal_var=False).confidence_interval(0.95)
    assert mean_difference_ci(before, after) == pytest.approx((expected.low, expected.high))
    expected90 = ttest_ind(after, before, equal_var=False).confidence_interval(0.90)
    assert mean_difference_ci(before, after, 0.90) == pytest.approx(
        (expected90.low, expected90.high)
    )
    assert mean_difference_ci([0.9], [0.5, 0.6]) == (-math.inf, math.inf)
    assert mean_difference_ci([1.0, 1.0], [0.5, 0.5]) == (-0.5, -0.5)


# --- calibration (seeded simulations under H0) ------------------------------------------------


@pytest.mark.parametrize("p", [0.5, 0.9])
def test_per_golden_false_alarm_rate_is_at_most_alpha(p: float) -> None:
    rng = random.Random(20240 + int(p * 10))
    runs = 2000
    alarms = sum(
        pass_drop_p(
            sum(rng.random() < p for _ in range(10)),
            10,
            sum(rng.random() < p for _ in range(10)),
            10,
        )
        <= ALPHA
        for _ in range(runs)
    )
    assert alarms / runs <= ALPHA


def test_per_golden_test_detects_a_real_drop() -> None:
    # The calibration above would pass for a test that never fires: check that it has power.
    rng = random.Random(1)
    runs = 500
    hits = sum(
        pass_drop_p(
            sum(rng.random() < 0.9 for _ in range(10)),
            10,
            sum(rng.random() < 0.3 for _ in range(10)),
            10,
        )
        <= ALPHA
        for _ in range(runs)
    )
    assert hits / runs > 0.7


def test_sign_flip_size_is_at_most_alpha_for_50_goldens_one_trial_each() -> None:
    rng = random.Random(99)
    rates = [rng.random() for _ in range(50)]  # goldens differ; the runs do not
    runs = 2000
    alarms = 0
    for _ in range(runs):
        pairs = [(float(rng.random() < r), float(rng.random() < r)) for r in rates]
        alarms += paired_drop_p(pairs) <= ALPHA
    assert alarms / runs <= ALPHA
    # ... and it does fire when every golden gets worse by 0.3.
    worse = sum(
        paired_drop_p([(float(rng.random() < r), float(rng.random() < r - 0.3)) for r in rates])
        <= ALPHA
        for _ in range(200)
    )
    assert worse / 200 > 0.8


def test_bonferroni_looks_keep_the_overall_false_alarm_rate() -> None:
    # Up to 3 looks at one golden (5 + 5 trials, then 5 more a side while undecided), each at
    # alpha / 3: the chance that any look fires under H0 stays <= alpha. The gate's rule
    # (gate/_regressions: the level is alpha / looks; a golden is open while level < p < 0.5).
    rng = random.Random(3)
    level = ALPHA / 3
    runs = 2000
    alarms = 0
    for _ in range(runs):
        pb = pa = n = 0
        for _look in range(3):
            pb += sum(rng.random() < 0.7 for _ in range(5))
            pa += sum(rng.random() < 0.7 for _ in range(5))
            n += 5
            p = pass_drop_p(pb, n, pa, n)
            if p <= level:
                alarms += 1
                break
            if p >= 0.5:  # futile: more trials would not make it a regression
                break
    assert alarms / runs <= ALPHA


def test_exact_size_of_the_per_golden_test_is_at_most_alpha() -> None:
    # Not a simulation: weigh every 10-vs-10 outcome by its probability under H0. Fisher's size
    # at p = 0.5 is 0.0211.
    for p in [0.1, 0.3, 0.5, 0.7, 0.9]:
        binom = [math.comb(10, k) * p**k * (1 - p) ** (10 - k) for k in range(11)]
        size = math.fsum(
            binom[pb] * binom[pa]
            for pb, pa in itertools.product(range(11), repeat=2)
            if pass_drop_p(pb, 10, pa, 10) <= ALPHA
        )
        assert size <= ALPHA
        if p == 0.5:
            assert size == pytest.approx(0.0211, abs=1e-4)
