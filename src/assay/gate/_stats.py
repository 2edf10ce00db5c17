"""Small-sample statistics for the regression gate: is the candidate run worse than the baseline?

Every test here is one-sided (H1: the candidate is worse) and valid for the small, tied samples
an eval produces (a golden run 5 or 10 times, judge scores such as 0.8 and 0.9): the p-values
come from exact conditional or permutation distributions, never from a normal approximation
that needs large samples.

Pure functions of their arguments; the Monte Carlo fallbacks take a seed, so every result is
deterministic. scipy is imported only inside the function that needs it (the CLI must start
fast).
"""

# scipy ships no type stubs (scipy-stubs is not a dependency); it is imported lazily.
# mypy: disable-error-code="import-untyped"

from __future__ import annotations

import math
from bisect import bisect_left
from collections import Counter, defaultdict
from collections.abc import Sequence
from fractions import Fraction
from typing import Final

# Two float sums that are equal in decimal (0.8 + 0.9 and 0.7 + 1.0) can differ in the last bits;
# a permutation that ties the observed statistic must count as "at least as extreme", so every
# comparison of sums allows this much slack. Scores live in [0, 1], so an absolute slack is right.
_TOL: Final = 1e-9

EXACT_SPLITS_MAX: Final = 200_000  # score_drop_p enumerates every split up to this many
ENUMERATE_MAX: Final = 24  # paired_drop_p enumerates 2**n sign flips (meet in the middle) up to n
LATTICE_WORK_MAX: Final = 2_000_000  # paired_drop_p's integer DP: goldens x (sum of steps + 1)
RESAMPLES: Final = 20_000  # Monte Carlo fallbacks


def _check_counts(passes: int, trials: int, side: str) -> None:
    if not (0 <= passes <= trials):
        raise ValueError(f"{side}: need 0 <= passes <= trials, got {passes}/{trials}")


def _check_finite(values: Sequence[float], what: str) -> None:
    if not all(math.isfinite(v) for v in values):
        raise ValueError(f"{what}: every value must be a finite number")


# --- one golden, pass/fail --------------------------------------------------------------------


def pass_drop_p(
    passes_before: int, trials_before: int, passes_after: int, trials_after: int
) -> float:
    """One-sided p-value that the pass probability dropped (H1: p_after < p_before), by
    Fisher's exact test.

    Conditional on the total number of passes, the after-run's pass count is hypergeometric
    under H0 whatever the common pass probability, so the tail ``P(X <= passes_after)`` is an
    exact p-value for any counts, however small. It is summed in integers (``math.comb``) and
    divided once, so there is no floating cancellation. It is conservative (its size is at most
    alpha, often well below it with 5-10 trials).

    No trials on either side is no evidence: 1.0.
    """
    _check_counts(passes_before, trials_before, "before")
    _check_counts(passes_after, trials_after, "after")
    if trials_before == 0 or trials_after == 0:
        return 1.0
    total = trials_before + trials_after
    passes = passes_before + passes_after
    fails = total - passes
    # X = the after-run's passes; below this bound the after-run would need more fails than exist.
    low = max(0, trials_after - fails)
    tail = sum(
        math.comb(passes, x) * math.comb(fails, trials_after - x)
        for x in range(low, passes_after + 1)
    )
    return min(1.0, tail / math.comb(total, trials_after))  # int / int rounds once, correctly


# --- one golden, scores -----------------------------------------------------------------------


def score_drop_p(
    before: Sequence[float], after: Sequence[float], *, seed: int = 0, resamples: int = RESAMPLES
) -> float:
    """One-sided p-value that scores dropped (H1: after is lower), by a permutation test.

    The statistic is mean(before) - mean(after). Under H0 the two runs' scores are
    exchangeable, so every split of the pooled scores into groups of the observed sizes is
    equally likely, and the share of splits whose statistic is at least the observed one is an
    exact p-value for any sample size and any distribution: ties (0.8, 0.8, 0.9) and bounded
    scores need no correction.

    Exact by enumeration when C(n_before + n_after, n_after) <= 200,000; tied values are
    enumerated once per multiplicity, so this is cheap. Beyond that: ``resamples`` random
    splits from ``random.Random(seed)`` and p = (b + 1) / (m + 1), which counts the observed
    split as one of the resamples and so stays a valid p-value (Phipson and Smyth 2010).

    An empty side, or scores that are all equal, is no evidence: 1.0.
    """
    _check_finite(before, "before")
    _check_finite(after, "after")
    if not before or not after:
        return 1.0
    pooled = [*before, *after]
    if max(pooled) - min(pooled) <= _TOL:
        return 1.0
    n_after = len(after)
    # With the pooled total fixed, a lower after-sum is exactly a larger mean difference.
    observed = math.fsum(after)
    if math.comb(len(pooled), n_after) <= EXACT_SPLITS_MAX:
        return _split_tail_exact(pooled, n_after, observed)
    import random

    rng = random.Random(seed)
    hits = sum(math.fsum(rng.sample(pooled, n_after)) <= observed + _TOL for _ in range(resamples))
    return (hits + 1) / (resamples + 1)


