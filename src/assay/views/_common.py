"""What every renderer reads the same way from a results document (they only read)."""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from assay.asserts import as_text  # the text the checks read: what a report shows
from assay.vocabulary import STATUSES

if TYPE_CHECKING:
    from assay.results import ReportContent

Document = Mapping[str, Any]

# How much of an output a report line shows, and how many lines of a diff.
TRIM: Final = 160
DIFF_LINES: Final = 8
_CONTROL: Final = re.compile(r"[\x00-\x1f\x7f]+")

LABEL: Final = {status: status.upper() for status in STATUSES}


def csp_source(text: str) -> str:
    """A Content-Security-Policy source allowing exactly this inline text."""
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return f"'sha256-{base64.b64encode(digest).decode('ascii')}'"


def pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value * 100:.1f}%"


def score(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def signed(value: float | None) -> str:
    return "n/a" if value is None else f"{value:+.3f}"


def why(result: Mapping[str, Any]) -> list[str]:
    """Why a result is not a pass, most specific first: an agent task's failure category, the
    failed checks (``text: reason``; only the op in a redacted run record), else the notes."""
    failure = result.get("failure")
    lines = [f"{failure['category']}: {failure['details']}"] if failure else []
    lines += [
        f"{c['text']}: {c.get('reason') or 'failed'}"
        for c in result.get("checks", ())
        if not c["passed"]
    ]
    return lines or [str(n) for n in result.get("notes", ())]


def by_candidate(document: Document) -> dict[str, list[Mapping[str, Any]]]:
    """Results per candidate, in the ranked candidate order of the summary."""
    grouped: dict[str, list[Mapping[str, Any]]] = {c["candidate"]: [] for c in candidates(document)}
    for r in document["results"]:
        grouped.setdefault(r["candidate"], []).append(r)
    return grouped


def candidates(document: Document) -> Sequence[Mapping[str, Any]]:
    return list(document["summary"].get("candidates", ()))


def golden_ids(document: Document) -> list[str]:
    """Result ids in first-seen order (one matrix row each)."""
    return list(dict.fromkeys(r["id"] for r in document["results"]))


def title(document: Document) -> str:
    """``agent run <id>`` for an agent run, ``assay: N goldens`` for a gate run."""
    if document.get("kind") == "agent":
        run_id = document.get("run_id")
        return f"agent run {run_id}" if run_id else "agent run (not saved)"
    goldens = document["summary"].get("goldens")
    if goldens is None:
        goldens = len(golden_ids(document))
    return f"assay: {plural(goldens, 'golden')}"


def plural(count: int, word: str) -> str:
    """``1 golden``, ``2 goldens``."""
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def gate_state(document: Document) -> str:
    """``undecided`` (exit 1: too many errors to decide), ``failed`` (exit 2), ``passed``
    (checked against a baseline) or ``report`` (no gate)."""
    summary = document["summary"]
    if summary.get("undecided"):
        return "undecided"
    if summary.get("gate_failures"):
        return "failed"
    return "passed" if "regressions" in document else "report"


def one_line(text: str) -> str:
    """Reasons, notes and outputs may hold multi-line text: keep each report row on one line."""
    return _CONTROL.sub(" ", text)


def trimmed(text: str, limit: int = TRIM) -> str:
    """``text`` on one line (control characters as spaces), cut at ``limit`` characters."""
    flat = one_line(text)
    return flat if len(flat) <= limit else flat[: limit - 1] + f"… ({len(text)} characters)"


# How many distinct failing answers of a golden's repeats a report lists.
FAILING_SHOWN: Final = 3


def _failing_lines(failing: Sequence[Mapping[str, Any]], result: Mapping[str, Any]) -> list[str]:
    """``output (2 of 5 answers): ...`` for each distinct answer of the repeats that did not
    pass (the first few), then how many more there were."""
    k = (result.get("repeats") or {}).get("k", sum(int(f["count"]) for f in failing))
    lines = []
    for item in failing[:FAILING_SHOWN]:
        text = as_text(item["output"])
        lines.append(f"output ({item['count']} of {k} answers): {trimmed(text) or '(empty)'}")
    if len(failing) > FAILING_SHOWN:
        lines.append(f"… {len(failing) - FAILING_SHOWN} more distinct failing answer(s)")
    return lines


def details(result: Mapping[str, Any], content: ReportContent | None) -> list[str]:
    """What a result that did not pass said, and how it differs from the expected answer: an
    ``output:`` line (trimmed), then an ``expected:`` line when both are one line, else a short
    unified diff. The output is the document's (a failing result carries it); with repeats,
    one ``output (n of k answers):`` line per distinct answer that did not pass
    (``failing_outputs``), the first one compared. The expected answer comes only from
    ``content`` (never from the document, which may be saved)."""
    if result.get("status") == "pass":
        return []
    failing = result.get("failing_outputs")
    output = failing[0]["output"] if failing else result.get("output")
    if output is None and content is not None:
        output = content.outputs.get(result.get("candidate", ""), {}).get(result["id"])
    if output is None or (
        result.get("status") in ("no-output", "error") and "output" not in result and not failing
    ):
        return []
    text = as_text(output)
    lines = (
        _failing_lines(failing, result)
        if failing
        else [f"output: {trimmed(text)}" if text else "output: (empty)"]
    )
    golden = content.goldens.get(result["id"]) if content is not None else None
    if golden is None or not golden.has_expected:
        return lines
    expected = as_text(golden.expected)
    if expected.strip() == text.strip():
        return lines
    if "\n" not in expected.strip() and "\n" not in text.strip():
        return [*lines, f"expected: {trimmed(expected)}"]
    import difflib  # only for a multi-line answer that differs: most runs never need it

    diff = list(
        difflib.unified_diff(
            expected.splitlines(), text.splitlines(), "expected", "output", n=1, lineterm=""
        )
    )[2:]  # the ---/+++ header says nothing the labels do not
    shown = [f"  {trimmed(line, TRIM + 2)}" for line in diff[:DIFF_LINES]]
    more = [f"  … {len(diff) - DIFF_LINES} more diff line(s)"] if len(diff) > DIFF_LINES else []
    return [*lines, "diff (expected → output):", *shown, *more]
