"""A folder holding task.md is an executable agent task: task.md is its golden, and nothing else
in it (the fixture repository with its own markdown, the reference solution) is read as one."""

from __future__ import annotations

from pathlib import Path

from assay.goldens import discover, iter_goldens
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
    assert discover(tmp_path) == [
        tmp_path / "smoke" / "fix" / "task.md",
        tmp_path / "standard" / "plain.md",
    ]
    goldens = {g.id: g for g in iter_goldens(tmp_path)}
    assert sorted(goldens) == ["plain", "t-fix"]
    assert goldens["t-fix"].tier == "smoke"  # the tier folder is the task folder's parent
    assert goldens["t-fix"].source == str(folder / "task.md")


def test_a_task_folder_given_as_the_path_is_that_one_task(tmp_path: Path) -> None:
    folder = make_task(tmp_path)
    assert [g.id for g in iter_goldens(folder)] == ["t-fix"]
