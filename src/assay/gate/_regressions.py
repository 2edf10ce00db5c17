"""Did the run get worse than its baseline? One verdict from two kinds of evidence.

* **Deterministic outcomes** (static outputs scored by asserts or lexical similarity, and any
  golden marked ``gate: strict``) keep the exact rule: pass → not pass, or a score more than
  ``score_tolerance`` below the baseline's, is a regression.
* **Random outcomes** (live model outputs, any judge, repeats) are compared with statistics:
  per golden a one-sided exact test that the pass probability (or the score) dropped, across the
  suite a paired sign-flip test over the goldens both runs scored, and Holm's correction over the
  goldens so that a suite of many goldens does not fail on chance. A regression is reported only
  when it is significant at ``alpha``; a drop that is not is a note.

Errors (failed calls, judge errors) are never regressions: they are undecided, and the gate
counts them (see :mod:`assay.gate._run`). Only the goldens a run selected are compared; a baseline
golden missing from the suite is a regression only when the run loaded the suite the baseline
was written from.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from assay.results import Result
from assay.validate import is_number
from assay.vocabulary import TIER3

_SCORE_EPSILON: Final = 1e-9
SUITE_ID: Final = "(suite)"
# An open comparison with a p-value at or above this shows no sign of a drop: no more repeats.
FUTILITY: Final = 0.5


@dataclass(frozen=True, slots=True)
class Trials:
    """What the repeats of one golden showed: the evidence a statistical comparison uses.

    Attributes:
        decided: repeats that passed or failed (errors and needs-judge are not trials).
        passes: repeats that passed.
        errors: repeats that ended in an error (a failed call, a judge error).
        scores: the score of every decided repeat that has one.
        random: whether the outcome is random (a live output, a judge, repeats).
    """

    decided: int = 0
    passes: int = 0
    errors: int = 0
    scores: tuple[float, ...] = ()
    random: bool = False

    @classmethod
    def of(cls, repeats: Sequence[Result], *, random: bool) -> Trials:
        decided = [r for r in repeats if r.status in ("pass", "fail", "no-output")]
        return cls(
            decided=len(decided),
            passes=sum(1 for r in decided if r.status == "pass"),
            errors=sum(1 for r in repeats if r.status == "error"),
            scores=tuple(float(r.score) for r in decided if r.score is not None),
            # A judge's verdict is random; a needs-judge result (no judge ran) is not.
            random=random
            or len(repeats) > 1
            or any(r.decided_by == TIER3 and r.passed is not None for r in repeats),
        )

    @classmethod
    def from_entry(cls, entry: Mapping[str, Any]) -> Trials:
        """The trials a baseline entry recorded (a deterministic entry: one trial, not random)."""
        if "trials" not in entry:
            status = entry.get("status")
            decided = 1 if status in ("pass", "fail", "no-output") else 0
            score = entry.get("score")
            return cls(
                decided=decided,
                passes=1 if decided and entry.get("passed") is True else 0,
                errors=1 if status == "error" else 0,
                scores=(float(score),) if decided and is_number(score) else (),
            )
        return cls(
            decided=int(entry["trials"]),
            passes=int(entry["passes"]),
            errors=int(entry.get("errors", 0)),
            scores=tuple(float(s) for s in entry.get("scores", ())),
            random=bool(entry.get("random", False)),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "trials": self.decided,
            "passes": self.passes,
            "errors": self.errors,
            "scores": [round(s, 6) for s in self.scores],
            "random": self.random,
        }

    @property
    def rate(self) -> float:
        return self.passes / self.decided if self.decided else 0.0

    @property
    def mean_score(self) -> float | None:
        return sum(self.scores) / len(self.scores) if self.scores else None


@dataclass(frozen=True, slots=True)
class Regression:
    """One regressed golden (or the suite, id ``(suite)``) and why, with the numbers."""

    candidate: str
    id: str
    why: str
    evidence: Mapping[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "candidate": self.candidate, "why": self.why}
        if self.evidence is not None:
            out["evidence"] = dict(self.evidence)
        return out


@dataclass(frozen=True, slots=True)
class Diff:
    regressions: list[Regression]
    notes: list[str]


@dataclass(frozen=True, slots=True)
class Rules:
    """How a diff decides (the ``[gate]`` settings it needs)."""

    alpha: float = 0.05
    score_tolerance: float = 0.0
    looks: int = 1


# The two internal records below are plain classes: a dataclass costs about 1 ms to create at
# import, and every gate run imports this module.
class _Test:
    """One golden's one-sided test that it got worse: of its mean score when decided by
    scores on both sides, else of its pass rate (``ci`` None when the samples are too few)."""

    __slots__ = (
        "adjusted",
        "after",
        "before",
        "by_score",
        "candidate",
        "ci",
        "effect",
        "id",
        "name",
        "p",
    )

    def __init__(
        self, candidate: str, golden_id: str, before: Trials, after: Trials, by_score: bool
    ) -> None:
        from assay.gate import _stats as stats

        self.candidate, self.id, self.before, self.after = candidate, golden_id, before, after
        self.by_score = by_score and bool(before.scores and after.scores)
        self.adjusted = 1.0
        if self.by_score:
            self.name = "exact permutation test on the mean score (one-sided)"
            self.p = stats.score_drop_p(before.scores, after.scores)
            self.effect = (after.mean_score or 0.0) - (before.mean_score or 0.0)
            low, high = stats.mean_difference_ci(before.scores, after.scores)
            self.ci = (low, high) if math.isfinite(low) and math.isfinite(high) else None
        else:
            self.name = "Fisher's exact test (one-sided)"
            counts = (before.passes, before.decided, after.passes, after.decided)
            self.p = stats.pass_drop_p(*counts)
            self.effect = after.rate - before.rate
            self.ci = stats.proportion_difference_ci(*counts)


def _score_decided(decided_by: Any) -> bool:
    return isinstance(decided_by, str) and decided_by.startswith(("tier2-", "tier3-"))


def _describe(test: _Test, alpha: float) -> str:
    if test.by_score:
        change = f"mean score {test.before.mean_score:.3f} → {test.after.mean_score:.3f}"
    else:
        change = (
            f"passes {test.before.passes}/{test.before.decided} → "
            f"{test.after.passes}/{test.after.decided}"
        )
    interval = "" if test.ci is None else f" (95% CI {test.ci[0]:+.2f} to {test.ci[1]:+.2f})"
    return (
        f"{change}: {test.name} p = {test.p:.3g}, Holm-adjusted {test.adjusted:.3g} < alpha "
        f"{alpha:.3g}; change {test.effect:+.2f}{interval}"
    )


def _exact_why(entry: Mapping[str, Any], result: Result, tolerance: float) -> list[str]:
    """Why a deterministic golden regressed (empty when it did not)."""
    why: list[str] = []
    if entry.get("passed") is True and result.status not in ("pass", "error"):
        why.append(_why_failed(result))
    old, new = entry.get("score"), result.score
    if (
        result.status != "error"
        and is_number(old)
        and new is not None
        and new < old - tolerance - _SCORE_EPSILON
    ):
        allowed = f" (tolerance {tolerance:g})" if tolerance else ""
        why.append(f"score dropped {old:.3f} → {new:.3f}{allowed}")
    return why


def _why_failed(result: Result) -> str:
    text = f"passed in the baseline, now {result.status}"
    failed = result.failed_checks()
    if failed:
        parts = [f"{c.text} ({c.reason})" if c.reason else c.text for c in failed[:3]]
        more = f" and {len(failed) - 3} more" if len(failed) > 3 else ""
        text += ": " + "; ".join(parts) + more
    return text


def _listed(label: str, keys: Sequence[str]) -> str:
    shown = ", ".join(keys[:5]) + (f" and {len(keys) - 5} more" if len(keys) > 5 else "")
    return f"{len(keys)} {label}: {shown}"


class _Walk:
    """What walking the baseline found: exact regressions, tests to correct, fixed goldens."""

    __slots__ = ("fixed", "outside", "regressions", "tests")

    def __init__(self) -> None:
        self.regressions: list[Regression] = []
        self.tests: list[_Test] = []
        self.fixed: list[str] = []
        self.outside = 0


@dataclass(frozen=True, slots=True)
class _Scope:
    """The baseline entries a run compares: of the goldens it ``selected`` (``whole``: from the
    suite the baseline was written from), of its ``tiers`` (None: all); ``strict``: the goldens
    that take the exact rule even when random."""

    selected: frozenset[str]
    whole: bool
    tiers: frozenset[str] | None
    strict: frozenset[str]


def _walk(
    document: Mapping[str, Any],
    results: Sequence[Result],
    trials: Mapping[tuple[str, str], Trials],
    scope: _Scope,
    rules: Rules,
) -> _Walk:
    """Every baseline entry in ``scope``: the exact rule's regressions, and the tests of the
    random ones (not yet corrected)."""
    wanted, chosen, exact_only = scope.tiers, scope.selected, scope.strict
    now = {(r.candidate, r.id): r for r in results}
    base: Mapping[str, Mapping[str, Any]] = document["goldens"]
    out = _Walk()
    for candidate in sorted(base):
        for golden_id in sorted(base[candidate]):
            entry = base[candidate][golden_id]
            if wanted is not None and entry.get("tier") not in wanted:
                continue
            result = now.get((candidate, golden_id))
            if result is None:
                if golden_id not in chosen and not scope.whole:
                    out.outside += 1  # outside this selection: not compared
                elif entry.get("passed") is True:
                    missing = (
                        "no output from this candidate"
                        if golden_id in chosen
                        else "missing from the suite"
                    )
                    out.regressions.append(
                        Regression(candidate, golden_id, f"passed in the baseline, now {missing}")
                    )
                continue
            if entry.get("passed") is False and result.status == "pass":
                out.fixed.append(f"{candidate}/{golden_id}")
            # Most entries of a big static suite are deterministic: decide that without
            # building their trials.
            after = trials.get((candidate, golden_id))
            if after is None and result.decided_by == TIER3 and result.passed is not None:
                after = Trials.of([result], random=True)
            random = entry.get("random") is True or (after is not None and after.random)
            if random and golden_id not in exact_only:
                before = Trials.from_entry(entry)
                after = after or Trials.of([result], random=False)
                by_score = _score_decided(result.decided_by) or _score_decided(
                    entry.get("decided_by")
                )
                if before.decided and after.decided:  # a side with no trials is no evidence
                    out.tests.append(_Test(candidate, golden_id, before, after, by_score))
                continue
            if result.status == "pass" and result.score == entry.get("score"):
                continue  # a pass with the baseline's score: nothing to say (most entries)
            why = _exact_why(entry, result, rules.score_tolerance)
            if why:
                out.regressions.append(Regression(candidate, golden_id, "; ".join(why)))
    return out


def diff(
    document: Mapping[str, Any],
    results: Sequence[Result],
    trials: Mapping[tuple[str, str], Trials],
    *,
    selected: Iterable[str],
    whole_suite: bool,
    tiers: Iterable[str] | None = None,
    strict: Iterable[str] = (),
    changed: Iterable[str] = (),
    rules: Rules = Rules(),
    first_look: Mapping[tuple[str, str], Trials] | None = None,
) -> Diff:
    """Compare a run with a baseline document.

    Args:
        document: the baseline (validated by :func:`assay.gate.load_baseline`).
        results: the run's results (one per candidate and selected golden).
        trials: the repeats behind each result, keyed by (candidate, golden id).
        selected: the ids of the goldens this run selected.
        whole_suite: the run loaded the suite the baseline was written from, so a baseline
            golden absent from it was removed (a regression when it passed).
        tiers: the tiers this run selected; baseline goldens of other tiers are not compared.
        strict: goldens marked ``gate: strict`` (the exact rule even when random).
        changed: "candidate/id" of goldens whose checks changed since the baseline (a note).
        rules: alpha, the score tolerance and the number of looks of adaptive repeats.
        first_look: with adaptive repeats, the trials of the first look: the suite test uses
            them, since which goldens got more trials depended on the data.
    """
    wanted = frozenset(tiers) if tiers else None
    scope = _Scope(frozenset(selected), whole_suite, wanted, frozenset(strict))
    walk = _walk(document, results, trials, scope, rules)
    base: Mapping[str, Mapping[str, Any]] = document["goldens"]
    notes: list[str] = []
    walk.regressions.extend(_significant(walk.tests, rules, notes, first_look or {}))
    new = sorted(f"{r.candidate}/{r.id}" for r in results if r.id not in base.get(r.candidate, {}))
    if walk.fixed:
        notes.append(_listed("golden(s) went from fail to pass", walk.fixed))
    changed_list = sorted(changed)
    if changed_list:
        notes.append(_listed("golden(s) changed their checks since the baseline", changed_list))
    if new:
        notes.append(_listed("golden(s) not in the baseline", new))
    if walk.outside:
        notes.append(f"{walk.outside} baseline golden(s) outside this selection were not compared")
    return Diff(walk.regressions, notes)


def undecided_pairs(
    document: Mapping[str, Any],
    results: Sequence[Result],
    trials: Mapping[tuple[str, str], Trials],
    *,
    selected: Iterable[str],
    strict: Iterable[str] = (),
    rules: Rules = Rules(),
) -> set[tuple[str, str]]:
    """The (candidate, golden) pairs whose comparison is still open at this look: not yet
    significant at the per-look level, but with a p-value below :data:`FUTILITY` (a golden
    that shows no sign of a drop is not worth more calls)."""
    from assay.gate import _stats as stats

    scope = _Scope(frozenset(selected), True, None, frozenset(strict))
    walk = _walk(document, results, trials, scope, rules)
    level = _golden_level(walk.tests, rules)
    adjusted = stats.holm([t.p for t in walk.tests])
    return {
        (t.candidate, t.id)
        for t, adj in zip(walk.tests, adjusted, strict=True)
        if adj > level and t.p < FUTILITY
    }


def _golden_level(tests: Sequence[_Test], rules: Rules) -> float:
    """The level of the per-golden family: alpha, halved when suite tests share it, divided
    among the looks of adaptive repeats (Bonferroni: any look may reject)."""
    candidates = {t.candidate for t in tests}
    has_suite = any(sum(1 for t in tests if t.candidate == c) >= 2 for c in candidates)
    return (rules.alpha / 2 if has_suite else rules.alpha) / rules.looks


def _significant(
    tests: list[_Test],
    rules: Rules,
    notes: list[str],
    first_look: Mapping[tuple[str, str], Trials],
) -> list[Regression]:
    """The tests that are significant after correction, as regressions; the rest as notes.

    The per-golden tests are one family (Holm's step-down, which holds the family-wise error
    rate at its level for any dependence between the tests); each candidate's paired suite test
    is another. With suite tests present, alpha is split evenly between the families
    (Bonferroni), so the whole gate's false-alarm rate stays at most ``alpha``. With adaptive
    repeats the per-golden level is divided among the looks, and the suite test reads only the
    first look (a fixed design).
    """
    if not tests:
        return []
    from assay.gate import _stats as stats

    by_candidate: dict[str, list[_Test]] = {}
    for test in tests:
        by_candidate.setdefault(test.candidate, []).append(test)
    alpha = rules.alpha
    suites = {c: ts for c, ts in by_candidate.items() if len(ts) >= 2}
    golden_alpha = _golden_level(tests, rules)
    suite_alpha = alpha / 2 / len(suites) if suites else 0.0
    out: list[Regression] = []
    quiet: list[_Test] = []
    for test, adjusted in zip(tests, stats.holm([t.p for t in tests]), strict=True):
        test.adjusted = adjusted
        if adjusted <= golden_alpha:
            why = _describe(test, golden_alpha)
            out.append(Regression(test.candidate, test.id, why, _evidence(test, golden_alpha)))
        elif test.effect < 0:
            quiet.append(test)
    for candidate, ts in sorted(suites.items()):
        pairs = [_pair(t, first_look.get((t.candidate, t.id), t.after)) for t in ts]
        p = stats.paired_drop_p(pairs)
        worse = sum(1 for b, a in pairs if a < b)
        better = sum(1 for b, a in pairs if a > b)
        mean_change = sum(a - b for b, a in pairs) / len(pairs)
        if p <= suite_alpha:
            why = (
                f"across {len(pairs)} goldens, {worse} did worse and {better} better (mean change "
                f"{mean_change:+.3f}): paired sign-flip permutation test (one-sided) p = {p:.3g} "
                f"< {suite_alpha:g} (alpha {alpha:g}, split between the suite and the goldens)"
            )
            evidence = {
                "test": "paired sign-flip permutation (one-sided)",
                "p": p,
                "level": suite_alpha,
                "goldens": len(pairs),
                "worse": worse,
                "better": better,
                "mean_change": mean_change,
            }
            out.append(Regression(candidate, SUITE_ID, why, evidence))
    if quiet:
        notes.append(_quiet_note(quiet, len(tests), golden_alpha))
    return out


def _quiet_note(quiet: Sequence[_Test], family: int, level: float) -> str:
    """The note on drops that are not significant. The corrected p is the one compared with
    ``level``: a raw p alone, below the level it missed, reads like a contradiction."""
    worst = min(quiet, key=lambda t: t.effect)
    p = f"p = {worst.p:.3g}"
    if family > 1:  # one test: Holm leaves p as it is
        p += f", Holm-adjusted {worst.adjusted:.3g} over {family} golden tests"
    return (
        f"{len(quiet)} golden(s) did worse without significance at alpha {level:g} "
        f"(largest: {worst.candidate}/{worst.id}, change {worst.effect:+.2f}, {p})"
    )


def _pair(test: _Test, after: Trials) -> tuple[float, float]:
    """One golden's (before, after) for the suite test: mean scores or pass rates."""
    if test.by_score and after.scores:
        return test.before.mean_score or 0.0, after.mean_score or 0.0
    return test.before.rate, after.rate


def _evidence(test: _Test, level: float) -> dict[str, Any]:
    return {
        "test": test.name,
        "p": test.p,
        "p_adjusted": test.adjusted,
        "level": level,
        "before": {"passes": test.before.passes, "trials": test.before.decided},
        "after": {"passes": test.after.passes, "trials": test.after.decided},
        "effect": test.effect,
        "ci95": None if test.ci is None else list(test.ci),
    }
