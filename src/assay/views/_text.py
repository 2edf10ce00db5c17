"""The human-readable text report of any run (gate or agent), and the text of the smaller views:
a saved run's summary, its failures table, the goldens' self-test."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from assay.goldens import SelfTestReport
from assay.views._common import (
    LABEL,
    Document,
    by_candidate,
    candidates,
    details,
    golden_ids,
    one_line,
    pct,
    plural,
    score,
    signed,
    title,
    why,
)
from assay.vocabulary import STATUSES

if TYPE_CHECKING:
    from assay.results import ReportContent


def _row(r: Mapping[str, Any], width: int) -> str:
    line = f"  {LABEL[r['status']]:<12} {r['id']:<{width}}  {r.get('decided_by') or '-'}"
    repeats = r.get("repeats")
    if repeats is not None:
        flaky = ", FLAKY" if repeats["flaky"] else ""
        line += f"  [{repeats['passed']}/{repeats['k']} repeats{flaky}]"
    if r["status"] != "pass":
        reasons = why(r)
        listed = r.get("failure") or any(not c["passed"] for c in r.get("checks", ()))
        if listed:
            line += "  " + one_line("; ".join(reasons))
        elif reasons:
            line += "  (" + one_line("; ".join(reasons)) + ")"
    cut = [str(n) for n in r.get("notes", ()) if str(n).startswith("truncated:")]
    if cut and cut[0] not in line:  # a passing answer may be cut short too: say so
        line += f"  [{one_line(cut[0])}]"
    if r.get("safety"):  # a task may pass and still zero Safety (a DIRTY attestation): why
        line += f"  [safety 0: {one_line(str(r['safety']))}]"
    return line


def summary_line(s: Mapping[str, Any]) -> str:
    counts = ", ".join(f"{s['counts'].get(k, 0)} {k}" for k in STATUSES)
    return (
        f"{plural(s['total'], 'golden')}: {counts} · pass rate {pct(s['pass_rate'])} · "
        f"mean score {score(s['mean_score'])}"
    )


def _cell(result: Mapping[str, Any] | None) -> str:
    if result is None:
        return "-"
    label = LABEL[result["status"]]
    return label if result["score"] is None else f"{label} {score(result['score'])}"


def _matrix(document: Document, width: int) -> list[str]:
    names = [s["candidate"] for s in candidates(document)]
    cells = {(r["candidate"], r["id"]): r for r in document["results"]}
    rows = [(g, [_cell(cells.get((n, g))) for n in names]) for g in golden_ids(document)]
    # Every column as wide as its widest cell ("NO-OUTPUT 0.000" is wider than a name).
    col = max(12, *(len(n) for n in names), *(len(c) for _, row in rows for c in row))
    lines = [
        "matrix (goldens × candidates):",
        "  " + " " * width + "  " + "  ".join(f"{n:>{col}}" for n in names),
    ]
    for golden_id, row in rows:
        lines.append(f"  {golden_id:<{width}}  " + "  ".join(f"{c:>{col}}" for c in row))
    return lines


def _ranking(document: Document) -> list[str]:
    ranked = candidates(document)
    lines = ["ranking (mean score desc, pass rate desc, candidate id asc):"] + [
        f"  {i}. {s['candidate']}: mean score {score(s['mean_score'])}, pass rate "
        f"{pct(s['pass_rate'])} ({plural(s['total'], 'golden')})"
        for i, s in enumerate(ranked, start=1)
    ]
    # Candidates the numbers cannot tell apart: their order is the id's, not a finding.
    groups: dict[tuple[Any, Any], list[str]] = {}
    for s in ranked:
        groups.setdefault((s["mean_score"], s["pass_rate"]), []).append(str(s["candidate"]))
    ties = [" = ".join(names) for names in groups.values() if len(names) > 1]
    if ties:
        lines.append(f"  tied (same mean score and pass rate, so in id order): {'; '.join(ties)}")
    return lines


def composite_lines(summary: Mapping[str, Any]) -> list[str]:
    """The agent benchmark's composite score, components and per-tier pass rates."""
    comp = summary.get("composite")
    if comp is None:
        return []
    passed = summary["counts"].get("pass", 0)
    lines = [
        f"score {comp['score']:.3f}  ({passed}/{summary['total']} tasks passed, "
        f"cost ${summary.get('total_cost_usd', 0.0):.2f}, "
        f"tiers {', '.join(summary.get('tiers', []))})",
        "  " + "  ".join(f"{k} {v:.3f}" for k, v in comp["components"].items()),
        "  per tier: " + "  ".join(f"{k} {pct(v)}" for k, v in comp["per_tier"].items()),
    ]
    if comp["components"].get("code_quality") == 0.0 and comp["score"] > 0.0:
        # A perfect run scores 0.700 until a judge looks at the code: say so next to it.
        lines.append(
            "  code_quality is 0 without a judge verdict in the telemetry: the score tops out "
            "at 0.700 until one exists"
        )
    attestation = summary.get("attestation")
    if attestation is not None:  # the verdict of the run's seals, CLEAN ones included
        sealed, clean = attestation["sealed"], attestation["clean"]
        lines.append(
            f"  attestation: {attestation['verdict']} ({clean} of {sealed} sealed task(s) "
            "verified CLEAN)"
        )
    lines.extend(f"  safety: {note}" for note in summary.get("safety_notes", []))
    return lines


