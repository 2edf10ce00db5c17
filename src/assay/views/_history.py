"""The run history as one self-contained HTML page (``assay runs list --format html``): every
saved run in a table, newest first, and the pass rate over time as an inline SVG chart.

No script at all, and a Content-Security-Policy that allows only this file's own style (by
hash): the page shows run ids, times and numbers as text, nothing else. A run's id links to
nothing (its report is ``assay report --run ID --format html``, a file of its own).
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any, Final

from assay._version import __version__
from assay.views._common import csp_source, pct

_CSS: Final = """
body{font:14px/1.45 system-ui,sans-serif;margin:2rem;color:#1f2328;background:#fff}
h1{font-size:1.4rem;margin:0 0 .3rem}
p.sub{color:#57606a;margin:0 0 1.2rem}
table{border-collapse:collapse;width:100%;max-width:72rem}
th,td{text-align:left;padding:.35rem .6rem;border-bottom:1px solid #d0d7de;white-space:nowrap}
th{background:#f6f8fa;font-weight:600}
td.num{text-align:right;font-variant-numeric:tabular-nums}
meter{width:5rem;vertical-align:middle}
.passed{color:#1a7f37;font-weight:600}.failed{color:#cf222e;font-weight:600}
.undecided{color:#9a6700;font-weight:600}
svg{display:block;margin:0 0 1.5rem;max-width:72rem;width:100%;height:auto}
svg .axis{stroke:#d0d7de}svg .line{fill:none;stroke:#0969da;stroke-width:2}
svg circle.passed{fill:#2da44e}svg circle.failed{fill:#cf222e}
svg circle.undecided{fill:#bf8700}svg circle.agent{fill:#8250df}
svg text{font:11px system-ui,sans-serif;fill:#57606a}
"""
_W: Final = 720
_H: Final = 160
_PAD: Final = 32


def _verdict(row: Mapping[str, Any]) -> tuple[str, str]:
    """(css class, text) of a run's outcome column."""
    outcome = str(row.get("outcome", ""))
    if not outcome.startswith("gate "):
        return "agent", outcome
    word = outcome[5:]
    return (word if word in ("passed", "failed") else "undecided"), word


def run_label(row: Mapping[str, Any]) -> str:
    """What a run was, in the words of its flags: its mode, then its selection (``check, -k
    sql-*, shard 2/4``); ``-`` for a record that holds none of these."""
    parts = [row["mode"]] if row.get("mode") else []
    selection = row.get("selection") or {}
    if selection.get("filter"):
        parts.append("-k " + ",".join(selection["filter"]))
    if selection.get("shard"):
        parts.append(f"shard {selection['shard']}")
    return ", ".join(parts) or "-"


def _chart(rows: Sequence[Mapping[str, Any]]) -> str:
    """The pass rate of each run in order (oldest left), as an SVG polyline with a dot per run
    coloured by its verdict."""
    points = [(i, r["pass_rate"]) for i, r in enumerate(rows) if r.get("pass_rate") is not None]
    if not points:
        return ""
    span = max(1, len(rows) - 1)

    def xy(index: int, rate: float) -> tuple[float, float]:
        x = _PAD + (_W - 2 * _PAD) * (index / span if len(rows) > 1 else 0.5)
        y = _H - _PAD - (_H - 2 * _PAD) * max(0.0, min(1.0, float(rate)))
        return round(x, 1), round(y, 1)

    coords = [xy(i, rate) for i, rate in points]
    dots = "".join(
        f'<circle class="{_verdict(rows[i])[0]}" cx="{x}" cy="{y}" r="4"/>'
        for (i, _), (x, y) in zip(points, coords, strict=True)
    )
    line = " ".join(f"{x},{y}" for x, y in coords)
    top, bottom = _PAD, _H - _PAD
    return (
        f'<svg viewBox="0 0 {_W} {_H}" role="img" aria-label="pass rate per run, oldest first">'
        f'<line class="axis" x1="{_PAD}" y1="{bottom}" x2="{_W - _PAD}" y2="{bottom}"/>'
        f'<line class="axis" x1="{_PAD}" y1="{top}" x2="{_W - _PAD}" y2="{top}"/>'
        f'<text x="4" y="{top + 4}">100%</text><text x="12" y="{bottom + 4}">0%</text>'
        f'<polyline class="line" points="{line}"/>{dots}</svg>'
    )


def render_history(rows: Sequence[Mapping[str, Any]]) -> str:
    """The page for these runs (oldest first, as ``assay runs list --json`` gives them)."""
    esc = html.escape
    body_rows = []
    for row in reversed(rows):
        rate = row.get("pass_rate")
        bar = "" if rate is None else f'<meter min="0" max="1" value="{float(rate):.4f}"></meter> '
        css, verdict = _verdict(row)
        body_rows.append(
            "<tr>"
            f"<td>{esc(str(row['run_id']))}</td><td>{esc(str(row['kind']))}</td>"
            f"<td>{esc(run_label(row))}</td>"
            f"<td>{esc(str(row.get('created_at') or '-'))}</td>"
            f'<td class="num">{int(row.get("total") or 0)}</td>'
            f'<td class="num">{bar}{pct(rate)}</td>'
            f'<td class="{css}">{esc(verdict)}</td>'
            "</tr>"
        )
    csp = f"default-src 'none'; style-src {csp_source(_CSS)}"
    return (
        "<!DOCTYPE html>\n"
        f'<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{esc(csp)}">'
        "<title>assay run history</title>"
        f"<style>{_CSS}</style></head><body>"
        "<h1>assay run history</h1>"
        f'<p class="sub">{len(rows)} saved run(s), newest first · pass rate per run, oldest '
        f"left · assay {esc(__version__)}</p>{_chart(rows)}"
        "<table><thead><tr><th>run</th><th>kind</th><th>what</th><th>when (UTC)</th>"
        "<th>results</th><th>pass rate</th><th>verdict / score</th></tr></thead>"
        f"<tbody>{''.join(body_rows)}</tbody></table></body></html>\n"
    )