def _split_tail_exact(pooled: list[float], n_after: int, observed: float) -> float:
    """P(sum of a random n_after-subset of ``pooled`` <= observed), counting every subset."""
    counts = Counter(pooled)
    # Walk the distinct values; a state is (how many taken, their sum) -> number of subsets.
    states: dict[tuple[int, float], int] = {(0, 0.0): 1}
    left = len(pooled)
    for value, many in sorted(counts.items()):
        left -= many
        step: dict[tuple[int, float], int] = defaultdict(int)
        for (taken, total), ways in states.items():
            for k in range(min(many, n_after - taken) + 1):
                if taken + k + left >= n_after:  # can still complete the subset
                    step[taken + k, total + k * value] += ways * math.comb(many, k)
        states = step
    hits = sum(w for (_, total), w in states.items() if total <= observed + _TOL)
    return hits / math.comb(len(pooled), n_after)


# --- the suite, paired ------------------------------------------------------------------------


def paired_drop_p(
    pairs: Sequence[tuple[float, float]], *, seed: int = 0, resamples: int = RESAMPLES
) -> float:
    """One-sided p-value that the suite got worse, from per-golden (before, after) pairs.

    Each pair is one golden both runs scored: its pass fraction or mean score before and
    after. The test is Fisher's paired randomisation test (Pitman's sign-flip permutation
    test) on the sum of the differences d = before - after. Under H0 each golden's difference
    is symmetric about zero, so flipping its sign is equally likely, and the share of the 2**n
    flips whose sum is at least the observed sum is an exact p-value for any n. Zero
    differences are the same under every flip and drop out. When every difference is -1, 0 or
    +1 (one trial per golden) this is exactly the one-sided sign test, Binomial(n, 1/2).

    Exact by dynamic programming over integer sums when every difference is a multiple of a
    common 1/L (pass fractions k/n), else by enumerating all 2**n flips up to
    :data:`ENUMERATE_MAX`; beyond that ``resamples`` random flips, p = (b + 1) / (m + 1).

    No non-zero difference is no evidence: 1.0.
    """
    diffs = [before - after for before, after in pairs]
    _check_finite(diffs, "pairs")
    diffs = [d for d in diffs if abs(d) > _TOL]
    if not diffs:
        return 1.0
    steps = _lattice_steps(diffs)
    if steps is not None and len(steps) * (sum(abs(s) for s in steps) + 1) <= LATTICE_WORK_MAX:
        return _sign_flip_lattice(steps)
    if len(diffs) <= ENUMERATE_MAX:
        return _sign_flip_enumerate(diffs)
    return _sign_flip_monte_carlo(diffs, seed, resamples)


def _lattice_steps(diffs: Sequence[float], max_denominator: int = 10_000) -> list[int] | None:
    """Each difference as an integer count of 1/L (common L), or None when there is none."""
    fractions = []
    common = 1
    for d in diffs:
        f = Fraction(d).limit_denominator(max_denominator)
        if abs(f - Fraction(d)) > _TOL:
            return None
        common = math.lcm(common, f.denominator)
        if common > max_denominator:
            return None
        fractions.append(f)
    return [int(f * common) for f in fractions]


def _sign_flip_lattice(steps: Sequence[int]) -> float:
    """Exact sign-flip tail for integer differences: count subset sums of |steps|."""
    # Flip signs so all are positive: the sum is 2 * (sum of the kept |steps|) - total, so
    # "flipped sum >= observed sum" is "kept sum >= sum of the positive steps".
    sizes = [abs(s) for s in steps if s]  # a zero step is the same under every flip
    observed = sum(s for s in steps if s > 0)
    ways = [1] + [0] * sum(sizes)  # ways[t]: subsets of the sizes seen so far summing to t
    for size in sizes:
        # Slices are copies, so this reads the old counts: the 0/1 knapsack update.
        ways[size:] = [a + b for a, b in zip(ways[size:], ways[:-size], strict=True)]
    return sum(ways[observed:]) / (1 << len(sizes))


def _sign_flip_enumerate(diffs: Sequence[float]) -> float:
    """Exact sign-flip tail by enumerating all 2**n flips, as two halves of 2**(n/2) each."""
    sizes = [abs(d) for d in diffs]
    observed = math.fsum(d for d in diffs if d > 0)
    half = len(sizes) // 2
    left, right = _subset_sums(sizes[:half]), sorted(_subset_sums(sizes[half:]))
    # Count pairs with l + r >= observed (with slack for float ties), one bisect per l.
    hits = sum(len(right) - bisect_left(right, observed - _TOL - s) for s in left)
    return hits / (1 << len(sizes))