def _compare(comparison: Mapping[str, Any]) -> list[str]:
    s = comparison["score"]
    lines = [
        f"compare with {comparison['previous_run']}: score {s['before']:.3f} → "
        f"{s['after']:.3f} ({signed(s['delta'])})",
        "  " + "  ".join(f"{k} {signed(v['delta'])}" for k, v in comparison["components"].items()),
        "  per tier: "
        + "  ".join(f"{k} {signed(v['delta'])}" for k, v in comparison["per_tier"].items()),
    ]
    lines.extend(
        f"  flipped {flip['id']}: {flip['before']} → {flip['after']}"
        for flip in comparison["flipped"]
    )
    if not comparison["flipped"]:
        lines.append("  no task flipped")
    return lines


def _calls(calls: Mapping[str, Any], label: str = "calls") -> str:
    line = (
        f"{label}: {calls.get('made', 0)} made ({calls.get('errors', 0)} failed), "
        f"{calls.get('cache_hits', 0)} from the cache; tokens {calls.get('input_tokens', 0)} in / "
        f"{calls.get('output_tokens', 0)} out; cost ${calls.get('cost_usd', 0.0):.4f}"
    )
    judge = calls.get("judge")
    if isinstance(judge, Mapping):
        line += "\n" + _calls(judge, "judge calls")
    return line


def _gate_lines(document: Document, multi: bool) -> list[str]:
    summary = document["summary"]
    lines: list[str] = []
    if summary.get("mode") == "write-baseline" and summary.get("baseline") is not None:
        lines.append(f"baseline written: {summary['baseline']}")  # None: not written (a note)
    regressions = document.get("regressions")
    if regressions is not None:
        lines.append(f"check against {summary.get('baseline')}: {len(regressions)} regression(s)")
        for reg in regressions:
            who = f"{reg['candidate']}/{reg['id']}" if multi else reg["id"]
            lines.append(f"  REGRESSED  {who}: {reg['why']}")
        lines.extend(f"  note: {note}" for note in summary.get("baseline_notes", []))
    failures = summary.get("gate_failures", [])
    undecided = summary.get("undecided", [])
    lines.extend(f"gate failed: {failure}" for failure in failures)
    lines.extend(f"gate undecided: {reason}" for reason in undecided)
    if undecided:
        lines.append("gate: COULD NOT DECIDE (exit 1)")
    elif regressions is not None or failures:
        lines.append("gate: FAILED (exit 2)" if failures else "gate: passed")
    return lines


def render_verdict(document: Document, written_to: str) -> str:
    """What stderr gets when the report went to a file: where it went, each candidate's
    summary, and the baseline check with its regressions and the gate's verdict. A CI log must
    show the verdict whatever ``--output`` captured."""
    ranked = candidates(document)
    multi = len(ranked) > 1
    lines = [f"assay: report written to {written_to}"]
    lines.extend((f"{s['candidate']}: " if multi else "") + summary_line(s) for s in ranked)
    lines.extend(composite_lines(document["summary"]))
    lines.extend(one_line(line) for line in _gate_lines(document, multi))
    return "\n".join(lines) + "\n"


def render_text(
    document: Document, content: ReportContent | None = None, *, quiet: bool = False
) -> str:
    """Any run as text: rows per candidate, summaries, the matrix and ranking when there are
    several candidates, the composite of an agent run, notes, the baseline check and verdict.
    ``quiet``: no row per golden and no matrix, only what the run came to."""
    results = document["results"]
    summary = document["summary"]
    width = min(max(max((len(r["id"]) for r in results), default=10), 10), 60)
    ranked = candidates(document)
    multi = len(ranked) > 1
    grouped = by_candidate(document)
    lines: list[str] = []
    for s in ranked:
        if not quiet:
            lines.append(f"candidate {s['candidate']}:" if multi else title(document))
            passing = f"  {LABEL['pass']:<12} "  # most rows of a big suite: written inline
            for r in grouped.get(s["candidate"], []):
                plain = not (r.get("notes") or r.get("safety"))
                if r["status"] == "pass" and "repeats" not in r and plain:
                    lines.append(f"{passing}{r['id']:<{width}}  {r.get('decided_by') or '-'}")
                    continue
                lines.append(_row(r, width))
                lines.extend([" " * 15 + line for line in details(r, content)])  # under the id
            lines.append(("  " if multi else "") + "summary: " + summary_line(s))
            lines.append("")
        else:
            lines.append((f"{s['candidate']}: " if multi else "summary: ") + summary_line(s))
    if multi:
        lines += [*([] if quiet else [*_matrix(document, width), ""]), *_ranking(document), ""]
    if not ranked:
        lines.append("assay: no candidate outputs")
    lines += composite_lines(summary)
    if document.get("compare") is not None:
        lines += _compare(document["compare"])
    lines.extend(f"note: {note}" for note in summary.get("notes", []))
    if any("repeats" in r for r in results):
        lines.append(
            "note: with repeats the pass rate is pass^k: a golden passes only when all k of its "
            "answers pass (pass@k and flakiness are in --json)"
        )
    calls = summary.get("model_calls")
    if calls:
        if "made" in calls:
            lines.append(_calls(calls))
        elif isinstance(calls.get("judge"), Mapping):  # static outputs, judged
            lines.append(_calls(calls["judge"], "judge calls"))
    lines += _gate_lines(document, multi)
    return "\n".join(lines).rstrip() + "\n"


