"""The verdict of a scored run: can the gate decide, the baseline written or compared with,
``min_pass_rate``. One verdict for every job: a goldens gate run, a merge of its shards, an
agent run (which adds its composite rule through :class:`ExtraRule`) and a merge of those.

The verdict reads the run's :class:`Evidence` and the run's :class:`GateStep` and returns a
frozen :class:`Verdict`; nothing here mutates a run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal, Protocol, TypeGuard

from assay.paths import shown_path

if TYPE_CHECKING:
    from assay.config import Config
    from assay.gate._regressions import Diff, Regression, Trials
    from assay.goldens import Golden
    from assay.results import CandidateSummary, Result

Mode = Literal["report", "write-baseline", "check"]
MODES: Final = ("report", "write-baseline", "check")


def is_mode(value: object) -> TypeGuard[Mode]:
    return value in MODES


# Where the undecided verdict starts quoting the first errors (the provider's or judge's own
# words): a run record keeps the verdict and leaves the quotes out.
QUOTED_ERRORS: Final = "; first: "


@dataclass(slots=True)
class ErrorTally:
    """The errors among a run's results, enough to say why the gate cannot decide.

    ``samples`` are (candidate, golden id, repeat, notes) of error results in run order; a run
    of many identical errors keeps three of each notes: no later one can change the message.
    """

    total: int = 0
    errors: int = 0
    pairs: int = 0
    samples: list[tuple[str, str, int, tuple[str, ...]]] = field(default_factory=list)

    @classmethod
    def of(cls, per_pair: Sequence[Sequence[Result]]) -> ErrorTally:
        tally = cls()
        seen: dict[tuple[str, ...], int] = {}
        for repeats in per_pair:
            tally.total += len(repeats)
            had_error = False
            for index, r in enumerate(repeats):
                if r.status != "error":
                    continue
                tally.errors += 1
                had_error = True
                if seen.get(r.notes, 0) < 3:
                    seen[r.notes] = seen.get(r.notes, 0) + 1
                    tally.samples.append((r.candidate, r.id, index, r.notes))
            tally.pairs += had_error
        return tally

    def reasons(self, max_error_rate: float) -> list[str]:
        """Why the gate cannot decide: more errors (failed calls, judge errors) than allowed.

        A failed call says nothing about the candidate's quality, so it is never a regression;
        but a run with too many of them has too little evidence to pass either.
        """
        if self.total == 0 or self.errors <= max_error_rate * self.total:
            return []
        first: list[str] = []
        for _, _, _, notes in self.samples:
            note = next((n for n in notes if n not in first), None)
            if note is not None and len(first) < 3:
                first.append(note)
        why = "; ".join(first) if first else "no message"
        return [
            f"the gate cannot decide: {self.errors} of {self.total} result(s) are errors "
            f"(max_error_rate {max_error_rate:g}), so {self.pairs} golden(s) were not "
            f"decided{QUOTED_ERRORS}{why}"
        ]


@dataclass(frozen=True, slots=True)
class Evidence:
    """What a scored run gives the verdict.

    Attributes:
        results: one result per (candidate, golden), repeats combined, in run order.
        summaries: per candidate, from ``results``.
        trials: the repeats behind each random result (the statistics compare these).
        tally: the errors among every repeat.
        looks: adaptive repeats' planned looks (1: none); ``first_look`` their first evidence.
    """

    results: Sequence[Result]
    summaries: Sequence[CandidateSummary]
    trials: Mapping[tuple[str, str], Trials]
    tally: ErrorTally
    looks: int = 1
    first_look: Mapping[tuple[str, str], Trials] | None = None


@dataclass(frozen=True, slots=True)
class GateStep:
    """What the baseline step needs to know of a run: the mode, the baseline, the suite.

    Attributes:
        baseline: the baseline file written or compared with.
        alpha: the significance level of random outcomes (flag or ``[gate]``).
        suite: what the run loaded (see :func:`assay.gate._run.suite_of`).
        sharded: the run is one shard, or a --filter selection: the goldens it lacks are not
            removed from the suite.
        goldens: the selected goldens, as id -> golden or id -> fingerprint (a merge).
        strict: ids of the goldens with ``gate: strict``.
        kind: which job writes the baseline (a check refuses a baseline of the other kind).
    """

    mode: Mode
    baseline: Path
    force: bool
    alpha: float
    tiers: tuple[str, ...]
    suite: str
    sharded: bool
    goldens: Mapping[str, Golden] | Mapping[str, str]
    strict: Sequence[str]
    kind: str = "gate"


class ExtraRule(Protocol):
    """A job's own rule on top of the gate's (the agent job's composite score)."""

    def extend(self, document: dict[str, Any]) -> None:
        """Add the rule's fields to a baseline document about to be written."""

    def regressions(self, document: Mapping[str, Any], source: str) -> list[Regression]:
        """The rule's regressions against a baseline document (read from ``source``)."""

    def failures(self, config: Config) -> list[str]:
        """The rule's failures in any mode (a minimum the run falls below)."""


@dataclass(frozen=True, slots=True)
class Verdict:
    """What the gate made of a run."""

    mode: Mode = "report"
    undecided: tuple[str, ...] = ()
    failures: tuple[str, ...] = ()
    diff: Diff | None = None
    baseline_path: Path | None = None
    baseline_document: Mapping[str, Any] | None = None
    notes: tuple[str, ...] = ()

    @property
    def exit_code(self) -> int:
        """1 when the gate could not decide (never 2 on broken calls), 2 on a failure."""
        if self.undecided:
            return 1
        return 2 if self.failures else 0

    @property
    def word(self) -> str:
        if self.undecided:
            return "undecided"
        return "failed" if self.failures else "passed"

    def apply(self, document: Mapping[str, Any]) -> dict[str, Any]:
        """A run's document with the verdict in it (its summary and its regressions)."""
        out = dict(document)
        summary = out["summary"] = dict(document["summary"])
        summary["mode"] = self.mode
        summary["gate"] = self.word
        if self.failures:
            summary["gate_failures"] = list(self.failures)
        if self.undecided:
            summary["undecided"] = list(self.undecided)
        if self.baseline_path is not None:
            summary["baseline"] = shown_path(self.baseline_path)
        if self.diff is not None:
            out["regressions"] = [r.to_dict() for r in self.diff.regressions]
            summary["baseline_notes"] = list(self.diff.notes)
        return out


def conclude(
    evidence: Evidence,
    step: GateStep,
    config: Config,
    document: Mapping[str, Any] | None,
    *,
    extra: ExtraRule | None = None,
) -> Verdict:
    """The verdict of a scored run. ``document`` is the baseline a check compares with (read
    before any model call, so that a missing one fails first).

    Too many errors leave the run undecided (exit 1) in every mode: a report whose results are
    all failed calls (a model server that is down) must not exit 0 as if it had said something.
    """
    undecided = evidence.tally.reasons(config.gate.max_error_rate)
    if step.mode == "write-baseline":
        verdict = _write_baseline(evidence, step, undecided, extra)
    elif step.mode == "check" and document is not None:
        verdict = _check_baseline(evidence, step, config, document, extra)
    else:
        verdict = Verdict(step.mode)
    failures = [*verdict.failures]
    if extra is not None:
        failures += extra.failures(config)
    if config.min_pass_rate is not None:
        failures += _below_min_pass_rate(evidence, config.min_pass_rate)
    return replace(verdict, undecided=tuple(undecided), failures=tuple(failures))


def _write_baseline(
    evidence: Evidence, step: GateStep, undecided: Sequence[str], extra: ExtraRule | None
) -> Verdict:
    from assay.gate import _baseline

    if undecided:  # a run that could not decide must not become the baseline
        shown = shown_path(step.baseline)
        return Verdict(step.mode, notes=(f"baseline not written to {shown}: {undecided[0]}",))
    document = _baseline.build(
        evidence.results,
        step.goldens,
        evidence.summaries,
        trials=evidence.trials,
        suite=step.suite,
        kind=step.kind,
    )
    if extra is not None:
        extra.extend(document)
    _baseline.write(step.baseline, document, force=step.force)
    return Verdict(step.mode, baseline_path=step.baseline)


def _check_baseline(
    evidence: Evidence,
    step: GateStep,
    config: Config,
    document: Mapping[str, Any],
    extra: ExtraRule | None,
) -> Verdict:
    from assay.gate import _baseline
    from assay.gate._regressions import Rules
    from assay.gate._regressions import diff as regressions_diff

    _baseline.check_kind(document, step.kind, str(step.baseline))
    # The goldens a shard lacks are in the other shards: not removed from the suite.
    whole = document.get("suite") == step.suite and not step.sharded
    diff = regressions_diff(
        document,
        evidence.results,
        evidence.trials,
        selected=step.goldens,
        whole_suite=whole,
        tiers=step.tiers or None,
        strict=step.strict,
        changed=_baseline.changed_goldens(document, step.goldens),
        rules=Rules(step.alpha, config.gate.score_tolerance, evidence.looks),
        first_look=evidence.first_look,
    )
    if extra is not None:
        diff.regressions.extend(extra.regressions(document, str(step.baseline)))
    failures: tuple[str, ...] = ()
    if diff.regressions:
        failures = (f"{len(diff.regressions)} regression(s) against {shown_path(step.baseline)}",)
    return Verdict(
        step.mode,
        failures=failures,
        diff=diff,
        baseline_path=step.baseline,
        baseline_document=document,
    )


def _below_min_pass_rate(evidence: Evidence, minimum: float) -> list[str]:
    """A candidate whose pass rate over its decided results is below ``minimum`` fails the
    gate; errors are left out of the rate (an outage is not a quality drop)."""
    decided: dict[str, list[bool]] = {}
    for r in evidence.results:
        if r.status != "error":
            decided.setdefault(r.candidate, []).append(r.status == "pass")
    out = []
    for s in evidence.summaries:
        if s.total == 0:  # an empty shard: nothing here to hold to it (the merge has them all)
            continue
        outcomes = decided.get(s.candidate, [])
        rate = sum(outcomes) / len(outcomes) if outcomes else 0.0
        if rate < minimum:
            out.append(
                f"candidate '{s.candidate}': pass rate {rate:.1%} is below "
                f"min_pass_rate {minimum:.1%}"
            )
    return out


def stray_notes(strays: Mapping[str, tuple[int, Sequence[str]]]) -> list[str]:
    """The note for each candidate whose outputs name goldens the run did not select:
    candidate -> (how many, the first three ids in sorted order)."""
    return [
        f"candidate '{candidate}': {count} output(s) name no selected "
        f"golden (e.g. {', '.join(examples)})"
        for candidate, (count, examples) in strays.items()
    ]
