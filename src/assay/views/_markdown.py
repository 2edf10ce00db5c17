"""A compact Markdown summary for a pull-request comment or a GitHub step summary.

Every value taken from goldens, outputs or reasons goes through :func:`cell`, so a ``|``, a
backtick, a newline or an HTML tag in the data can never break the table or inject markup. Long
lists are capped: a PR comment is limited to 65,536 characters, and a report the size of the whole
suite helps nobody there.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

from assay.gate import GateRun
from assay.results import Result

MAX_ROWS: Final = 50
_CELL_MAX: Final = 300
# Characters that change how an inline run of text renders in GitHub Markdown. Backslash-escaping
# any ASCII punctuation is valid CommonMark, and `\|` is how a GFM table cell holds a pipe.
_SPECIAL: Final = re.compile(r"([\\`*_\[\]<>|~&])")
# Control characters render as nothing useful, and a lone surrogate (from a file name that is
# not UTF-8) would make the report impossible to write as UTF-8.
_CONTROL: Final = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_SURROGATE: Final = re.compile("[\ud800-\udfff]")
_STATUSES: Final = ("pass", "fail", "needs-judge", "no-output", "error")
_FAILING: Final = ("fail", "error", "no-output")


def cell(value: object, limit: int = _CELL_MAX) -> str:
    """``value`` as the text of one table cell: escaped, one line, at most ``limit`` characters."""
    text = str(value).replace("\r\n", "\n").replace("\r", "\n").replace("\t", " ")
    text = _SURROGATE.sub("\ufffd", _CONTROL.sub("", text))
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    lines = [_SPECIAL.sub(r"\\\1", line) for line in text.split("\n")]
    return "<br>".join(lines).strip() or " "


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value * 100:.1f}%"


def _score(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines.extend("| " + " | ".join(row) + " |" for row in rows)
    return lines


def _more(total: int) -> list[str]:
    return ["", f"…and {total - MAX_ROWS} more."] if total > MAX_ROWS else []


def _verdict(run: GateRun) -> str:
    if run.gate_failures:
        return "❌ **assay gate: FAILED** (exit 2): " + cell("; ".join(run.gate_failures), 1000)
    if run.diff is not None:
        return f"✅ **assay gate: passed**: no regression against {cell(run.baseline_path)}"
    return "**assay**: report only (no gate: run with `--check` to compare with the baseline)"


def _why(result: Result) -> str:
    failed = result.failed_checks()
    if failed:
        return "; ".join(f"{c.text}: {c.reason}" if c.reason else c.text for c in failed)
    return "; ".join(result.notes) or result.status


def _regressions(run: GateRun) -> list[str]:
    if run.diff is None or not run.diff.regressions:
        return []
    regs = run.diff.regressions
    rows = [(cell(r.id), cell(r.candidate), cell(r.why)) for r in regs[:MAX_ROWS]]
    return [
        f"### Regressions ({len(regs)})",
        "",
        *_table(("golden", "candidate", "why"), rows),
        *_more(len(regs)),
        "",
    ]


def _candidates(run: GateRun) -> list[str]:
    rows = []
    for i, s in enumerate(run.summaries, start=1):
        c = s.counts
        rows.append(
            (
                str(i),
                cell(s.candidate),
                _pct(s.pass_rate),
                _score(s.mean_score),
                *(str(c.get(k, 0)) for k in ("pass", "fail", "needs-judge", "no-output")),
            )
        )
    header = ("rank", "candidate", "pass rate", "mean score", "pass", "fail", "needs-judge")
    return ["### Candidates", "", *_table((*header, "no-output"), rows), ""]


def _failing(run: GateRun) -> list[str]:
    order = {s.candidate: i for i, s in enumerate(run.summaries)}
    failing = sorted(
        (r for r in run.results if r.status in _FAILING), key=lambda r: order.get(r.candidate, 0)
    )
    if not failing:
        return []
    rows = [
        (cell(r.id), cell(r.candidate), cell(r.tier), r.status, cell(_why(r)))
        for r in failing[:MAX_ROWS]
    ]
    return [
        f"### Failing goldens ({len(failing)})",
        "",
        *_table(("golden", "candidate", "tier", "status", "why"), rows),
        *_more(len(failing)),
        "",
    ]


def _totals(run: GateRun) -> list[str]:
    summary = run.to_dict()["summary"]
    counts = summary["counts"]
    parts = ", ".join(f"{counts.get(k, 0)} {k}" for k in _STATUSES)
    lines = [
        f"**Totals**: {summary['total']} result(s) over {run.golden_count} golden(s) and "
        f"{len(run.summaries)} candidate(s): {parts} · pass rate {_pct(summary['pass_rate'])} · "
        f"mean score {_score(summary['mean_score'])}"
    ]
    notes = [*run.notes, *(run.diff.notes if run.diff is not None else [])]
    if notes:
        lines.append("")
        lines.extend(f"- note: {cell(n, 1000)}" for n in notes)
    return lines


def render_markdown(run: GateRun) -> str:
    """The gate run as GitHub-flavoured Markdown.

    Args:
        run: the scored gate run.

    Returns:
        Verdict line, regressions (under ``--check``), candidates table, failing goldens
        (at most 50 rows), totals.
    """
    lines = [_verdict(run), ""]
    lines += _regressions(run)
    if run.summaries:
        lines += _candidates(run)
    else:
        lines += ["No candidate outputs.", ""]
    lines += _failing(run)
    lines += _totals(run)
    return "\n".join(lines).rstrip() + "\n"


def render_agent_markdown(document: Mapping[str, Any]) -> str:
    """A saved agent run as GitHub-flavoured Markdown.

    Args:
        document: the agent run document (``summary.composite`` and ``results``).

    Returns:
        Score line, components table, per-tier pass rates, failures table (at most 50 rows).
    """
    summary = document["summary"]
    comp = summary["composite"]
    components = [(cell(k), _score(v)) for k, v in comp["components"].items()]
    tiers = [(cell(k), _pct(v)) for k, v in comp["per_tier"].items()]
    run_id = document.get("run_id")
    title = f"agent run {cell(run_id)}" if run_id else "agent run"
    lines = [
        f"**assay {title}**: score **{comp['score']:.3f}** ({summary['passed']}/"
        f"{summary['tasks']} tasks passed, cost ${summary['total_cost_usd']:.2f}, tiers "
        f"{cell(', '.join(summary['tiers']))})",
        "",
        "### Components",
        "",
        *_table(("component", "value"), components),
        "",
        "### Per tier",
        "",
        *_table(("tier", "pass rate"), tiers),
        "",
    ]
    notes = [f"- safety: {cell(note, 1000)}" for note in summary.get("safety_notes", [])]
    lines += [*notes, ""] if notes else []
    failures = [t for t in document["results"] if t.get("failure")]
    if failures:
        rows = [
            (
                cell(t["id"]),
                cell(t["tier"]),
                cell(t["failure"]["category"]),
                cell(t["failure"]["details"]),
            )
            for t in failures[:MAX_ROWS]
        ]
        lines += [
            f"### Failures ({len(failures)})",
            "",
            *_table(("task", "tier", "category", "details"), rows),
            *_more(len(failures)),
        ]
    return "\n".join(lines).strip() + "\n"
