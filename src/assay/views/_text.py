"""The human-readable text report."""

from __future__ import annotations

import re
from collections.abc import Iterable

from assay.gate import GateRun
from assay.goldens._consistency import SelfTestReport
from assay.results import CandidateSummary, Result

_LABEL = {
    "pass": "PASS",
    "fail": "FAIL",
    "needs-judge": "NEEDS-JUDGE",
    "no-output": "NO-OUTPUT",
    "error": "ERROR",
}


_CONTROL = re.compile(r"[\x00-\x1f\x7f]+")


def one_line(text: str) -> str:
    """Reasons and notes may quote multi-line text: keep each report row on one line."""
    return _CONTROL.sub(" ", text)


def _pct(value: float) -> str:
    return f"{value * 100:.1f}%"


def _score(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _row(r: Result, width: int) -> str:
    line = f"  {_LABEL[r.status]:<12} {r.id:<{width}}  {r.decided_by or '-'}"
    if r.repeats is not None:
        passed, k = r.repeats
        line += f"  [{passed}/{k} repeats{', FLAKY' if 0 < passed < k else ''}]"
    failed = r.failed_checks()
    if failed:
        line += "  " + one_line(
            "; ".join(f"{c.text}: {c.reason}" if c.reason else c.text for c in failed)
        )
    elif r.status != "pass" and r.notes:
        line += "  (" + one_line("; ".join(r.notes)) + ")"
    return line


def summary_line(s: CandidateSummary) -> str:
    c = s.counts
    return (
        f"{s.total} goldens: {c.get('pass', 0)} pass, {c.get('fail', 0)} fail, "
        f"{c.get('needs-judge', 0)} needs-judge, {c.get('no-output', 0)} no-output, "
        f"{c.get('error', 0)} error · pass rate {_pct(s.pass_rate)} · "
        f"mean score {_score(s.mean_score)}"
    )


def _matrix(run: GateRun, width: int) -> list[str]:
    names = [s.candidate for s in run.summaries]
    cells = {(r.candidate, r.id): r for r in run.results}
    col = max(12, *(len(n) for n in names))
    lines = [
        "matrix (goldens × candidates):",
        "  " + " " * width + "  " + "  ".join(f"{n:>{col}}" for n in names),
    ]
    ids: list[str] = []
    seen: set[str] = set()
    for r in run.results:
        if r.id not in seen:
            seen.add(r.id)
            ids.append(r.id)
    for golden_id in ids:
        row = []
        for n in names:
            found = cells.get((n, golden_id))
            if found is None:
                cell = "-"
            elif found.score is None:
                cell = _LABEL[found.status]
            else:
                cell = f"{_LABEL[found.status]} {_score(found.score)}"
            row.append(f"{cell:>{col}}")
        lines.append(f"  {golden_id:<{width}}  " + "  ".join(row))
    return lines


def _ranking(summaries: Iterable[CandidateSummary]) -> list[str]:
    lines = ["ranking (mean score desc, pass rate desc, candidate id asc):"]
    for i, s in enumerate(summaries, start=1):
        lines.append(
            f"  {i}. {s.candidate}: mean score {_score(s.mean_score)}, pass rate "
            f"{_pct(s.pass_rate)} ({s.total} goldens)"
        )
    return lines


def render_gate(run: GateRun) -> str:
    width = max((len(r.id) for r in run.results), default=10)
    width = min(max(width, 10), 60)
    lines: list[str] = []
    multi = len(run.summaries) > 1
    by_candidate: dict[str, list[Result]] = {}
    for r in run.results:
        by_candidate.setdefault(r.candidate, []).append(r)
    for s in run.summaries:
        lines.append(f"candidate {s.candidate}:" if multi else f"assay: {run.golden_count} goldens")
        lines.extend(_row(r, width) for r in by_candidate.get(s.candidate, []))
        lines.append(("  " if multi else "") + "summary: " + summary_line(s))
        lines.append("")
    if multi:
        lines.extend(_matrix(run, width))
        lines.append("")
        lines.extend(_ranking(run.summaries))
        lines.append("")
    if not run.summaries:
        lines.append("assay: no candidate outputs")
    for note in run.notes:
        lines.append(f"note: {note}")
    if run.stats:
        stats = run.stats
        lines.append(
            f"calls: {stats.get('calls', 0)} made, {stats.get('cache_hits', 0)} from the cache, "
            f"{stats.get('errors', 0)} failed; tokens {stats.get('input_tokens', 0)} in / "
            f"{stats.get('output_tokens', 0)} out; cost ${stats.get('cost_usd', 0.0):.4f}"
        )
    if run.mode == "write-baseline":
        lines.append(f"baseline written: {run.baseline_path}")
    if run.diff is not None:
        regs = run.diff.regressions
        lines.append(f"check against {run.baseline_path}: {len(regs)} regression(s)")
        for reg in regs:
            who = f"{reg.candidate}/{reg.id}" if multi else reg.id
            lines.append(f"  REGRESSED  {who}: {reg.why}")
        for note in run.diff.notes:
            lines.append(f"  note: {note}")
    for failure in run.gate_failures:
        lines.append(f"gate failed: {failure}")
    if run.mode == "check" or run.gate_failures:
        lines.append("gate: FAILED (exit 2)" if run.gate_failures else "gate: passed")
    return "\n".join(lines).rstrip() + "\n"


def render_self_test(report: SelfTestReport) -> str:
    lines = [f"self-test: {report.checked} golden(s) checked against their own expected"]
    for item in report.inconsistent:
        lines.append(f"  INCONSISTENT  {item.id} ({item.source})")
        for c in item.failed:
            lines.append(f"      {c.text}: {c.reason}")
    for golden_id in report.no_expected:
        lines.append(f"  skipped       {golden_id}: has asserts but no expected value")
    for golden_id in report.no_origin:
        lines.append(
            f"  warning       {golden_id}: no '## Origin' section (say where it came from)"
        )
    lines.append(
        "self-test: OK"
        if report.ok
        else f"self-test: {len(report.inconsistent)} inconsistent golden(s)"
    )
    return "\n".join(lines) + "\n"
