"""``assay tasks list`` and ``show``: the project's tasks and the packaged ones, with paths a user
can open; an unknown id is one error line."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.cli import run_cli
from tests.helpers.goldens import ORIGIN, write_golden

TASK = "id: my-task\ntitle: My task\ninput: Do it.\nverify: python -m pytest -q\n"


def test_list_shows_project_and_packaged_tasks(tmp_path: Path) -> None:
    folder = tmp_path / "goldens" / "smoke" / "mine"
    write_golden(folder, "task.md", TASK, ORIGIN)
    (folder / "repo").mkdir()
    write_golden(
        tmp_path / "goldens" / "smoke", "plain.md", "id: plain\ninput: q\nasserts: [is-json]\n"
    )
    code, out, err = run_cli(["tasks", "list"], tmp_path)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].split()[:2] == ["my-task", "smoke"]
    assert lines[0].endswith(f"({Path('goldens', 'smoke', 'mine')})")
    assert not any(line.startswith("plain ") for line in lines)  # not a task
    assert any(line.startswith("smoke-fix-off-by-one ") and "packaged: " in line for line in lines)
    code, out, _ = run_cli(["tasks", "list", "--tier", "standard"], tmp_path)
    assert code == 0
    assert all(line.split()[1] == "standard" for line in out.splitlines())
    assert len(out.splitlines()) == 5


def test_show_prints_one_task(tmp_path: Path) -> None:
    folder = tmp_path / "goldens" / "smoke" / "mine"
    write_golden(folder, "task.md", TASK, ORIGIN)
    code, out, err = run_cli(["tasks", "show", "my-task"], tmp_path)
    assert code == 0, err
    assert out.splitlines()[:4] == [
        "my-task: My task",
        "  tier: smoke",
        f"  path: {Path('goldens', 'smoke', 'mine')}",
        "  instruction: Do it.",
    ]
    assert "  verify: python -m pytest -q" in out
    assert "  repo: missing" in out


def test_show_an_unknown_id_is_one_error_line(tmp_path: Path) -> None:
    code, out, err = run_cli(["tasks", "show", "nope"], tmp_path)
    assert (code, out) == (1, "")
    assert err.startswith("assay: error: field 'task': no task 'nope' (tasks include ")
    assert len(err.splitlines()) == 1
