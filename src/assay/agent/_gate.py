"""The gate for agent runs: ``--write-baseline`` / ``--check`` with ``--telemetry``.

The same machinery as the goldens gate: each task's outcome is a random trial (an agent is not
deterministic), compared per task and paired across tasks (:mod:`assay.gate._regressions`); and the
composite score and each of its components may not fall below the baseline's by more than
``score_tolerance``. ``min_score`` and ``min_pass_rate`` fail the gate in any agent run.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Final

from assay.agent._scoring import AgentRun
from assay.asserts import CheckResult
from assay.config import Config
from assay.errors import BaselineError
from assay.gate import _baseline as baseline_mod
from assay.gate._regressions import Regression, Rules, Trials
from assay.gate._regressions import diff as regressions_diff
from assay.goldens import Golden
from assay.paths import shown_path
from assay.results import Result, summarize_by_candidate
from assay.validate import is_number

COMPOSITE_ID: Final = "(composite)"
_EPSILON: Final = 1e-9


@dataclass(slots=True)
class AgentVerdict:
    """What the gate made of an agent run (empty when no gate was asked for)."""

    mode: str = "report"
    baseline: Path | None = None
    regressions: list[Regression] | None = None
    notes: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        return 2 if self.failures else 0

    def apply(self, document: dict[str, Any]) -> dict[str, Any]:
        """The run's document with the verdict in it (the keys a gate document has)."""
        if self.mode == "report" and not self.failures:
            return document
        out = dict(document)
        summary = dict(out["summary"])
        summary["mode"] = self.mode
        summary["gate"] = "failed" if self.failures else "passed"
        if self.failures:
            summary["gate_failures"] = list(self.failures)
        if self.baseline is not None:
            summary["baseline"] = shown_path(self.baseline)
        if self.regressions is not None:
            out["regressions"] = [r.to_dict() for r in self.regressions]
            summary["baseline_notes"] = list(self.notes)
        out["summary"] = summary
        return out


def _trials(run: AgentRun) -> dict[tuple[str, str], Trials]:
    return {(r.candidate, r.id): Trials.of([r], random=True) for r in run.tasks}


def _composite_of(document: Mapping[str, Any], source: str) -> dict[str, float]:
    """The baseline's composite score and components, validated."""
    composite = document.get("composite")
    if not isinstance(composite, Mapping):
        raise BaselineError(
            "an agent baseline needs its composite (write it again with --write-baseline)",
            source=source,
            field="composite",
        )
    components = composite.get("components")
    values: dict[str, Any] = {"score": composite.get("score")}
    if isinstance(components, Mapping):
        values.update(components)
    out: dict[str, float] = {}
    for name, value in values.items():
        if not is_number(value):
            where = "composite.score" if name == "score" else f"composite.components.{name}"
            raise BaselineError("must be a finite number", source=source, field=where)
        out[str(name)] = float(value)
    return out


def _redacted(run: AgentRun) -> list[Result]:
    """The tasks as the run record holds them (each check by its op only): a regression's
    reason quotes no assert argument, and a merge of shards, which has only the records,
    gives the same reasons."""
    return [
        replace(r, checks=tuple(CheckResult(c.op, c.op, c.passed) for c in r.checks))
        for r in run.tasks
    ]


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
) -> AgentVerdict:
    """Write or check the agent baseline, and apply ``min_score`` / ``min_pass_rate``.

    Raises:
        BaselineError: a missing, unreadable or non-agent baseline.
    """
    path = baseline or config.baseline
    verdict = AgentVerdict(mode=mode)
    if mode == "write-baseline":
        summaries = summarize_by_candidate(run.tasks, sorted({r.candidate for r in run.tasks}))
        document = baseline_mod.build(
            run.tasks, tasks, summaries, trials=_trials(run), suite=suite, kind="agent"
        )
        document["composite"] = run.composite()
        baseline_mod.write(path, document, force=force)
        verdict.baseline = path
    elif mode == "check":
        document = baseline_mod.load(path)
        if document.get("kind", "gate") != "agent":
            raise BaselineError(
                "this baseline was written by a goldens gate run, not an agent run",
                source=str(path),
                field="kind",
            )
        before = _composite_of(document, str(path))
        tolerance = config.gate.score_tolerance
        diff = regressions_diff(
            document,
            _redacted(run),
            _trials(run),
            selected=tasks,
            whole_suite=document.get("suite") == suite,
            tiers=run.tiers,
            changed=baseline_mod.changed_goldens(document, tasks),
            rules=Rules(config.gate.alpha if alpha is None else alpha, tolerance),
        )
        after = {"score": run.score, **run.components.to_dict()}
        for name, old in before.items():
            new = after.get(name)
            if new is not None and new < old - tolerance - _EPSILON:
                label = "composite score" if name == "score" else name
                allowed = f" (tolerance {tolerance:g})" if tolerance else ""
                where = COMPOSITE_ID if name == "score" else f"(component {name})"
                why = f"{label} dropped {old:.3f} → {new:.3f}{allowed}"
                diff.regressions.append(Regression("agent", where, why))
        verdict.baseline = path
        verdict.regressions = diff.regressions
        verdict.notes = diff.notes
        if diff.regressions:
            verdict.failures.append(
                f"{len(diff.regressions)} regression(s) against {shown_path(path)}"
            )
    minimum = config.gate.min_score
    if minimum is not None and run.score < minimum:
        verdict.failures.append(f"composite score {run.score:.3f} is below min_score {minimum:g}")
    if config.min_pass_rate is not None:
        decided = [r for r in run.tasks if r.status != "error"]
        rate = sum(r.status == "pass" for r in decided) / len(decided) if decided else 0.0
        if rate < config.min_pass_rate:
            verdict.failures.append(
                f"pass rate {rate:.1%} is below min_pass_rate {config.min_pass_rate:.1%}"
            )
    return verdict
