"""The committed baseline: build, write (atomic, guarded), load, and diff against a run."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pytest

from assay.asserts import CheckResult
from assay.errors import AssayError, BaselineError
from assay.gate import _baseline as baseline
from assay.gate._regressions import Diff
from assay.gate._regressions import diff as regressions_diff
from assay.goldens import Golden, build_goldens
from assay.results import SCHEMA_VERSION, Result, summarize

FOO_OK = CheckResult("contains:foo", "contains", True)
FOO_MISSING = CheckResult("contains:foo", "contains", False, "'foo' not found in the output")


def golden(
    gid: str, tier: str = "smoke", asserts: Sequence[Any] = ("contains:foo",), **extra: Any
) -> Golden:
    data: dict[str, Any] = {"id": gid, "tier": tier, "asserts": list(asserts), **extra}
    return build_goldens(data, source=f"goldens/{gid}.md", default_id=None, folder_tier=None)[0]


def result(
    gid: str,
    status: str = "pass",
    *,
    tier: str = "smoke",
    candidate: str = "default",
    score: float | None = None,
    checks: tuple[CheckResult, ...] | None = None,
    decided_by: str | None = "tier1-asserts",
) -> Result:
    passed = {"pass": True, "fail": False}.get(status)
    if score is None and status in ("pass", "fail"):
        score = 1.0 if status == "pass" else 0.0
    if checks is None:
        checks = {"pass": (FOO_OK,), "fail": (FOO_MISSING,)}.get(status, ())
    if status in ("no-output", "needs-judge", "error"):
        decided_by = None if status == "no-output" else decided_by
    return Result(
        id=gid,
        tier=tier,
        candidate=candidate,
        status=status,  # type: ignore[arg-type]
        passed=passed,
        score=score,
        decided_by=decided_by,
        checks=checks,
    )


def by_id(goldens: Iterable[Golden]) -> dict[str, Golden]:
    return {g.id: g for g in goldens}


def make_doc(results: Sequence[Result], goldens: Iterable[Golden]) -> dict[str, Any]:
    candidates = sorted({r.candidate for r in results})
    summaries = [summarize(c, [r for r in results if r.candidate == c]) for c in candidates]
    document = baseline.build(results, by_id(goldens), summaries)
    # what --check reads back is the JSON on disk
    return json.loads(json.dumps(document))


# --- build ------------------------------------------------------------------------------------


def test_build_document_shape() -> None:
    g1, g2 = golden("g1"), golden("g2", tier="standard")
    results = [result("g1"), result("g2", "fail", tier="standard", score=0.25)]
    summaries = [summarize("default", results)]
    document = baseline.build(results, by_id([g1, g2]), summaries)
    assert next(iter(document)) == "schema_version"
    assert list(document) == ["schema_version", "kind", "assay_version", "summary", "goldens"]
    assert document["schema_version"] == SCHEMA_VERSION == 2
    assert isinstance(document["assay_version"], str)
    assert document["summary"] == {"default": summaries[0].to_dict()}
    assert document["summary"]["default"]["pass_rate"] == 0.5
    entry1 = document["goldens"]["default"]["g1"]
    assert list(entry1) == ["tier", "status", "passed", "score", "decided_by", "fingerprint"]
    assert entry1 == {
        "tier": "smoke",
        "status": "pass",
        "passed": True,
        "score": 1.0,
        "decided_by": "tier1-asserts",
        "fingerprint": baseline.fingerprint(g1),
    }
    entry2 = document["goldens"]["default"]["g2"]
    assert entry2["status"] == "fail"
    assert entry2["passed"] is False
    assert entry2["score"] == 0.25
    assert entry2["tier"] == "standard"


def test_build_groups_by_candidate() -> None:
    g1 = golden("g1")
    results = [result("g1", candidate="a"), result("g1", "fail", candidate="b")]
    document = make_doc(results, [g1])
    assert set(document["goldens"]) == {"a", "b"}
    assert document["goldens"]["a"]["g1"]["passed"] is True
    assert document["goldens"]["b"]["g1"]["passed"] is False
    assert set(document["summary"]) == {"a", "b"}


def test_build_result_without_golden_has_no_fingerprint() -> None:
    document = make_doc([result("ghost")], [])
    assert document["goldens"]["default"]["ghost"]["fingerprint"] is None


def test_build_is_json_serialisable() -> None:
    document = baseline.build([result("g1")], by_id([golden("g1")]), [])
    assert json.loads(json.dumps(document)) == document


# --- fingerprint --------------------------------------------------------------------------------


def test_fingerprint_stable_and_sensitive() -> None:
    base = golden("g1")
    assert baseline.fingerprint(base) == baseline.fingerprint(golden("g1"))
    assert baseline.fingerprint(base).startswith("sha256:")
    # where a golden lives or what it is called does not change what decides it
    assert baseline.fingerprint(base) == baseline.fingerprint(golden("other", tier="stretch"))
    changed = [
        golden("g1", asserts=["contains:bar"]),
        golden("g1", asserts=["not-contains:foo"]),
        golden("g1", asserts=[{"op": "contains", "value": "foo", "path": "/a"}]),
        golden("g1", threshold=0.5),
        golden("g1", expected="x"),
        golden("g1", rubric="be nice"),
    ]
    prints = {baseline.fingerprint(g) for g in changed}
    assert len(prints) == len(changed)
    assert baseline.fingerprint(base) not in prints


# --- decided_count ------------------------------------------------------------------------------


def test_decided_count() -> None:
    results = [
        result("a"),
        result("b", "fail"),
        result("c", "no-output"),
        result("d", "needs-judge", decided_by="tier3-judge"),
        result("e", "error"),
    ]
    assert baseline.decided_count(make_doc(results, [])) == 2
    assert baseline.decided_count({}) == 0


# --- write ----------------------------------------------------------------------------------------


def test_write_then_load_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "ci" / "assay-baseline.json"
    document = make_doc([result("g1"), result("g2", "fail")], [golden("g1"), golden("g2")])
    baseline.write(path, document)
    assert json.loads(path.read_text(encoding="utf-8")) == document
    assert path.read_text(encoding="utf-8").startswith('{\n  "schema_version": 2,')
    assert path.read_text(encoding="utf-8").endswith("\n")
    assert baseline.load_baseline(path) == document
    assert sorted(p.name for p in path.parent.iterdir()) == ["assay-baseline.json"]


def test_write_replaces_decided_with_decided(tmp_path: Path) -> None:
    path = tmp_path / "assay-baseline.json"
    baseline.write(path, make_doc([result("g1")], [golden("g1")]))
    newer = make_doc([result("g1", "fail")], [golden("g1")])
    baseline.write(path, newer)
    assert baseline.load_baseline(path) == newer


def test_write_refuses_to_disarm_the_gate(tmp_path: Path) -> None:
    path = tmp_path / "assay-baseline.json"
    good = make_doc([result("g1"), result("g2", "fail")], [golden("g1"), golden("g2")])
    baseline.write(path, good)
    before = path.read_bytes()
    empty = make_doc([result("g1", "no-output"), result("g2", "no-output")], [])
    with pytest.raises(BaselineError) as excinfo:
        baseline.write(path, empty)
    assert str(path) in str(excinfo.value)
    assert "--force" in str(excinfo.value)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["assay-baseline.json"]


def test_write_refuses_needs_judge_only_and_empty_documents(tmp_path: Path) -> None:
    path = tmp_path / "assay-baseline.json"
    baseline.write(path, make_doc([result("g1")], [golden("g1")]))
    before = path.read_bytes()
    judged = make_doc([result("g1", "needs-judge", decided_by="tier3-judge")], [])
    with pytest.raises(BaselineError):
        baseline.write(path, judged)
    with pytest.raises(BaselineError):
        baseline.write(path, make_doc([], []))
    assert path.read_bytes() == before


def test_write_force_replaces(tmp_path: Path) -> None:
    path = tmp_path / "assay-baseline.json"
    baseline.write(path, make_doc([result("g1")], [golden("g1")]))
    empty = make_doc([result("g1", "no-output")], [])
    baseline.write(path, empty, force=True)
    assert baseline.load_baseline(path) == empty


def test_write_undecided_without_previous_baseline(tmp_path: Path) -> None:
    path = tmp_path / "assay-baseline.json"
    empty = make_doc([result("g1", "no-output")], [])
    baseline.write(path, empty)
    assert baseline.load_baseline(path) == empty


def test_write_undecided_over_undecided_or_garbage(tmp_path: Path) -> None:
    path = tmp_path / "assay-baseline.json"
    empty = make_doc([result("g1", "no-output")], [])
    baseline.write(path, empty)
    baseline.write(path, empty)
    path.write_text("not json", encoding="utf-8")
    baseline.write(path, empty)
    assert baseline.load_baseline(path) == empty


def test_write_is_atomic_when_replace_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "assay-baseline.json"
    baseline.write(path, make_doc([result("g1")], [golden("g1")]))
    before = path.read_bytes()

    def boom(src: Any, dst: Any) -> None:
        raise OSError("disk on fire")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(BaselineError, match="disk on fire"):
        baseline.write(path, make_doc([result("g1", "fail")], [golden("g1")]))
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["assay-baseline.json"]


# --- load -----------------------------------------------------------------------------------------


def test_load_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "assay-baseline.json"
    with pytest.raises(BaselineError) as excinfo:
        baseline.load_baseline(path)
    assert str(path) in str(excinfo.value)
    assert "--write-baseline" in str(excinfo.value)


@pytest.mark.parametrize("version", [3, 0, "1", None, True])
def test_load_unknown_schema_version(tmp_path: Path, version: Any) -> None:
    path = tmp_path / "b.json"
    path.write_text(json.dumps({"schema_version": version, "goldens": {}}), encoding="utf-8")
    with pytest.raises(BaselineError) as excinfo:
        baseline.load_baseline(path)
    assert excinfo.value.field == "schema_version"
    assert str(path) in str(excinfo.value)


def test_load_without_schema_version(tmp_path: Path) -> None:
    path = tmp_path / "b.json"
    path.write_text(json.dumps({"goldens": {}}), encoding="utf-8")
    with pytest.raises(BaselineError) as excinfo:
        baseline.load_baseline(path)
    assert excinfo.value.field == "schema_version"


def test_load_invalid_json(tmp_path: Path) -> None:
    path = tmp_path / "b.json"
    path.write_text('{"schema_version": 2, ', encoding="utf-8")
    with pytest.raises(BaselineError) as excinfo:
        baseline.load_baseline(path)
    assert str(path) in str(excinfo.value)
    assert "JSON" in str(excinfo.value)


def test_load_not_an_object(tmp_path: Path) -> None:
    path = tmp_path / "b.json"
    path.write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(BaselineError) as excinfo:
        baseline.load_baseline(path)
    assert str(path) in str(excinfo.value)


@pytest.mark.parametrize(
    "goldens",
    [None, [], {"default": []}, {"default": {"g1": "pass"}}],
)
def test_load_bad_goldens_shape(tmp_path: Path, goldens: Any) -> None:
    path = tmp_path / "b.json"
    document: dict[str, Any] = {"schema_version": 2}
    if goldens is not None:
        document["goldens"] = goldens
    path.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(BaselineError) as excinfo:
        baseline.load_baseline(path)
    assert excinfo.value.field == "goldens"
    assert str(path) in str(excinfo.value)


def test_load_non_utf8(tmp_path: Path) -> None:
    path = tmp_path / "b.json"
    path.write_bytes(b'{"schema_version": 2, "goldens": {}, "x": "caf\xe9"}')
    with pytest.raises(BaselineError) as excinfo:
        baseline.load_baseline(path)
    assert str(path) in str(excinfo.value)


def test_load_folder(tmp_path: Path) -> None:
    folder = tmp_path / "b.json"
    folder.mkdir()
    with pytest.raises(BaselineError) as excinfo:
        baseline.load_baseline(folder)
    assert str(folder) in str(excinfo.value)


def test_baseline_error_is_assay_error() -> None:
    assert issubclass(BaselineError, AssayError)


# --- diff -----------------------------------------------------------------------------------------


def exact_diff(
    document: dict[str, Any],
    results: Sequence[Result],
    goldens: dict[str, Golden],
    tiers: Iterable[str] | None = None,
) -> Diff:
    """The gate's comparison of a run of deterministic outcomes with a baseline of the same
    suite (the exact rule: no random evidence)."""
    return regressions_diff(
        document,
        results,
        {},
        selected=goldens,
        whole_suite=True,
        tiers=tiers,
        changed=baseline.changed_goldens(document, goldens),
    )


def test_diff_identical_run_is_clean() -> None:
    goldens = [golden("g1"), golden("g2")]
    results = [result("g1"), result("g2", "fail")]
    out = exact_diff(make_doc(results, goldens), results, by_id(goldens))
    assert out.regressions == []
    assert out.notes == []


def test_diff_pass_to_fail_names_golden_and_assert() -> None:
    goldens = [golden("g1"), golden("g2")]
    document = make_doc([result("g1"), result("g2")], goldens)
    now = [result("g1", "fail"), result("g2")]
    out = exact_diff(document, now, by_id(goldens))
    assert [r.id for r in out.regressions] == ["g1"]
    regression = out.regressions[0]
    assert regression.candidate == "default"
    assert "fail" in regression.why
    assert "contains:foo" in regression.why
    assert "'foo' not found in the output" in regression.why
    assert regression.to_dict() == {"id": "g1", "candidate": "default", "why": regression.why}


def test_diff_many_failed_asserts_are_summarised() -> None:
    checks = tuple(
        CheckResult(f"contains:w{i}", "contains", False, f"w{i} missing") for i in range(5)
    )
    g1 = golden("g1", asserts=[f"contains:w{i}" for i in range(5)])
    document = make_doc([result("g1")], [g1])
    out = exact_diff(document, [result("g1", "fail", checks=checks)], by_id([g1]))
    [regression] = out.regressions
    assert "contains:w0" in regression.why
    assert "contains:w2" in regression.why
    assert "and 2 more" in regression.why


@pytest.mark.parametrize("status", ["no-output", "needs-judge"])
def test_diff_pass_to_undecided_is_regression(status: str) -> None:
    goldens = [golden("g1")]
    document = make_doc([result("g1")], goldens)
    now = [result("g1", status, decided_by="tier3-judge")]
    out = exact_diff(document, now, by_id(goldens))
    assert [(r.candidate, r.id) for r in out.regressions] == [("default", "g1")]
    assert status in out.regressions[0].why


def test_diff_pass_to_error_is_no_regression() -> None:
    # A failed call says nothing about quality: the gate counts errors (exit 1 beyond
    # max_error_rate), it never reports them as regressions.
    goldens = [golden("g1")]
    document = make_doc([result("g1")], goldens)
    out = exact_diff(document, [result("g1", "error", decided_by=None)], by_id(goldens))
    assert out.regressions == []


def test_diff_pass_to_missing_from_suite_is_regression() -> None:
    goldens = [golden("g1"), golden("gone")]
    document = make_doc([result("g1"), result("gone")], goldens)
    now_goldens = [golden("g1")]
    out = exact_diff(document, [result("g1")], by_id(now_goldens))
    assert [r.id for r in out.regressions] == ["gone"]
    assert "missing from the suite" in out.regressions[0].why


def test_diff_pass_to_no_result_for_candidate_is_regression() -> None:
    goldens = [golden("g1")]
    document = make_doc([result("g1", candidate="a"), result("g1", candidate="b")], goldens)
    out = exact_diff(document, [result("g1", candidate="a")], by_id(goldens))
    assert [(r.candidate, r.id) for r in out.regressions] == [("b", "g1")]


def test_diff_fail_missing_now_is_not_regression() -> None:
    goldens = [golden("g1"), golden("old")]
    document = make_doc([result("g1"), result("old", "fail")], goldens)
    out = exact_diff(document, [result("g1")], by_id([golden("g1")]))
    assert out.regressions == []


def test_diff_score_drop_while_failing_is_regression() -> None:
    goldens = [golden("g1", asserts=[])]
    document = make_doc([result("g1", "fail", score=0.9, checks=())], goldens)
    now = [result("g1", "fail", score=0.5, checks=())]
    out = exact_diff(document, now, by_id(goldens))
    [regression] = out.regressions
    assert regression.id == "g1"
    assert "0.900" in regression.why
    assert "0.500" in regression.why
    assert "score" in regression.why


def test_diff_score_drop_while_passing_is_regression() -> None:
    goldens = [golden("g1", asserts=[])]
    document = make_doc([result("g1", score=0.95, checks=(), decided_by="tier2-difflib")], goldens)
    now = [result("g1", score=0.85, checks=(), decided_by="tier2-difflib")]
    out = exact_diff(document, now, by_id(goldens))
    assert [r.id for r in out.regressions] == ["g1"]


def test_diff_equal_or_higher_score_is_not_regression() -> None:
    goldens = [golden("a", asserts=[]), golden("b", asserts=[])]
    document = make_doc(
        [result("a", "fail", score=0.5, checks=()), result("b", "fail", score=0.3, checks=())],
        goldens,
    )
    now = [
        result("a", "fail", score=0.5, checks=()),
        result("b", "fail", score=0.7, checks=()),
    ]
    out = exact_diff(document, now, by_id(goldens))
    assert out.regressions == []


def test_diff_fail_to_pass_is_a_note() -> None:
    goldens = [golden("g1")]
    document = make_doc([result("g1", "fail")], goldens)
    out = exact_diff(document, [result("g1")], by_id(goldens))
    assert out.regressions == []
    assert len(out.notes) == 1
    assert "default/g1" in out.notes[0]
    assert "pass" in out.notes[0]


def test_diff_new_golden_is_a_note() -> None:
    goldens = [golden("g1"), golden("brand-new")]
    document = make_doc([result("g1")], [golden("g1")])
    now = [result("g1"), result("brand-new", "fail")]
    out = exact_diff(document, now, by_id(goldens))
    assert out.regressions == []
    assert len(out.notes) == 1
    assert "brand-new" in out.notes[0]
    assert "g1" not in out.notes[0]


def test_diff_tier_filter_excludes_unselected_tiers() -> None:
    smoke, stretch = golden("quick", tier="smoke"), golden("hard", tier="stretch")
    document = make_doc([result("quick"), result("hard", tier="stretch")], [smoke, stretch])
    # a run with --tier smoke: only the smoke goldens are loaded and scored
    now = [result("quick")]
    filtered = exact_diff(document, now, by_id([smoke]), tiers=["smoke"])
    assert filtered.regressions == []
    unfiltered = exact_diff(document, now, by_id([smoke]))
    assert [r.id for r in unfiltered.regressions] == ["hard"]


def test_diff_tier_filter_still_checks_selected_tiers() -> None:
    smoke, stretch = golden("quick", tier="smoke"), golden("hard", tier="stretch")
    document = make_doc([result("quick"), result("hard", tier="stretch")], [smoke, stretch])
    now = [result("quick", "fail")]
    out = exact_diff(document, now, by_id([smoke]), tiers=["smoke"])
    assert [r.id for r in out.regressions] == ["quick"]


def test_diff_fingerprint_change_is_a_note() -> None:
    before = golden("g1", asserts=["contains:foo"])
    after = golden("g1", asserts=["contains:bar"])
    document = make_doc([result("g1")], [before])
    out = exact_diff(document, [result("g1")], by_id([after]))
    assert out.regressions == []
    assert len(out.notes) == 1
    assert "default/g1" in out.notes[0]
    assert "changed" in out.notes[0]


def test_diff_regressions_sorted_by_candidate_then_id() -> None:
    goldens = [golden("a"), golden("b")]
    base_results = [result(g, candidate=c) for c in ("y", "x") for g in ("b", "a")]
    document = make_doc(base_results, goldens)
    now = [result(g, "fail", candidate=c) for c in ("y", "x") for g in ("b", "a")]
    out = exact_diff(document, now, by_id(goldens))
    assert [(r.candidate, r.id) for r in out.regressions] == [
        ("x", "a"),
        ("x", "b"),
        ("y", "a"),
        ("y", "b"),
    ]


def test_diff_reads_loaded_baseline(tmp_path: Path) -> None:
    goldens = [golden("g1"), golden("g2")]
    path = tmp_path / "assay-baseline.json"
    baseline.write(path, make_doc([result("g1"), result("g2")], goldens))
    document = baseline.load_baseline(path)
    out = exact_diff(document, [result("g1"), result("g2", "no-output")], by_id(goldens))
    assert [r.id for r in out.regressions] == ["g2"]


def test_a_schema_1_baseline_is_refused_with_the_fix(tmp_path: Path) -> None:
    path = tmp_path / "b.json"
    path.write_text(json.dumps({"schema_version": 1, "goldens": {}}), encoding="utf-8")
    with pytest.raises(BaselineError) as excinfo:
        baseline.load_baseline(path)
    assert excinfo.value.field == "schema_version"
    assert "write it again with --write-baseline" in str(excinfo.value)
    assert str(path) in str(excinfo.value)


def test_a_check_refuses_the_other_kind_of_baseline() -> None:
    with pytest.raises(BaselineError, match="written by an agent run, not a goldens gate run"):
        baseline.check_kind({"kind": "agent"}, "gate", "b.json")
    with pytest.raises(BaselineError, match="written by a goldens gate run, not an agent run"):
        baseline.check_kind({}, "agent", "b.json")
    baseline.check_kind({}, "gate", "b.json")