def render_summary(document: Document) -> str:
    """A saved run's headline (``assay report``): id, time and the composite."""
    lines = [f"run {document.get('run_id')} ({document.get('created_at')})"]
    lines += composite_lines(document["summary"]) or [summary_line(document["summary"])]
    summary = document["summary"]
    verdict = summary.get("gate")
    if document.get("kind") == "gate" and summary.get("mode") == "check" and verdict:
        # What the check found, as the run's own report said it (each regression by its kind:
        # the record keeps no failed check's argument).
        regressions = document.get("regressions") or []
        multi = len(summary.get("candidates", ())) > 1
        lines.append(f"check against {summary.get('baseline')}: {len(regressions)} regression(s)")
        for reg in regressions:
            who = f"{reg['candidate']}/{reg['id']}" if multi else reg["id"]
            lines.append(f"  REGRESSED  {who}: {reg['why']}")
        lines.extend(f"gate failed: {failure}" for failure in summary.get("gate_failures", []))
        lines.append(f"gate: {'FAILED' if verdict == 'failed' else verdict}")
    return "\n".join(lines) + "\n"


def render_failures(table: Mapping[str, Any], *, gate: bool = False) -> str:
    """The failure taxonomy table of a saved run (``assay failures``); ``gate``: of a gate
    run, whose rows are goldens by status, not tasks by failure category."""
    rows = table["failures"]
    lines = [f"failures in run {table['run_id']}: {len(rows)}"]
    if rows:
        item, category = ("golden", "status") if gate else ("task", "category")
        width = min(60, max([len(item), *(len(r["id"]) for r in rows)]))
        lines.append(f"  {item:<{width}}  {category:<17} details")
        lines += [f"  {row['id']:<{width}}  {row['category']:<17} {row['details']}" for row in rows]
    unsafe = table.get("unsafe", [])
    if unsafe:  # passed or failed, each zeroes Safety: say which and why
        lines.append(f"safety 0 (attestation not CLEAN): {len(unsafe)}")
        lines += [f"  {row['id']}: {one_line(str(row['safety']))}" for row in unsafe]
    lines.append("counts: " + ", ".join(f"{k} {v}" for k, v in table["counts"].items()))
    return "\n".join(lines) + "\n"


def render_self_test(report: SelfTestReport) -> str:
    lines = [f"self-test: {report.checked} golden(s) checked against their own expected"]
    defaults = report.defaults
    if defaults is not None:
        # Checks and vars no golden file shows: say where they come from and what they are.
        lines.append(
            f"  defaults      {defaults.source} (each golden but those with defaults: false)"
        )
        if defaults.asserts:
            texts = ", ".join(repr(spec.text) for spec in defaults.asserts)
            count = len(defaults.asserts)
            lines.append(f"      {count} assert(s) before each golden's own: {texts}")
        if defaults.vars:
            lines.append(f"      vars (a golden's own win): {', '.join(defaults.vars)}")
        if defaults.threshold is not None:
            lines.append(f"      threshold {defaults.threshold:g} where a golden sets none")
        if not (defaults.asserts or defaults.vars or defaults.threshold is not None):
            lines.append("      adds nothing")
    for item in report.inconsistent:
        lines.append(f"  INCONSISTENT  {item.id} ({item.source})")
        lines.extend(f"      {c.text}: {c.reason}" for c in item.failed)
    for golden_id in report.no_expected:
        lines.append(f"  skipped       {golden_id}: has asserts but no expected value")
    for golden_id in report.no_origin:
        lines.append(
            f"  warning       {golden_id}: no '## Origin' section (say where it came from)"
        )
    for golden_id, keys in report.unknown_fields.items():
        names = ", ".join(repr(k) for k in keys)
        lines.append(
            f"  warning       {golden_id}: unknown field(s) {names} kept as metadata"
            " (strict = true in the config makes them errors)"
        )
    verdict = "OK" if report.ok else f"{len(report.inconsistent)} inconsistent golden(s)"
    lines.append(f"self-test: {verdict}")
    return "\n".join(lines) + "\n"
