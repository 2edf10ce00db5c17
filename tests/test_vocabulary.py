"""assay.vocabulary and docs/vocabulary.md: one name per meaning, the same in code and docs, and
every retired name listed there with what to use instead (and no longer reachable)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import assay
import assay.results
from assay import vocabulary
from assay.results import CandidateSummary, Result

DOC = (Path(__file__).resolve().parents[1] / "docs" / "vocabulary.md").read_text(encoding="utf-8")


def glossary_row(name: str) -> str:
    (row,) = [line for line in DOC.splitlines() if line.startswith(f"| **{name}** |")]
    return row


def test_the_value_sets() -> None:
    assert vocabulary.STATUSES == ("pass", "fail", "needs-judge", "no-output", "error")
    assert vocabulary.TIERS == ("smoke", "standard", "stretch", "adversarial")
    assert vocabulary.DEFAULT_AGENT_TIERS == ("smoke", "standard", "stretch")
    assert set(vocabulary.FAILING_STATUSES) == {"fail", "error", "no-output"}
    assert vocabulary.tier2("rapidfuzz") == "tier2-rapidfuzz"


@pytest.mark.parametrize("status", vocabulary.STATUSES)
def test_every_status_is_defined_in_the_glossary(status: str) -> None:
    assert f"`{status}`" in glossary_row("status")


@pytest.mark.parametrize(
    "decider",
    [vocabulary.TIER1, vocabulary.TIER3, vocabulary.AGENT_TELEMETRY, vocabulary.SCORER],
)
def test_every_decider_is_defined_in_the_glossary(decider: str) -> None:
    assert f"`{decider}`" in glossary_row("decided_by")


def test_agent_results_and_api_items_use_the_documented_deciders() -> None:
    from assay.agent import AGENT

    assert AGENT == "agent"
    assert "`agent`" in glossary_row("candidate")
    assert vocabulary.AGENT_TELEMETRY == "agent-telemetry"
    assert vocabulary.SCORER == "scorer"


def test_the_result_fields_are_the_documented_ones() -> None:
    row = glossary_row("result")
    for name in Result.__dataclass_fields__:
        assert f"`{name}`" in row, name


def test_the_candidate_summary_fields_are_the_documented_ones() -> None:
    documented = re.search(r"\{(candidate, total[^}]*)\}", glossary_row("candidate summary"))
    assert documented is not None
    fields = [f.strip() for f in documented.group(1).split(",")]
    assert fields == [f for f in CandidateSummary.__dataclass_fields__ if f != "results"]


# What went: (old, what to use), each named in the doc's list of retired names, none reachable.
RETIRED_CLASSES = [
    ("CandidateScore", "CandidateSummary"),
    ("ItemScore", "Result"),
    ("AgentVerdict", "Verdict"),
]
RETIRED_ATTRIBUTES = [
    ("CandidateSummary", "candidate_id", "candidate"),
    ("CandidateSummary", "items", "results"),
    ("CandidateSummary", "item_count", "total"),
    ("CandidateSummary", "scorer_count", "total"),
    ("Result", "item_id", "id"),
    ("Result", "evidence", "checks"),
]


@pytest.mark.parametrize(("old", "new"), RETIRED_CLASSES)
def test_retired_classes_are_gone_and_the_doc_names_them(old: str, new: str) -> None:
    assert f"`{old}`" in DOC and f"`{new}`" in DOC
    assert not hasattr(assay, old)
    assert not hasattr(assay.results, old)


@pytest.mark.parametrize(("cls", "old", "new"), RETIRED_ATTRIBUTES)
def test_retired_attributes_are_gone_and_the_doc_names_them(cls: str, old: str, new: str) -> None:
    assert old in DOC and f"`{cls}.{new}" in DOC
    check = assay.CheckResult("scorer", "scorer", True, None, {"e": 1})
    result = Result("i", None, "c", "pass", True, 1.0, "scorer", (check,))
    summary = CandidateSummary("c", 1, {"pass": 1}, 1.0, 1.0, (result,))
    obj = summary if cls == "CandidateSummary" else result
    assert not hasattr(obj, old)
    assert hasattr(obj, new)


def test_the_retired_command_is_named_with_its_successors() -> None:
    assert "`assay run`" in DOC
    for successor in ("`assay gate`", "`assay eval`", "`assay bench`"):
        assert successor in DOC
