"""The failure taxonomy: one category per failed task, first match wins, all from telemetry.

Order: test_regression, timeout, scope_creep, conflict, hallucination, orientation_miss,
incomplete, context_miss.
"""

from __future__ import annotations

from typing import Any

import pytest

from assay.agent import CATEGORIES, Telemetry, failures_table, owned, parse_record, score_tasks
from assay.agent import run_document as make_document
from assay.goldens import Golden, build_goldens

# ------------------------------------------------------------------------------------ helpers

TASK_FIELDS: dict[str, Any] = {
    "max_duration_s": 100,
    "max_cost_usd": 1.0,
    "owned_files": ["src/**", "tests/**"],
    "expected_files_modified": ["src/a.py", "tests/test_a.py"],
    "completion_signals": ["a works", "the suite passes"],
    "asserts": ["contains:ok"],
}

# Everything right: this telemetry passes the task.
GOOD: dict[str, Any] = {
    "duration_s": 50,
    "files_modified": ["src/a.py"],
    "completion_signals_checked": 2,
    "completion_signals_passed": 2,
    "output": "ok",
}

# The final output fails its assert: the task fails, whatever else is true.
BAD_OUTPUT: dict[str, Any] = {"output": "nope"}


def golden(task_id: str = "t", **fields: Any) -> Golden:
    return build_goldens(
        {"id": task_id, "tier": "smoke", **fields},
        source=f"goldens/{task_id}.md",
        default_id=None,
        folder_tier=None,
    )[0]


def record(task_id: str = "t", **fields: Any) -> Telemetry:
    return parse_record({"task_id": task_id, **fields}, f"telemetry/{task_id}.json")


def failure(task: Golden, tel: dict[str, Any] | None) -> tuple[str, str] | None:
    records = {} if tel is None else {task.id: record(task.id, **tel)}
    (res,) = score_tasks([task], records).tasks
    assert res.passed is (res.failure is None)
    return res.failure


def category(tel: dict[str, Any] | None, **fields: Any) -> str | None:
    found = failure(golden(**{**TASK_FIELDS, **fields}), tel)
    return None if found is None else found[0]


# ------------------------------------------------------------------------------ the categories


def test_the_closed_set_in_precedence_order() -> None:
    assert CATEGORIES == (
        "test_regression",
        "timeout",
        "over_budget",
        "scope_creep",
        "conflict",
        "hallucination",
        "orientation_miss",
        "incomplete",
        "context_miss",
    )


def test_good_telemetry_passes() -> None:
    assert category(GOOD) is None


@pytest.mark.parametrize(
    ("tel", "expected"),
    [
        ({"tests_failed": 2, "tests_run": 9}, "test_regression"),
        ({"duration_s": 100.5, **BAD_OUTPUT}, "timeout"),
        ({"files_modified": ["src/a.py", "docs/guide.md"], **BAD_OUTPUT}, "scope_creep"),
        ({"merge_conflicts": 1, **BAD_OUTPUT}, "conflict"),
        ({"compile_error": True, **BAD_OUTPUT}, "hallucination"),
        ({"files_modified": ["src/b.py"], **BAD_OUTPUT}, "orientation_miss"),
        ({"files_modified": [], **BAD_OUTPUT}, "orientation_miss"),
        ({"completion_signals_checked": 0, "completion_signals_passed": 0}, "incomplete"),
        ({"completion_signals_checked": 2, "completion_signals_passed": 1}, "incomplete"),
        ({"completion_signals_checked": 3, "completion_signals_passed": 2}, "incomplete"),
        (BAD_OUTPUT, "context_miss"),
    ],
)
def test_each_category_from_telemetry(tel: dict[str, Any], expected: str) -> None:
    assert category({**GOOD, **tel}) == expected


def test_no_telemetry_is_incomplete() -> None:
    assert failure(golden(**TASK_FIELDS), None) == ("incomplete", "no telemetry for this task")


def test_every_category_is_reachable() -> None:
    seen = {
        category({**GOOD, "tests_failed": 1}),
        category({**GOOD, "duration_s": 101, **BAD_OUTPUT}),
        category({**GOOD, "cost_usd": 2.0}),
        category({**GOOD, "files_modified": ["setup.py"], **BAD_OUTPUT}),
        category({**GOOD, "merge_conflicts": 3, **BAD_OUTPUT}),
        category({**GOOD, "compile_error": True, **BAD_OUTPUT}),
        category({**GOOD, "files_modified": ["tests/other.py"], **BAD_OUTPUT}),
        category({**GOOD, "completion_signals_checked": 0}),
        category({**GOOD, **BAD_OUTPUT}),
    }
    assert seen == set(CATEGORIES)


def test_timeout_is_strictly_greater_than_the_limit() -> None:
    # exactly at the limit is not a timeout: the next rule (context_miss) decides
    assert category({**GOOD, "duration_s": 100, **BAD_OUTPUT}) == "context_miss"
    assert category({**GOOD, "duration_s": 100.01, **BAD_OUTPUT}) == "timeout"


