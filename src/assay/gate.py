"""The goldens gate as a library call: goldens + outputs → results → baseline write / check.

Commands parse flags and call :func:`run_gate`; renderers print the :class:`GateRun` it returns.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from . import baseline as baseline_mod
from .asserts import CheckContext
from .cascade import NO_OUTPUT, evaluate
from .config import Config
from .errors import ConfigError
from .goldens import Golden, Tier, iter_goldens, load_suite
from .outputs import load_outputs
from .results import CandidateSummary, Result, rank, summarize
from .similarity import get_backend

Mode = Literal["report", "write-baseline", "check"]


@dataclass(frozen=True, slots=True)
class GateOptions:
    """What the user asked for (flags already parsed)."""

    path: Path | None = None
    outputs: Path | None = None
    example: bool = False
    tiers: tuple[Tier, ...] = ()
    similarity: str | None = None
    baseline: Path | None = None
    mode: Mode = "report"
    force: bool = False
    no_cache: bool = False


@dataclass(slots=True)
class GateRun:
    """Everything a renderer needs to show a gate run."""

    results: list[Result]
    summaries: list[CandidateSummary]
    golden_count: int
    mode: Mode
    baseline_path: Path | None = None
    diff: baseline_mod.Diff | None = None
    gate_failures: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        return 2 if self.gate_failures else 0

    def to_dict(self) -> dict[str, Any]:
        ranked = [s.to_dict() for s in self.summaries]
        totals = _totals(self.summaries)
        out: dict[str, Any] = {
            "results": [r.to_dict() for r in self.results],
            "summary": {
                **totals,
                "goldens": self.golden_count,
                "candidates": ranked,
                "gate": "failed" if self.gate_failures else "passed",
            },
        }
        if self.gate_failures:
            out["summary"]["gate_failures"] = list(self.gate_failures)
        if self.notes:
            out["summary"]["notes"] = list(self.notes)
        if self.diff is not None:
            out["regressions"] = [r.to_dict() for r in self.diff.regressions]
            out["summary"]["baseline_notes"] = list(self.diff.notes)
        return out


def _totals(summaries: Iterable[CandidateSummary]) -> dict[str, Any]:
    counts: dict[str, int] = {}
    total = 0
    score_sum, score_n = 0.0, 0
    for s in summaries:
        total += s.total
        for k, v in s.counts.items():
            counts[k] = counts.get(k, 0) + v
        if s.mean_score is not None:
            decided = s.total - s.counts.get("needs-judge", 0)
            score_sum += s.mean_score * decided
            score_n += decided
    return {
        "total": total,
        "counts": counts,
        "pass_rate": counts.get("pass", 0) / total if total else 0.0,
        "mean_score": score_sum / score_n if score_n else None,
    }


def example_paths() -> tuple[Path, Path]:
    """The packaged example: (goldens folder, outputs file), inside the wheel."""
    example = resources.files("assay").joinpath("data", "example")
    return Path(str(example.joinpath("goldens"))), Path(str(example.joinpath("outputs.json")))


def _select(goldens: Iterable[Golden], tiers: tuple[Tier, ...]) -> Iterator[Golden]:
    if not tiers:
        return iter(goldens)
    wanted = set(tiers)
    return (g for g in goldens if g.tier in wanted)


def load_selected(options: GateOptions, config: Config) -> list[Golden]:
    """The goldens this run scores."""
    if options.example:
        return list(_select(iter_goldens(example_paths()[0]), options.tiers))
    cache = None if options.no_cache else config.root / ".assay" / "cache" / "frontmatter.json"
    if options.path is not None:
        return list(_select(iter_goldens(options.path, cache), options.tiers))
    return load_suite(config.goldens, options.tiers or None, cache)


def run_gate(options: GateOptions, config: Config) -> GateRun:
    """Score outputs against goldens; write or check the baseline as asked.

    Raises:
        AssayError: for any bad input (goldens, outputs, baseline, config).
    """
    goldens = load_selected(options, config)
    outputs_path = example_paths()[1] if options.example else options.outputs
    if outputs_path is None:
        raise ConfigError(
            "no candidate outputs: pass --outputs FILE (or --example)", field="--outputs"
        )
    by_id = {g.id: g for g in goldens}
    outputs = load_outputs(outputs_path, by_id)
    backend_name = options.similarity or config.similarity
    similarity = get_backend(backend_name)
    ctx = CheckContext(regex_timeout=config.regex_timeout_s)
    results: list[Result] = []
    summaries: list[CandidateSummary] = []
    notes: list[str] = []
    for candidate, produced in outputs.items():
        mine = [
            evaluate(
                g,
                produced.get(g.id, NO_OUTPUT),
                candidate,
                similarity=similarity,
                similarity_name=backend_name,
                ctx=ctx,
            )
            for g in goldens
        ]
        results.extend(mine)
        summaries.append(summarize(candidate, mine))
        stray = sorted(k for k in produced if k not in by_id)
        if stray:
            notes.append(
                f"candidate '{candidate}': {len(stray)} output(s) name no selected "
                f"golden (e.g. {', '.join(stray[:3])})"
            )
    run = GateRun(results, rank(summaries), len(goldens), options.mode, notes=notes)
    baseline_path = options.baseline or config.baseline
    if options.mode == "write-baseline":
        document = baseline_mod.build(results, by_id, run.summaries)
        baseline_mod.write(baseline_path, document, force=options.force)
        run.baseline_path = baseline_path
    elif options.mode == "check":
        document = baseline_mod.load(baseline_path)
        run.baseline_path = baseline_path
        run.diff = baseline_mod.diff(document, results, by_id, options.tiers or None)
        if run.diff.regressions:
            run.gate_failures.append(
                f"{len(run.diff.regressions)} regression(s) against {baseline_path}"
            )
    if config.min_pass_rate is not None:
        for s in run.summaries:
            if s.pass_rate < config.min_pass_rate:
                run.gate_failures.append(
                    f"candidate '{s.candidate}': pass rate {s.pass_rate:.1%} is below "
                    f"min_pass_rate {config.min_pass_rate:.1%}"
                )
    return run
