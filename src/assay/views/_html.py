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

import base64
import hashlib
import json
import math
from collections.abc import Mapping
from importlib import resources
from typing import Any, Final

from assay._version import __version__
from assay.gate import GateRun
from assay.goldens import Golden
from assay.results import Result

# The page's style and script ship as package data (read once, inlined into every report).
_ASSETS = resources.files("assay").joinpath("views", "assets")
_CSS: Final = _ASSETS.joinpath("report.css").read_text(encoding="utf-8")
_JS: Final = _ASSETS.joinpath("report.js").read_text(encoding="utf-8")


def _sha256(text: str) -> str:
    """A CSP source allowing exactly this inline text."""
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return f"'sha256-{base64.b64encode(digest).decode('ascii')}'"


# Only this file's own style and script may apply; no fetch, image, font or frame can load.
_CSP: Final = (
    f"default-src 'none'; style-src {_sha256(_CSS)}; script-src {_sha256(_JS)}; "
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


def _page(data: Mapping[str, Any]) -> str:
    return _PAGE_HEAD + embed_json(data) + _PAGE_TAIL


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


def _before(baseline: Mapping[str, Any] | None, candidate: str, golden_id: str) -> Any:
    if baseline is None:
        return None
    entries = baseline.get("goldens")
    per = entries.get(candidate) if isinstance(entries, Mapping) else None
    entry = per.get(golden_id) if isinstance(per, Mapping) else None
    if not isinstance(entry, Mapping):
        return None
    return {"status": entry.get("status"), "score": entry.get("score")}


def _cell(
    result: Result,
    outputs: Mapping[str, Mapping[str, Any]] | None,
    baseline: Mapping[str, Any] | None,
) -> dict[str, Any]:
    cell = result.to_dict()
    produced = outputs.get(result.candidate) if outputs is not None else None
    cell["has_output"] = produced is not None and result.id in produced
    if produced is not None and result.id in produced:
        cell["output"] = produced[result.id]
    cell["before"] = _before(baseline, result.candidate, result.id)
    return cell


def _verdict(run: GateRun) -> dict[str, Any]:
    state = "failed" if run.gate_failures else "passed" if run.diff is not None else "report"
    return {
        "state": state,
        "failures": list(run.gate_failures),
        "baseline": str(run.baseline_path) if run.baseline_path is not None else None,
    }


def _regressions(run: GateRun, baseline: Mapping[str, Any] | None) -> list[dict[str, Any]] | None:
    if run.diff is None:
        return None
    now = {(r.candidate, r.id): r for r in run.results}
    out = []
    for reg in run.diff.regressions:
        after = now.get((reg.candidate, reg.id))
        out.append(
            {
                **reg.to_dict(),
                "before": _before(baseline, reg.candidate, reg.id),
                "after": None if after is None else {"status": after.status, "score": after.score},
            }
        )
    return out


def gate_data(
    run: GateRun,
    composite: Mapping[str, Any] | None = None,
    *,
    goldens: Mapping[str, Golden] | None = None,
    outputs: Mapping[str, Mapping[str, Any]] | None = None,
    baseline: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The JSON document the gate page renders (one row per golden, one cell per candidate)."""
    summary = run.to_dict()["summary"]
    column = {s.candidate: i for i, s in enumerate(run.summaries)}
    rows: dict[str, dict[str, Any]] = {}
    for r in run.results:
        row = rows.get(r.id)
        if row is None:
            golden = goldens.get(r.id) if goldens is not None else None
            row = {"id": r.id, "tier": r.tier, "golden": _golden(golden)}
            row["cells"] = [None] * len(column)
            rows[r.id] = row
        if r.candidate in column:
            row["cells"][column[r.candidate]] = _cell(r, outputs, baseline)
    return {
        "kind": "gate",
        "title": "assay report",
        "subtitle": f"{run.golden_count} goldens · {len(run.summaries)} candidate(s) · "
        f"mode {run.mode} · assay {__version__}",
        "verdict": _verdict(run),
        "totals": {k: summary[k] for k in ("total", "counts", "pass_rate", "mean_score")}
        | {"goldens": run.golden_count},
        "composite": dict(composite) if composite is not None else None,
        "candidates": [s.to_dict() for s in run.summaries],
        "notes": list(run.notes),
        "baseline_notes": list(run.diff.notes) if run.diff is not None else [],
        "regressions": _regressions(run, baseline),
        "rows": list(rows.values()),
    }


def render_html(
    run: GateRun,
    composite: Mapping[str, Any] | None = None,
    *,
    goldens: Mapping[str, Golden] | None = None,
    outputs: Mapping[str, Mapping[str, Any]] | None = None,
    baseline: Mapping[str, Any] | None = None,
) -> str:
    """The gate run as one self-contained HTML page.

    Args:
        run: the scored gate run.
        composite: a composite score to show (``{score, components?, per_tier?}``), if any.
        goldens: golden id -> golden, for the input / expected / rubric in the detail panels.
        outputs: candidate -> golden id -> output, for the output in the detail panels.
        baseline: the baseline document, for the "before" of each regression.

    Returns:
        The HTML text. It loads nothing from anywhere: no CDN, font or image URL.
    """
    return _page(gate_data(run, composite, goldens=goldens, outputs=outputs, baseline=baseline))


def render_agent_html(document: Mapping[str, Any]) -> str:
    """A saved agent run as one self-contained HTML page.

    Args:
        document: the agent run document (``summary.composite`` and ``results``).

    Returns:
        The HTML text: score, components, per-tier rates, and the task table with each
        failure's category and details.
    """
    summary = document["summary"]
    data = {
        "kind": "agent",
        "title": "assay agent run",
        "subtitle": f"{summary['passed']}/{summary['tasks']} tasks passed · "
        f"assay {document.get('assay_version', __version__)}",
        "run_id": document.get("run_id"),
        "created_at": document.get("created_at"),
        "summary": summary,
        "rows": list(document["results"]),
    }
    return _page(data)
