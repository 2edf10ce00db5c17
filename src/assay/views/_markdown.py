"""A compact Markdown summary for a pull-request comment or a GitHub step summary.

Every value taken from goldens, outputs or reasons goes through :func:`cell`, so a ``|``, a
backtick, a newline or an HTML tag in the data can never break the table or inject markup. Long
lists are capped: a PR comment is limited to 65,536 characters, and a report the size of the whole
suite helps nobody there.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from assay.views._common import (
    Document,
    by_candidate,
    candidates,
    details,
    gate_state,
    golden_ids,
    pct,
    score,
    why,
)

if TYPE_CHECKING:
    from assay.results import ReportContent
from assay.vocabulary import FAILING_STATUSES, STATUSES

MAX_ROWS: Final = 50
_CELL_MAX: Final = 300
# Characters that change how an inline run of text renders in GitHub Markdown. Backslash-escaping
# any ASCII punctuation is valid CommonMark, and `\|` is how a GFM table cell holds a pipe.
_SPECIAL: Final = re.compile(r"([\\`*_\[\]<>|~&])")
# Control characters render as nothing useful, and a lone surrogate (from a file name that is
# not UTF-8) would make the report impossible to write as UTF-8.
_CONTROL: Final = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_SURROGATE: Final = re.compile("[\ud800-\udfff]")


def cell(value: object, limit: int = _CELL_MAX) -> str:
    """``value`` as the text of one table cell: escaped, one line, at most ``limit`` characters."""
    text = str(value).replace("\r\n", "\n").replace("\r", "\n").replace("\t", " ")
    text = _SURROGATE.sub("\ufffd", _CONTROL.sub("", text))
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    lines = [_SPECIAL.sub(r"\\\1", line) for line in text.split("\n")]
    return "<br>".join(lines).strip() or " "


def _section(
    heading: str, header: Sequence[str], rows: Iterable[Sequence[str]], total: int = 0
) -> list[str]:
    """``### heading`` and its table; when ``rows`` are the first MAX_ROWS of ``total`` (the
    caller cuts them), how many more there are."""
    lines = [f"### {heading}", "", "| " + " | ".join(header) + " |"]
    lines.append("|" + "|".join("---" for _ in header) + "|")
    lines.extend("| " + " | ".join(row) + " |" for row in rows)
    if total > MAX_ROWS:
        lines += ["", f"…and {total - MAX_ROWS} more."]
    return [*lines, ""]


def _verdict(document: Document) -> str:
    summary = document["summary"]
    comp = summary.get("composite")
    if comp is not None:
        run_id = document.get("run_id")
        name = f"agent run {cell(run_id)}" if run_id else "agent run"
        return (
            f"**assay {name}**: score **{comp['score']:.3f}** "
            f"({summary['counts'].get('pass', 0)}/{summary['total']} tasks passed, cost "
            f"${summary.get('total_cost_usd', 0.0):.2f}, tiers "
            f"{cell(', '.join(summary.get('tiers', [])))})"
        )
    state = gate_state(document)
    if state == "undecided":
        reasons = "; ".join(summary["undecided"])
        return "⚠️ **assay gate: could not decide** (exit 1): " + cell(reasons, 1000)
    if state == "failed":
        failures = "; ".join(summary["gate_failures"])
        return "❌ **assay gate: FAILED** (exit 2): " + cell(failures, 1000)
    if state == "passed":
        return f"✅ **assay gate: passed**: no regression against {cell(summary.get('baseline'))}"
    return "**assay**: report only (no gate: run with `--check` to compare with the baseline)"


def _composite(summary: Mapping[str, Any]) -> list[str]:
    comp = summary.get("composite")
    if comp is None:
        return []
    components = [(cell(k), score(v)) for k, v in comp["components"].items()]
    tiers = [(cell(k), pct(v)) for k, v in comp["per_tier"].items()]
    lines = [
        *_section("Components", ("component", "value"), components),
        *_section("Per tier", ("tier", "pass rate"), tiers),
    ]
    notes = [f"- safety: {cell(note, 1000)}" for note in summary.get("safety_notes", [])]
    return [*lines, *notes, ""] if notes else lines


def _regressions(document: Document) -> list[str]:
    regs = document.get("regressions") or []
    if not regs:
        return []
    rows = [(cell(r["id"]), cell(r["candidate"]), cell(r["why"])) for r in regs[:MAX_ROWS]]
    return _section(f"Regressions ({len(regs)})", ("golden", "candidate", "why"), rows, len(regs))


def _candidates(document: Document) -> list[str]:
    counted = ("pass", "fail", "needs-judge", "no-output")
    rows = [
        (
            str(i),
            cell(s["candidate"]),
            pct(s["pass_rate"]),
            score(s["mean_score"]),
            *(str(s["counts"].get(k, 0)) for k in counted),
        )
        for i, s in enumerate(candidates(document), start=1)
    ]
    header = ("rank", "candidate", "pass rate", "mean score", *counted)
    return _section("Candidates", header, rows)


def _failing(document: Document, content: ReportContent | None) -> list[str]:
    failing = [
        r
        for results in by_candidate(document).values()
        for r in results
        if r["status"] in FAILING_STATUSES
    ]
    if not failing:
        return []
    said = {id(r): "; ".join(details(r, content)[:5]) for r in failing[:MAX_ROWS]}
    shown = any(said.values())  # what the candidate said, and the expected answer
    rows = [
        (
            cell(r["id"]),
            cell(r["candidate"]),
            cell(r["tier"]),
            r["status"],
            cell("; ".join(why(r)) or r["status"]),
            *([cell(said[id(r)])] if shown else []),
        )
        for r in failing[:MAX_ROWS]
    ]
    header = ("golden", "candidate", "tier", "status", "why", *(["said"] if shown else []))
    return _section(f"Failing goldens ({len(failing)})", header, rows, len(failing))


def _totals(document: Document) -> list[str]:
    summary = document["summary"]
    counts = summary["counts"]
    parts = ", ".join(f"{counts.get(k, 0)} {k}" for k in STATUSES)
    goldens = summary.get("goldens", len(golden_ids(document)))
    lines = [
        f"**Totals**: {summary['total']} result(s) over {goldens} golden(s) and "
        f"{len(candidates(document))} candidate(s): {parts} · pass rate "
        f"{pct(summary['pass_rate'])} · mean score {score(summary['mean_score'])}"
    ]
    notes = [*summary.get("notes", []), *summary.get("baseline_notes", [])]
    if notes:
        lines.append("")
        lines.extend(f"- note: {cell(n, 1000)}" for n in notes)
    return lines


def render_markdown(document: Document, content: ReportContent | None = None) -> str:
    """Any run as GitHub-flavoured Markdown; ``content``: the expected answers, to show how a
    failing output differs."""
    lines = [_verdict(document), ""]
    lines += _composite(document["summary"])
    lines += _regressions(document)
    lines += _candidates(document) if candidates(document) else ["No candidate outputs.", ""]
    lines += _failing(document, content)
    lines += _totals(document)
    return "\n".join(lines).rstrip() + "\n"
