"""The gate for agent runs: ``--write-baseline`` / ``--check`` with ``--telemetry``.

The same machinery as the goldens gate: each task's outcome is a random trial (an agent is not
deterministic), compared per task and paired across tasks (:mod:`assay.gate._regressions`); and the
composite score and each of its components may not fall below the baseline's by more than
``score_tolerance``. ``min_score`` and ``min_pass_rate`` fail the gate in any agent run.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Final

from assay.agent._scoring import AgentRun
from assay.asserts import CheckResult
from assay.config import Config
from assay.errors import BaselineError
from assay.gate import (
    ErrorTally,
    Evidence,
    GateStep,
    Regression,
    Trials,
    Verdict,
    conclude,
    is_mode,
    load_baseline,
)
from assay.goldens import Golden
from assay.results import Result, summarize_by_candidate
from assay.validate import At, Dict, Num

COMPOSITE_ID: Final = "(composite)"
_EPSILON: Final = 1e-9
_NUMBER: Final = Num(message="must be a finite number")
_COMPOSITE: Final = Dict(
    message="an agent baseline needs its composite (write it again with --write-baseline)"
)


def _composite_of(document: Mapping[str, Any], source: str) -> dict[str, float]:
    """The baseline's composite score and components, validated."""
    top = At(source, "", BaselineError)
    composite = _COMPOSITE.check(document.get("composite"), top, "composite")
    at = top.sub("composite")
    out = {"score": _NUMBER.check(composite.get("score"), at, "score")}
    components = composite.get("components")
    if isinstance(components, Mapping):
        inner = at.sub("components")
        out |= {str(name): _NUMBER.check(v, inner, str(name)) for name, v in components.items()}
    return out


def _redacted(run: AgentRun) -> list[Result]:
    """The tasks as the run record holds them (each check by its op only): a regression's
    reason quotes no assert argument, and a merge of shards, which has only the records,
    gives the same reasons."""
    return [
        replace(r, checks=tuple(CheckResult(c.op, c.op, c.passed) for c in r.checks))
        for r in run.tasks
    ]


@dataclass(frozen=True, slots=True)
class CompositeRule:
    """The agent job's rule on top of the gate's: the composite score and each component may
    not fall below the baseline's by more than ``score_tolerance``, nor the score below
    ``min_score``. The baseline keeps the composite it is compared with."""

    run: AgentRun
    tolerance: float

    def extend(self, document: dict[str, Any]) -> None:
        document["composite"] = self.run.composite()

    def regressions(self, document: Mapping[str, Any], source: str) -> list[Regression]:
        before = _composite_of(document, source)
        after = {"score": self.run.score, **self.run.components.to_dict()}
        out = []
        for name, old in before.items():
            new = after.get(name)
            if new is not None and new < old - self.tolerance - _EPSILON:
                label = "composite score" if name == "score" else name
                allowed = f" (tolerance {self.tolerance:g})" if self.tolerance else ""
                where = COMPOSITE_ID if name == "score" else f"(component {name})"
                out.append(
                    Regression("agent", where, f"{label} dropped {old:.3f} → {new:.3f}{allowed}")
                )
        return out

    def failures(self, config: Config) -> list[str]:
        minimum = config.gate.min_score
        if minimum is not None and self.run.score < minimum:
            return [f"composite score {self.run.score:.3f} is below min_score {minimum:g}"]
        return []


def agent_gate(
    run: AgentRun,
    tasks: Mapping[str, Golden] | Mapping[str, str],
    *,
    mode: str,
    baseline: Path | None,
    suite: str,
    force: bool,
    config: Config,
    alpha: float | None = None,
) -> Verdict:
    """The gate's verdict on an agent run (:func:`assay.gate.conclude`), with the composite
    rule: write or check the agent baseline, ``min_score`` and ``min_pass_rate``.

    Raises:
        BaselineError: a missing, unreadable or non-agent baseline.
    """
    if not is_mode(mode):
        raise ValueError(f"not a gate mode: {mode!r}")
    path = baseline or config.baseline
    document = load_baseline(path) if mode == "check" else None
    summaries = summarize_by_candidate(run.tasks, sorted({r.candidate for r in run.tasks}))
    trials = {(r.candidate, r.id): Trials.of([r], random=True) for r in run.tasks}
    tasks_as_trials = [[r] for r in run.tasks]
    evidence = Evidence(_redacted(run), summaries, trials, ErrorTally.of(tasks_as_trials))
    step = GateStep(
        mode=mode,
        baseline=path,
        force=force,
        alpha=config.gate.alpha if alpha is None else alpha,
        tiers=run.tiers,
        suite=suite,
        sharded=False,
        goldens=tasks,
        strict=(),
        kind="agent",
    )
    rule = CompositeRule(run, config.gate.score_tolerance)
    return conclude(evidence, step, config, document, extra=rule)