def test_timeout_needs_a_declared_limit() -> None:
    fields = {k: v for k, v in TASK_FIELDS.items() if k != "max_duration_s"}
    task = golden(**fields)
    assert failure(task, {**GOOD, "duration_s": 1e6, **BAD_OUTPUT})[0] == "context_miss"


def test_scope_creep_needs_owned_files() -> None:
    fields = {k: v for k, v in TASK_FIELDS.items() if k != "owned_files"}
    found = failure(golden(**fields), {**GOOD, "files_modified": ["src/a.py", "/etc/passwd"]})
    # no owned_files: nothing is out of scope, and the task passes
    assert found is None
    found = failure(
        golden(**fields), {**GOOD, "files_modified": ["src/a.py", "/etc/passwd"], **BAD_OUTPUT}
    )
    assert found is not None and found[0] == "context_miss"


def test_orientation_miss_needs_expected_files() -> None:
    fields = {k: v for k, v in TASK_FIELDS.items() if k != "expected_files_modified"}
    found = failure(golden(**fields), {**GOOD, "files_modified": [], **BAD_OUTPUT})
    assert found is not None and found[0] == "context_miss"


def test_orientation_one_expected_file_is_enough() -> None:
    # tests/test_a.py is expected; src/a.py is not touched: not an orientation miss
    tel = {**GOOD, "files_modified": ["tests/test_a.py"], **BAD_OUTPUT}
    assert category(tel) == "context_miss"


def test_orientation_matches_normalised_paths() -> None:
    tel = {**GOOD, "files_modified": ["./src/a.py"], **BAD_OUTPUT}
    assert category(tel) == "context_miss"


def test_incomplete_requires_declared_signals_to_be_checked() -> None:
    # No signals declared: nothing checked is fine (the task passes) ...
    assert category({**GOOD, "completion_signals_checked": 0}, completion_signals=[]) is None
    # ... and when it fails, the output assert decides.
    found = category(
        {**GOOD, "completion_signals_checked": 0, "completion_signals_passed": 0, **BAD_OUTPUT},
        completion_signals=[],
    )
    assert found == "context_miss"


def test_incomplete_when_signals_checked_but_not_all_passed_even_undeclared() -> None:
    # The issue: "incomplete (signals checked but not all passed, or no telemetry, or declared
    # signals none checked)" -- only the last clause depends on the task declaring signals.
    # Task without completion_signals, failing its output assert; 1 of 3 signals passed.
    tel = {**GOOD, "completion_signals_checked": 3, "completion_signals_passed": 1, **BAD_OUTPUT}
    assert category(tel, completion_signals=[]) == "incomplete"


# ------------------------------------------------------------------------- first match wins


@pytest.mark.parametrize(
    ("tel", "expected"),
    [
        # tests_failed beats everything else at once
        (
            {
                "tests_failed": 1,
                "duration_s": 500,
                "files_modified": ["docs/x.md"],
                "merge_conflicts": 1,
                "compile_error": True,
                "completion_signals_checked": 0,
                **BAD_OUTPUT,
            },
            "test_regression",
        ),
        ({"tests_failed": 1, "duration_s": 500}, "test_regression"),
        ({"duration_s": 500, "files_modified": ["docs/x.md"], **BAD_OUTPUT}, "timeout"),
        ({"files_modified": ["docs/x.md"], "merge_conflicts": 2, **BAD_OUTPUT}, "scope_creep"),
        ({"merge_conflicts": 2, "compile_error": True, **BAD_OUTPUT}, "conflict"),
        ({"compile_error": True, "files_modified": ["src/z.py"], **BAD_OUTPUT}, "hallucination"),
        (
            {"files_modified": ["src/z.py"], "completion_signals_checked": 0, **BAD_OUTPUT},
            "orientation_miss",
        ),
        (
            {"completion_signals_checked": 2, "completion_signals_passed": 0, **BAD_OUTPUT},
            "incomplete",
        ),
    ],
)
def test_first_match_wins(tel: dict[str, Any], expected: str) -> None:
    assert category({**GOOD, **tel}) == expected


# ------------------------------------------------------------------------------------ details


def test_details_describe_the_failure() -> None:
    def details(tel: dict[str, Any]) -> str:
        found = failure(golden(**TASK_FIELDS), {**GOOD, **tel})
        assert found is not None
        return found[1]

    assert details({"tests_failed": 2, "tests_run": 9}) == "2 test(s) failed of 9 run"
    assert details({"duration_s": 150, **BAD_OUTPUT}) == "took 150 s, limit 100 s"
    assert "docs/guide.md" in details(
        {"files_modified": ["src/a.py", "docs/guide.md"], **BAD_OUTPUT}
    )
    assert details({"merge_conflicts": 3, **BAD_OUTPUT}) == "3 merge conflict(s)"
    assert details({"compile_error": True, **BAD_OUTPUT}) == "the change did not compile"
    assert details({"files_modified": ["src/z.py"], **BAD_OUTPUT}) == (
        "modified none of the 2 expected file(s)"
    )
    assert details({"completion_signals_checked": 0}) == "no completion signal was checked"
    assert details({"completion_signals_checked": 2, "completion_signals_passed": 1}) == (
        "1 of 2 completion signal(s) passed"
    )
    assert details(BAD_OUTPUT) == "1 assert(s) on the final output failed"


