"""One self-contained HTML report: inline CSS and JS, no URL of any kind, readable offline.

The data travels as JSON inside ``<script type="application/json" id="assay-data">`` with ``<``,
``>`` and ``&`` escaped, so no output can close the script element. The page script builds the DOM
with ``textContent`` only: every golden, output and reason shows as text, never as markup. A
Content-Security-Policy allows nothing but this file's own style and script (by hash), so even a
bug in the page could not load or run anything else.

Rows render 200 per page and filtering runs over the JSON data, so a 10,000-golden report stays
responsive. Stable hooks for tests and users: ``#filter``, ``input.status-filter[value=STATUS]``,
``tr.row`` (one per golden, ``data-id``), ``tr.detail`` (the opened panel), ``#prev`` / ``#next``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from importlib import resources
from typing import Any, Final

from assay._version import __version__
from assay.goldens import Golden
from assay.results import ReportContent
from assay.views._common import Document, candidates, csp_source, gate_state, plural

# The page's style and script ship as package data (read once, inlined into every report).
_ASSETS = resources.files("assay").joinpath("views", "assets")
_CSS: Final = _ASSETS.joinpath("report.css").read_text(encoding="utf-8")
_JS: Final = _ASSETS.joinpath("report.js").read_text(encoding="utf-8")


# Only this file's own style and script may apply; no fetch, image, font or frame can load.
_CSP: Final = (
    f"default-src 'none'; style-src {csp_source(_CSS)}; script-src {csp_source(_JS)}; "
    "img-src data:; base-uri 'none'; form-action 'none'"
)

_PAGE_HEAD: Final = (
    '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
    f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">\n'
    '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
    '<link rel="icon" href="data:,">\n<title>assay report</title>\n'
    f"<style>{_CSS}</style>\n</head>\n<body>\n"
    '<header><h1 id="title">assay report</h1><div class="sub" id="subtitle"></div></header>\n'
    '<main id="content"><noscript>This report needs JavaScript.</noscript></main>\n'
    '<script type="application/json" id="assay-data">'
)
_PAGE_TAIL: Final = f"</script>\n<script>{_JS}</script>\n</body>\n</html>\n"


def _finite(value: Any) -> Any:
    """``value`` with NaN and infinities as strings: ``JSON.parse`` rejects them as numbers."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, Mapping):
        return {str(k): _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def embed_json(data: Any) -> str:
    """``data`` as JSON that is safe inside a ``<script>`` element.

    ``ensure_ascii`` turns lone surrogates and U+2028/U+2029 into ``\\u`` escapes (a file with a
    lone surrogate cannot be written as UTF-8); escaping ``<``, ``>`` and ``&`` means no
    ``</script>`` or ``<!--`` can ever appear in the element.
    """
    options: dict[str, Any] = {"ensure_ascii": True, "separators": (",", ":"), "default": str}
    try:
        text = json.dumps(data, allow_nan=False, **options)
    except ValueError:
        text = json.dumps(_finite(data), allow_nan=False, **options)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _golden(golden: Golden | None) -> dict[str, Any] | None:
    if golden is None:
        return None
    return {
        "title": golden.fields.get("title"),
        "input": golden.input,
        "expected": golden.expected if golden.has_expected else None,
        "has_expected": golden.has_expected,
        "rubric": golden.rubric,
    }


def _outcome(entry: Any) -> dict[str, Any] | None:
    """The status and score of a result or a baseline entry (None for anything else)."""
    if not isinstance(entry, Mapping):
        return None
    return {"status": entry.get("status"), "score": entry.get("score")}


def _before(baseline: Mapping[str, Any] | None, candidate: str, golden_id: str) -> Any:
    entries = baseline.get("goldens") if baseline is not None else None
    per = entries.get(candidate) if isinstance(entries, Mapping) else None
    return _outcome(per.get(golden_id) if isinstance(per, Mapping) else None)


def _compact(record: Mapping[str, Any]) -> dict[str, Any]:
    """``record`` without its null fields: the page treats a missing field as null, and 10,000
    goldens' checks are 10 % of the file."""
    return {k: v for k, v in record.items() if v is not None}


def _cell(result: Mapping[str, Any], content: ReportContent) -> dict[str, Any]:
    cell = _compact(result)
    cell["checks"] = [_compact(c) for c in result.get("checks", ())]
    produced = content.outputs.get(result["candidate"]) or {}
    cell["has_output"] = result["id"] in produced
    if cell["has_output"]:
        cell["output"] = produced[result["id"]]
    cell["before"] = _before(content.baseline, result["candidate"], result["id"])
    return cell


def _regressions(document: Document, content: ReportContent) -> list[dict[str, Any]] | None:
    regressions = document.get("regressions")
    if regressions is None:
        return None
    now = {(r["candidate"], r["id"]): r for r in document["results"]}
    return [
        {
            **reg,
            "before": _before(content.baseline, reg["candidate"], reg["id"]),
            "after": _outcome(now.get((reg["candidate"], reg["id"]))),
        }
        for reg in regressions
    ]


def _subtitle(document: Document, goldens: int) -> str:
    summary = document["summary"]
    parts = [plural(goldens, "golden"), f"{len(candidates(document))} candidate(s)"]
    if summary.get("mode"):
        parts.append(f"mode {summary['mode']}")
    if document.get("run_id"):
        parts.append(f"run {document['run_id']}")
    return " · ".join([*parts, f"assay {document.get('assay_version', __version__)}"])


def page_data(document: Document, content: ReportContent | None = None) -> dict[str, Any]:
    """The JSON the page renders: one row per golden, one cell per candidate."""
    content = content or ReportContent()
    summary = document["summary"]
    column = {s["candidate"]: i for i, s in enumerate(candidates(document))}
    rows: dict[str, dict[str, Any]] = {}
    for r in document["results"]:
        row = rows.get(r["id"])
        if row is None:
            golden = _golden(content.goldens.get(r["id"]))
            if golden is None and r.get("title"):
                golden = {"title": r["title"], "input": None, "has_expected": False}
            row = {"id": r["id"], "tier": r["tier"], "golden": golden}
            row["cells"] = [None] * len(column)
            rows[r["id"]] = row
        if r["candidate"] in column:
            row["cells"][column[r["candidate"]]] = _cell(r, content)
    goldens = summary.get("goldens", len(rows))
    return {
        "title": "assay agent run" if document.get("kind") == "agent" else "assay report",
        "subtitle": _subtitle(document, goldens),
        "verdict": {
            "state": gate_state(document),
            "failures": list(summary.get("gate_failures", [])) + list(summary.get("undecided", [])),
            "baseline": summary.get("baseline"),
        },
        "totals": {k: summary[k] for k in ("total", "counts", "pass_rate", "mean_score")}
        | {"goldens": goldens},
        "composite": summary.get("composite"),
        "safety_notes": list(summary.get("safety_notes", [])),
        "candidates": list(candidates(document)),
        "notes": list(summary.get("notes", [])),
        "baseline_notes": list(summary.get("baseline_notes", [])),
        "regressions": _regressions(document, content),
        "rows": list(rows.values()),
    }


def render_html(document: Document, content: ReportContent | None = None) -> str:
    """Any run as one self-contained HTML page, which loads nothing from anywhere; ``content``:
    the goldens, outputs and baseline for the detail panels (gate runs)."""
    return _PAGE_HEAD + embed_json(page_data(document, content)) + _PAGE_TAIL