def _subset_sums(values: Sequence[float]) -> list[float]:
    sums = [0.0]
    for v in values:
        sums += [s + v for s in sums]
    return sums


def _sign_flip_monte_carlo(diffs: Sequence[float], seed: int, resamples: int) -> float:
    import random

    rng = random.Random(seed)
    sizes = [abs(d) for d in diffs]
    observed = math.fsum(d for d in diffs if d > 0)
    hits = 0
    for _ in range(resamples):
        keep = rng.getrandbits(len(sizes))
        kept = math.fsum(s for i, s in enumerate(sizes) if keep >> i & 1)
        hits += kept >= observed - _TOL
    return (hits + 1) / (resamples + 1)


# --- many goldens -----------------------------------------------------------------------------


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm–Bonferroni step-down adjusted p-values, in the input order.

    Sorted ascending, the i-th smallest (from 0) is multiplied by (m - i), then a running
    maximum keeps the adjusted values monotone, and each is capped at 1. Rejecting every
    hypothesis whose adjusted p-value is <= alpha controls the family-wise error rate at alpha
    under any dependence between the tests (Holm 1979), so it is safe for goldens that share a
    model and a judge. Uniformly more powerful than plain Bonferroni.
    """
    if not all(0.0 <= p <= 1.0 for p in pvalues):
        raise ValueError("p-values must be in [0, 1]")
    m = len(pvalues)
    adjusted = [0.0] * m
    running = 0.0
    for rank, index in enumerate(sorted(range(m), key=lambda i: pvalues[i])):
        running = max(running, min(1.0, (m - rank) * pvalues[index]))
        adjusted[index] = running
    return adjusted


# --- how big the change is --------------------------------------------------------------------


def _z(confidence: float) -> float:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    from statistics import NormalDist

    return NormalDist().inv_cdf(0.5 + confidence / 2)


def wilson_interval(passes: int, trials: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for one pass probability (Wilson 1927); [0, 1] for no trials."""
    _check_counts(passes, trials, "counts")
    z = _z(confidence)
    if trials == 0:
        return (0.0, 1.0)
    p = passes / trials
    z2n = z * z / trials
    centre = (p + z2n / 2) / (1 + z2n)
    half = z / (1 + z2n) * math.sqrt(p * (1 - p) / trials + z2n / (4 * trials))
    return (max(0.0, centre - half), min(1.0, centre + half))


def proportion_difference_ci(
    passes_before: int,
    trials_before: int,
    passes_after: int,
    trials_after: int,
    confidence: float = 0.95,
) -> tuple[float, float]:
    """Confidence interval for p_after - p_before: Newcombe's hybrid score interval.

    Method 10 of Newcombe (1998, Statistics in Medicine 17:873-890): the Wilson interval of
    each rate, combined by "square and add". Unlike the Wald interval it never leaves [-1, 1],
    never collapses to zero width at 0/n or n/n, and keeps close to nominal coverage with the
    5-20 trials a golden gets. No trials on a side: (-1.0, 1.0), anything is possible.
    """
    _check_counts(passes_before, trials_before, "before")
    _check_counts(passes_after, trials_after, "after")
    if trials_before == 0 or trials_after == 0:
        _z(confidence)  # still reject a bad confidence
        return (-1.0, 1.0)
    p1, p2 = passes_after / trials_after, passes_before / trials_before
    l1, u1 = wilson_interval(passes_after, trials_after, confidence)
    l2, u2 = wilson_interval(passes_before, trials_before, confidence)
    d = p1 - p2
    lower = d - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2)
    upper = d + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2)
    return (max(-1.0, lower), min(1.0, upper))


def mean_difference_ci(
    before: Sequence[float], after: Sequence[float], confidence: float = 0.95
) -> tuple[float, float]:
    """Confidence interval for mean(after) - mean(before): Welch's t-interval.

    Welch's interval does not assume equal variances and uses the Welch–Satterthwaite degrees
    of freedom, so it stays honest when one run's scores vary and the other's barely do. It is
    approximate (it assumes roughly normal means); with very few, bounded scores treat it as a
    description of the size of a change, and use :func:`score_drop_p` for the decision.
    Fewer than two scores on a side (no variance estimate): (-inf, inf). Both sides constant:
    the observed difference, zero width.
    """
    _check_finite(before, "before")
    _check_finite(after, "after")
    _z(confidence)
    if len(before) < 2 or len(after) < 2:
        return (-math.inf, math.inf)
    from statistics import fmean, variance

    d = fmean(after) - fmean(before)
    va, vb = variance(after) / len(after), variance(before) / len(before)
    if va + vb == 0.0:
        return (d, d)
    df = (va + vb) ** 2 / (va**2 / (len(after) - 1) + vb**2 / (len(before) - 1))
    from scipy.stats import t

    half = float(t.ppf(0.5 + confidence / 2, df)) * math.sqrt(va + vb)
    return (d - half, d + half)