def test_failures_table_counts_each_category() -> None:
    tasks = [
        golden("reg", **TASK_FIELDS),
        golden("slow", **TASK_FIELDS),
        golden("lost", **TASK_FIELDS),
        golden("ok", **TASK_FIELDS),
        golden("gone", **TASK_FIELDS),
    ]
    records = {
        "reg": record("reg", **{**GOOD, "tests_failed": 1}),
        "slow": record("slow", **{**GOOD, "duration_s": 1000, **BAD_OUTPUT}),
        "lost": record("lost", **{**GOOD, **BAD_OUTPUT}),
        "ok": record("ok", **GOOD),
    }
    run = score_tasks(tasks, records)
    table = failures_table(make_document(run, {}))
    assert [(r["id"], r["category"]) for r in table["failures"]] == [
        ("reg", "test_regression"),
        ("slow", "timeout"),
        ("lost", "context_miss"),
        ("gone", "incomplete"),
    ]
    assert table["counts"] == {
        "test_regression": 1,
        "timeout": 1,
        "over_budget": 0,
        "scope_creep": 0,
        "conflict": 0,
        "hallucination": 0,
        "orientation_miss": 0,
        "incomplete": 1,
        "context_miss": 1,
    }


# ---------------------------------------------------------------------- owned_files globs


@pytest.mark.parametrize(
    ("path", "globs", "expected"),
    [
        # ** spans folders
        ("src/a.py", ["src/**"], True),
        ("src/pkg/sub/deep.py", ["src/**"], True),
        ("tests/test_x.py", ["tests/**"], True),
        ("tests/unit/test_x.py", ["tests/**"], True),
        ("src/tests/test_x.py", ["tests/**"], False),
        ("srcfile.py", ["src/**"], False),
        ("docs/a.md", ["src/**", "tests/**"], False),
        # * stays within one segment
        ("README.md", ["*.md"], True),
        ("docs/a.md", ["*.md"], False),
        ("src/a.py", ["src/*.py"], True),
        ("src/a/b.py", ["src/*.py"], False),
        # **/ matches zero or more folders
        ("a.md", ["**/*.md"], True),
        ("docs/a.md", ["**/*.md"], True),
        ("docs/deep/a.md", ["**/*.md"], True),
        ("docs/a.txt", ["**/*.md"], False),
        ("src/test_a.py", ["src/**/test_*.py"], True),
        ("src/x/y/test_a.py", ["src/**/test_*.py"], True),
        ("src/x/y/a_test.py", ["src/**/test_*.py"], False),
        # ? is one character, not a slash
        ("src/a1.py", ["src/a?.py"], True),
        ("src/a12.py", ["src/a?.py"], False),
        ("src/a/.py", ["src/a?.py"], False),
        # literal names: the dot is a dot, the whole path must match
        ("README.md", ["README.md"], True),
        ("READMEXmd", ["README.md"], False),
        ("docs/README.md", ["README.md"], False),
        ("README.md.bak", ["README.md"], False),
        ("requirements.txt", ["requirements.txt"], True),
        # ./ and backslashes are normalised on both sides
        ("./src/a.py", ["src/**"], True),
        ("src\\pkg\\a.py", ["src/**"], True),
        ("src/a.py", ["./src/**"], True),
        # any of several globs
        ("tests/t.py", ["src/pages.py", "tests/**"], True),
        ("src/pages.py", ["src/pages.py", "tests/**"], True),
        ("src/other.py", ["src/pages.py", "tests/**"], False),
        ("anything", [], False),
    ],
)
def test_owned_globs(path: str, globs: list[str], expected: bool) -> None:
    assert owned(path, globs) is expected


def test_nested_file_under_src_glob_is_not_scope_creep() -> None:
    tel = {**GOOD, "files_modified": ["src/a.py", "src/deep/er/x.py", "tests/u/t.py"], **BAD_OUTPUT}
    assert category(tel) == "context_miss"


def test_markdown_in_a_folder_is_scope_creep_for_a_top_level_md_glob() -> None:
    tel = {**GOOD, "files_modified": ["README.md", "docs/a.md"], **BAD_OUTPUT}
    found = failure(
        golden(
            **{**TASK_FIELDS, "owned_files": ["*.md"], "expected_files_modified": ["README.md"]}
        ),
        tel,
    )
    assert found is not None
    assert found[0] == "scope_creep"
    assert "docs/a.md" in found[1]
    assert "README.md" not in found[1].replace("docs/a.md", "")


def test_scope_creep_lists_at_most_three_files() -> None:
    outside = ["a.txt", "b.txt", "c.txt", "d.txt", "e.txt"]
    found = failure(golden(**TASK_FIELDS), {**GOOD, "files_modified": outside, **BAD_OUTPUT})
    assert found == ("scope_creep", "modified outside owned_files: a.txt, b.txt, c.txt and 2 more")
