"""JUnit XML: the report CI systems (GitHub, GitLab, Jenkins) already know how to show.

One ``<testsuite>`` per candidate (an agent run's composite score and components are its
properties), one ``<testcase>`` per golden or task, and under ``--check`` (or a failed gate
threshold) an ``assay-gate`` suite saying why the job went red. The mapping: docs/formats.md.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Final

from assay.views._common import Document, by_candidate, candidates, details, score, why

if TYPE_CHECKING:
    from assay.results import ReportContent

GATE_SUITE: Final = "assay-gate"
_MESSAGE_MAX: Final = 200
# The counts of a suite: its cases that hold each element (and "tests": all its cases).
_COUNTED: Final = {"failures": "failure", "errors": "error", "skipped": "skipped"}
# XML 1.0 forbids most C0 controls, lone surrogates and U+FFFE/U+FFFF; a parser rejects the whole
# file when one slips in, so they are removed rather than escaped (they cannot be escaped).
_ILLEGAL_XML: Final = re.compile("[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def clean(text: str) -> str:
    """``text`` without the characters XML 1.0 cannot carry."""
    return _ILLEGAL_XML.sub("", text)


def _short(text: str) -> str:
    one_line = " ".join(text.split())
    return one_line if len(one_line) <= _MESSAGE_MAX else one_line[: _MESSAGE_MAX - 1] + "…"


def _sub(
    parent: ET.Element, tag: str, attrs: Mapping[str, str], body: str | None = None
) -> ET.Element:
    """A child element, its attributes and text cleaned for XML."""
    child = ET.SubElement(parent, tag, {k: clean(v) for k, v in attrs.items()})
    if body:
        child.text = clean(body)
    return child


def _fail_message(lines: list[str]) -> str:
    if not lines:
        return "failed"
    more = f" (and {len(lines) - 1} more)" if len(lines) > 1 else ""
    return _short(lines[0]) + more


def _fail_body(result: Mapping[str, Any], lines: list[str]) -> str:
    head = f"decided by {result.get('decided_by') or '-'}"
    if result["score"] is not None:
        head += f", score {result['score']:.3f}"
    extra = [f"safety: {result['safety']}"] if result.get("safety") else []
    notes = [n for n in result.get("notes", ()) if n not in lines]
    return "\n".join([head, *lines, *notes, *extra])


def _testcase(suite: ET.Element, result: Mapping[str, Any], content: ReportContent | None) -> None:
    attrs = {"classname": result.get("tier") or "assay", "name": result["id"]}
    telemetry = result.get("telemetry")
    if telemetry is not None:
        attrs["time"] = f"{float(telemetry['duration_s']):.3f}"
    case = _sub(suite, "testcase", attrs)
    status = result["status"]
    notes = "; ".join(result.get("notes", ()))
    failure = result.get("failure")
    if status == "fail":
        lines = why(result)
        kind = failure["category"] if failure else result.get("decided_by") or "fail"
        body = "\n".join([_fail_body(result, lines), *details(result, content)])
        _sub(case, "failure", {"message": _fail_message(lines), "type": kind}, body)
    elif status in ("no-output", "error"):
        message = _short("; ".join(why(result)) or status)
        _sub(case, "error", {"message": message, "type": status}, notes or None)
    elif status == "needs-judge":
        _sub(case, "skipped", {"message": _short(notes or "needs a judge")})
    if result.get("safety") and status != "fail":  # a failure's body already says it
        # A task can pass and still zero Safety (a DIRTY attestation): CI must show why too.
        _sub(case, "system-out", {}, f"safety: {result['safety']}")


def _properties(suite: ET.Element, values: Iterable[tuple[str, str]]) -> None:
    props = ET.SubElement(suite, "properties")
    for name, value in values:
        ET.SubElement(props, "property", {"name": clean(name), "value": clean(value)})


def _finish(root: ET.Element) -> str:
    """Write the counts on every suite and on the root, then serialise."""
    total = dict.fromkeys(("tests", *_COUNTED), 0)
    for suite in root.findall("testsuite"):
        cases = suite.findall("testcase")
        held = {key: sum(c.find(tag) is not None for c in cases) for key, tag in _COUNTED.items()}
        for key, value in {"tests": len(cases), **held}.items():
            suite.set(key, str(value))
            total[key] += value
    for key, value in total.items():
        root.set(key, str(value))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, "unicode") + "\n"


def _gate_suite(root: ET.Element, document: Document) -> None:
    summary = document["summary"]
    suite = ET.SubElement(root, "testsuite", {"name": GATE_SUITE})
    if summary.get("baseline") is not None:
        _properties(suite, [("baseline", str(summary["baseline"]))])
    for reg in document.get("regressions") or []:
        name = f"{reg['candidate']}/{reg['id']}"
        case = _sub(suite, "testcase", {"classname": "regression", "name": name})
        _failed(case, "failure", "regression", [reg["why"]])
    case = _sub(suite, "testcase", {"classname": "gate", "name": "gate"})
    failures, undecided = summary.get("gate_failures", []), summary.get("undecided", [])
    if undecided:  # JUnit's <error>: the test could not run, which is not a failure
        _failed(case, "error", "undecided", undecided)
    elif failures:
        _failed(case, "failure", "gate", failures)


def _failed(case: ET.Element, tag: str, kind: str, reasons: list[str]) -> None:
    """A ``<failure>`` or ``<error>``: the first reason (shortened) its message, all its text."""
    _sub(case, tag, {"message": _short(reasons[0]), "type": kind}, "\n".join(reasons))


def _suite_properties(summary: Mapping[str, Any], document: Document) -> list[tuple[str, str]]:
    props = [
        ("pass_rate", f"{summary['pass_rate']:.4f}"),
        ("mean_score", score(summary["mean_score"])),
    ]
    comp = document["summary"].get("composite")
    if comp is not None:
        props.append(("score", f"{comp['score']:.4f}"))
        props += [(k, score(v)) for k, v in comp.get("components", {}).items()]
    if document.get("run_id"):
        props.append(("run_id", str(document["run_id"])))
    return props


def render_junit(document: Document, content: ReportContent | None = None) -> str:
    """Any run as JUnit XML (the Jenkins/Ant ``junit-10.xsd`` shape), its UTF-8 declaration
    included, ending in a newline; ``content``: the expected answers of failing goldens."""
    root = ET.Element("testsuites", {"name": "assay"})
    grouped = by_candidate(document)
    for summary in candidates(document):
        suite = ET.SubElement(root, "testsuite", {"name": clean(summary["candidate"])})
        _properties(suite, _suite_properties(summary, document))
        for result in grouped.get(summary["candidate"], []):
            _testcase(suite, result, content)
    summary = document["summary"]
    if "regressions" in document or summary.get("gate_failures") or summary.get("undecided"):
        _gate_suite(root, document)
    return _finish(root)
