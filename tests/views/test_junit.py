"""The JUnit report: schema-valid, counts that match the run, text that survives anything."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from assay.asserts import CheckResult
from assay.gate import Diff, Verdict
from assay.gate._run import GateRun
from assay.results import Result, summarize
from assay.views._junit import GATE_SUITE, render_junit
from tests.helpers.runs import (
    NASTY,
    agent_document,
    check_snapshot,
    example_run,
    sample_run,
)

SCHEMA_PATH = Path(__file__).parent / "schemas" / "junit.xsd"
_KIND = {"fail": "failure", "no-output": "error", "error": "error", "needs-judge": "skipped"}


@pytest.fixture(scope="module")
def schema() -> Any:
    """The JUnit schema (tests that validate skip when ``xmlschema`` is not installed)."""
    xmlschema = pytest.importorskip("xmlschema", reason="xmlschema (a dev dependency) is missing")
    return xmlschema.XMLSchema(str(SCHEMA_PATH))


def parse(xml: str, schema: Any) -> ET.Element:
    """Validate against the JUnit schema, then parse."""
    assert xml.startswith('<?xml version="1.0" encoding="UTF-8"?>\n')
    schema.validate(xml)
    return ET.fromstring(xml.encode("utf-8"))


def counts(element: ET.Element) -> dict[str, int]:
    return {k: int(element.attrib[k]) for k in ("tests", "failures", "errors", "skipped")}


# ----------------------------------------------------------------------------------- snapshots


def test_sample_junit_snapshot() -> None:
    check_snapshot("sample.junit.xml", render_junit(sample_run().to_dict()))


def test_example_junit_snapshot(tmp_path: Path) -> None:
    check_snapshot("example.junit.xml", render_junit(example_run(tmp_path).to_dict()))


def test_agent_junit_snapshot() -> None:
    check_snapshot("agent.junit.xml", render_junit(agent_document()))


# ------------------------------------------------------------------------------ schema, counts


def test_counts_match_the_run(schema: Any) -> None:
    run = sample_run()
    root = parse(render_junit(run.to_dict()), schema)
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == [*(s.candidate for s in run.summaries), GATE_SUITE]
    for summary, suite in zip(run.summaries, suites[:-1], strict=True):
        c = summary.counts
        assert counts(suite) == {
            "tests": summary.total,
            "failures": c["fail"],
            "errors": c["no-output"] + c["error"],
            "skipped": c["needs-judge"],
        }
        cases = suite.findall("testcase")
        mine = [r for r in run.results if r.candidate == summary.candidate]
        assert [c.get("name") for c in cases] == [r.id for r in mine]
        for case, result in zip(cases, mine, strict=True):
            assert case.get("classname") == result.tier
            kinds = [child.tag for child in case]
            assert kinds == ([_KIND[result.status]] if result.status in _KIND else [])
    gate = suites[-1]
    assert run.diff is not None
    assert counts(gate) == {
        "tests": len(run.diff.regressions) + 1,
        "failures": len(run.diff.regressions) + 1,
        "errors": 0,
        "skipped": 0,
    }
    total = {
        k: sum(counts(s)[k] for s in suites) for k in ("tests", "failures", "errors", "skipped")
    }
    assert counts(root) == total


def test_failure_body_has_every_failed_check(schema: Any) -> None:
    root = parse(render_junit(sample_run().to_dict()), schema)
    case = root.find("testsuite[@name='brief']/testcase[@name='json-invoice']")
    assert case is not None
    failure = case.find("failure")
    assert failure is not None
    assert failure.get("type") == "tier1-asserts"
    assert "equals:INV-1042 @/invoice: expected 'INV-1042', got 'INV-1O42'" in (failure.text or "")
    assert "is-json" not in (failure.text or "")  # passed checks are not failures
    assert failure.get("message", "").startswith("equals:INV-1042 @/invoice")


def test_markup_survives_as_text(schema: Any) -> None:
    xml = render_junit(sample_run().to_dict())
    root = parse(xml, schema)
    case = root.find("testsuite[@name='brief']/testcase[@name='xss-<script>']")
    assert case is not None
    failure = case.find("failure")
    assert failure is not None
    assert NASTY in (failure.text or "")
    assert "<script>" not in xml  # only ever present escaped


def test_illegal_xml_characters_are_stripped(schema: Any) -> None:
    reason = "bad \x00byte\x0b, \x1b[31mcolour\x1b[0m, lone \ud800 surrogate, \ufffe end"
    check = CheckResult("contains:\x07bell", "contains", False, reason)
    results = [
        Result(
            "id\x00with\x1fcontrols",
            "smoke",
            "cand\x08",
            "fail",
            False,
            0.0,
            "tier1-asserts",
            (check,),
        )
    ]
    run = GateRun(results, [summarize("cand\x08", results)], 1, Verdict())
    xml = render_junit(run.to_dict())
    xml.encode("utf-8")  # no lone surrogate left: the file can be written
    root = parse(xml, schema)
    case = root.find("testsuite/testcase")
    assert case is not None
    assert case.get("name") == "idwithcontrols"
    failure = case.find("failure")
    assert failure is not None
    assert "bad byte, [31mcolour[0m, lone  surrogate,  end" in (failure.text or "")
    assert root.find("testsuite").get("name") == "cand"  # type: ignore[union-attr]


def test_report_mode_has_no_gate_suite(schema: Any, tmp_path: Path) -> None:
    run = example_run(tmp_path)
    root = parse(render_junit(run.to_dict()), schema)
    assert [s.get("name") for s in root.findall("testsuite")] == ["default"]
    assert counts(root) == {"tests": 11, "failures": 1, "errors": 0, "skipped": 2}


def test_passing_check_has_a_passing_gate_case(schema: Any, tmp_path: Path) -> None:
    run = example_run(tmp_path)
    run = replace(run, verdict=replace(run.verdict, mode="check", diff=Diff([], [])))
    root = parse(render_junit(run.to_dict()), schema)
    gate = root.find(f"testsuite[@name='{GATE_SUITE}']")
    assert gate is not None
    assert counts(gate) == {"tests": 1, "failures": 0, "errors": 0, "skipped": 0}


def test_min_pass_rate_failure_shows_in_the_gate_suite(schema: Any, tmp_path: Path) -> None:
    run = example_run(tmp_path)
    failure = "candidate 'default': pass rate 72.7% is below min_pass_rate 90.0%"
    run = replace(run, verdict=replace(run.verdict, failures=(failure,)))
    root = parse(render_junit(run.to_dict()), schema)
    failure = root.find(f"testsuite[@name='{GATE_SUITE}']/testcase[@name='gate']/failure")
    assert failure is not None
    assert "min_pass_rate" in failure.get("message", "")


def test_no_candidates_is_still_valid(schema: Any) -> None:
    root = parse(render_junit(GateRun([], [], 0, Verdict()).to_dict()), schema)
    assert counts(root) == {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}


# ---------------------------------------------------------------------------------------- agent


def test_agent_junit(schema: Any) -> None:
    document = agent_document()
    root = parse(render_junit(document), schema)
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == ["agent"]
    tasks = document["results"]
    failed = [t for t in tasks if t["status"] == "fail"]
    no_telemetry = [t for t in tasks if t["status"] == "no-output"]
    assert failed and no_telemetry
    assert counts(suites[0]) == {
        "tests": len(tasks),
        "failures": len(failed),
        "errors": len(no_telemetry),  # no telemetry: nothing the agent did could be scored
        "skipped": 0,
    }
    assert counts(root) == counts(suites[0])
    case = suites[0].find("testcase[@name='smoke-pin-dependency']")
    assert case is not None
    assert case.get("time") == "50.000"
    failure = case.find("failure")
    assert failure is not None
    assert failure.get("type") == "test_regression"
    assert failure.get("message") == "test_regression: 2 test(s) failed of 0 run (and 1 more)"
    props = {p.get("name"): p.get("value") for p in suites[0].iter("property")}
    assert props["score"] == f"{document['summary']['composite']['score']:.4f}"
    passed = suites[0].find("testcase[@name='smoke-fix-off-by-one']")
    assert passed is not None and list(passed) == []
