"""A folder holding task.md is an executable agent task: task.md is its golden, and nothing else
in it (the fixture repository with its own markdown, the reference solution) is read as one."""

from __future__ import annotations

from pathlib import Path

from assay.goldens import iter_goldens
from tests.helpers.goldens import ORIGIN, write_golden

TASK = "id: t-fix\ntitle: Fix it\ninput: Fix the bug.\n"


def make_task(root: Path) -> Path:
    folder = root / "smoke" / "fix"
    write_golden(folder, "task.md", TASK, ORIGIN)
    (folder / "repo" / "docs").mkdir(parents=True)
    (folder / "repo" / "docs" / "guide.md").write_text("# not a golden\n", encoding="utf-8")
    (folder / "repo" / "notes.md").write_text("no frontmatter here\n", encoding="utf-8")
    (folder / "solution.sh").write_text("true\n", encoding="utf-8")
    write_golden(root / "standard", "plain.md", "id: plain\ninput: q\nasserts: [is-json]\n", ORIGIN)
    return folder


def test_only_task_md_of_a_task_folder_is_a_golden(tmp_path: Path) -> None:
    folder = make_task(tmp_path)
    loaded = list(iter_goldens(tmp_path))
    assert [g.source for g in loaded] == [
        str(tmp_path / "smoke" / "fix" / "task.md"),
        str(tmp_path / "standard" / "plain.md"),
    ]
    goldens = {g.id: g for g in loaded}
    assert sorted(goldens) == ["plain", "t-fix"]
    assert goldens["t-fix"].tier == "smoke"  # the tier folder is the task folder's parent
    assert goldens["t-fix"].source == str(folder / "task.md")


def test_a_task_folder_given_as_the_path_is_that_one_task(tmp_path: Path) -> None:
    folder = make_task(tmp_path)
    assert [g.id for g in iter_goldens(folder)] == ["t-fix"]


def test_completion_signals_are_prose_or_commands(tmp_path: Path) -> None:
    import pytest

    from assay.errors import GoldenError
    from assay.goldens import build_goldens

    ok = {"id": "t", "completion_signals": ["prose", {"name": "no typo", "run": "! grep x f"}]}
    [golden] = build_goldens(
        {**ok, "verify": "pytest -q"}, source="t.md", default_id=None, folder_tier=None
    )
    assert golden.fields["verify"] == "pytest -q"
    for bad, field in [
        ({"name": "n"}, "completion_signals[0]"),
        ({"name": "n", "run": "x", "extra": 1}, "completion_signals[0]"),
        ({"name": "", "run": "x"}, "completion_signals[0].name"),
        (3, "completion_signals[0]"),
    ]:
        with pytest.raises(GoldenError) as info:
            build_goldens(
                {"id": "t", "completion_signals": [bad]},
                source="t.md",
                default_id=None,
                folder_tier=None,
            )
        assert info.value.field == field
    with pytest.raises(GoldenError) as info:
        build_goldens({"id": "t", "verify": 3}, source="t.md", default_id=None, folder_tier=None)
    assert info.value.field == "verify"


def test_a_command_signals_name_is_ground_truth_but_not_its_run_or_the_solution(
    tmp_path: Path,
) -> None:
    """The solution is the fix a correct agent writes (protected by its path, in the goldens
    folder); a signal's ``run`` is a test command agents are expected to run."""
    from assay.attest._truth import ground_truth

    folder = make_task(tmp_path)
    (folder / "solution.sh").write_text("sed -i s/recieve/receive/ README.md\n", encoding="utf-8")
    frontmatter = (
        TASK + "completion_signals:\n  - {name: fixed, run: '! grep -q recieve README.md'}\n"
    )
    write_golden(folder, "task.md", frontmatter, ORIGIN)
    [task] = [g for g in iter_goldens(tmp_path) if g.id == "t-fix"]
    truth = ground_truth(task)
    assert "fixed" in truth
    assert not any("sed -i" in t or "grep -q" in t for t in truth)


def test_what_the_agent_is_given_is_not_committed(tmp_path: Path) -> None:
    """A shingle the instruction or the fixture holds is no secret: not committed."""
    from assay.attest._scan import build_truth
    from assay.attest._truth import given_texts

    folder = make_task(tmp_path)
    (folder / "repo" / "notes.md").write_text("the answer is forty two point five\n")
    write_golden(folder, "task.md", TASK + "rubric: the answer is forty two point five\n", ORIGIN)
    [task] = [g for g in iter_goldens(tmp_path) if g.id == "t-fix"]
    key = b"k" * 32
    texts = ["the answer is forty two point five", "a secret only the golden holds here"]
    assert len(build_truth(key, texts).shingles) == 4
    kept = build_truth(key, texts, given=given_texts(task, folder / "repo"))
    assert sorted(kept.shingles) == [
        "a secret only the golden holds",
        "secret only the golden holds here",
    ]
