"""JUnit XML: the report CI systems (GitHub, GitLab, Jenkins) already know how to show.

One ``<testsuite>`` per candidate, one ``<testcase>`` per golden. ``fail`` is a ``<failure>``,
``no-output`` and ``error`` are ``<error>`` (the candidate produced nothing scorable), and
``needs-judge`` is ``<skipped>`` (nothing decided it). Under ``--check``, or when a gate threshold
failed, an extra ``assay-gate`` suite carries one failing case per regression plus a ``gate`` case,
so a CI test view shows why the job went red. Counts on each suite match the candidate's summary.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping
from typing import Any, Final

from assay.gate import GateRun
from assay.results import Result

GATE_SUITE: Final = "assay-gate"
_MESSAGE_MAX: Final = 200
# XML 1.0 forbids most C0 controls, lone surrogates and U+FFFE/U+FFFF; a parser rejects the whole
# file when one slips in, so they are removed rather than escaped (they cannot be escaped).
_ILLEGAL_XML: Final = re.compile("[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def clean(text: str) -> str:
    """``text`` without the characters XML 1.0 cannot carry."""
    return _ILLEGAL_XML.sub("", text)


def _short(text: str) -> str:
    one_line = " ".join(text.split())
    return one_line if len(one_line) <= _MESSAGE_MAX else one_line[: _MESSAGE_MAX - 1] + "…"


def _sub(parent: ET.Element, tag: str, attrs: Mapping[str, str], body: str | None = None) -> None:
    child = ET.SubElement(parent, tag, {k: clean(v) for k, v in attrs.items()})
    if body:
        child.text = clean(body)


def _check_lines(result: Result) -> list[str]:
    return [f"{c.text}: {c.reason}" if c.reason else c.text for c in result.failed_checks()]


def _fail_message(result: Result, lines: list[str]) -> str:
    if lines:
        more = f" (and {len(lines) - 1} more)" if len(lines) > 1 else ""
        return _short(lines[0]) + more
    return _short("; ".join(result.notes) or "failed")


def _fail_body(result: Result, lines: list[str]) -> str:
    head = [f"decided by {result.decided_by or '-'}"]
    if result.score is not None:
        head[0] += f", score {result.score:.3f}"
    return "\n".join([*head, *lines, *result.notes])


def _testcase(suite: ET.Element, result: Result) -> None:
    case = ET.SubElement(
        suite, "testcase", {"classname": clean(result.tier or "assay"), "name": clean(result.id)}
    )
    notes = "; ".join(result.notes)
    if result.status == "fail":
        lines = _check_lines(result)
        _sub(
            case,
            "failure",
            {"message": _fail_message(result, lines), "type": result.decided_by or "fail"},
            _fail_body(result, lines),
        )
    elif result.status in ("no-output", "error"):
        message = _short(notes or result.status)
        _sub(case, "error", {"message": message, "type": result.status}, notes or None)
    elif result.status == "needs-judge":
        _sub(case, "skipped", {"message": _short(notes or "needs a judge")})


def _counts(suite: ET.Element) -> dict[str, int]:
    cases = suite.findall("testcase")
    return {
        "tests": len(cases),
        "failures": sum(1 for c in cases if c.find("failure") is not None),
        "errors": sum(1 for c in cases if c.find("error") is not None),
        "skipped": sum(1 for c in cases if c.find("skipped") is not None),
    }


def _properties(suite: ET.Element, values: Iterable[tuple[str, str]]) -> None:
    props = ET.SubElement(suite, "properties")
    for name, value in values:
        ET.SubElement(props, "property", {"name": clean(name), "value": clean(value)})


def _finish(root: ET.Element) -> str:
    """Write the counts on every suite and on the root, then serialise."""
    total = dict.fromkeys(("tests", "failures", "errors", "skipped"), 0)
    for suite in root.findall("testsuite"):
        counts = _counts(suite)
        for key, value in counts.items():
            suite.set(key, str(value))
            total[key] += value
    for key, value in total.items():
        root.set(key, str(value))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, "unicode") + "\n"


def _score(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _gate_suite(root: ET.Element, run: GateRun) -> None:
    suite = ET.SubElement(root, "testsuite", {"name": GATE_SUITE})
    if run.baseline_path is not None:
        _properties(suite, [("baseline", str(run.baseline_path))])
    for reg in run.diff.regressions if run.diff is not None else []:
        case = ET.SubElement(
            suite,
            "testcase",
            {"classname": "regression", "name": clean(f"{reg.candidate}/{reg.id}")},
        )
        _sub(case, "failure", {"message": _short(reg.why), "type": "regression"}, reg.why)
    case = ET.SubElement(suite, "testcase", {"classname": "gate", "name": "gate"})
    if run.gate_failures:
        message = _short(run.gate_failures[0])
        _sub(case, "failure", {"message": message, "type": "gate"}, "\n".join(run.gate_failures))


def render_junit(run: GateRun) -> str:
    """The gate run as JUnit XML (the Jenkins/Ant ``junit-10.xsd`` shape).

    Args:
        run: the scored gate run.

    Returns:
        The XML document, UTF-8 declaration included, ending in a newline.
    """
    root = ET.Element("testsuites", {"name": "assay"})
    by_candidate: dict[str, list[Result]] = {}
    for r in run.results:
        by_candidate.setdefault(r.candidate, []).append(r)
    for summary in run.summaries:
        suite = ET.SubElement(root, "testsuite", {"name": clean(summary.candidate)})
        _properties(
            suite,
            [
                ("pass_rate", f"{summary.pass_rate:.4f}"),
                ("mean_score", _score(summary.mean_score)),
            ],
        )
        for result in by_candidate.get(summary.candidate, []):
            _testcase(suite, result)
    if run.diff is not None or run.gate_failures:
        _gate_suite(root, run)
    return _finish(root)


def render_agent_junit(document: Mapping[str, Any]) -> str:
    """A saved agent run as JUnit XML: one suite ``agent``, one case per task.

    Args:
        document: the agent run document (``summary.composite`` and ``results``).

    Returns:
        The XML document; a failed task is a ``<failure>`` whose message is
        ``category: details``.
    """
    root = ET.Element("testsuites", {"name": "assay"})
    suite = ET.SubElement(root, "testsuite", {"name": "agent"})
    composite = document["summary"]["composite"]
    props = [("score", f"{composite['score']:.4f}")]
    props += [(k, _score(v)) for k, v in composite.get("components", {}).items()]
    if document.get("run_id"):
        props.append(("run_id", str(document["run_id"])))
    _properties(suite, props)
    for task in document["results"]:
        attrs = {"classname": str(task.get("tier") or "assay"), "name": str(task["id"])}
        if isinstance(task.get("duration_s"), int | float) and task.get("telemetry", True):
            attrs["time"] = f"{float(task['duration_s']):.3f}"
        case = ET.SubElement(suite, "testcase", {k: clean(v) for k, v in attrs.items()})
        if task.get("passed"):
            continue
        failure = task.get("failure") or {}
        category = str(failure.get("category", "failed"))
        text = f"{category}: {failure.get('details', '')}".rstrip(": ")
        body = [
            text,
            *(f"check {c['op']}: failed" for c in task.get("checks", []) if not c["passed"]),
        ]
        if task.get("safety"):
            body.append(f"safety: {task['safety']}")
        _sub(case, "failure", {"message": _short(text), "type": category}, "\n".join(body))
    return _finish(root)
