import pytest

from src.cli import main


@pytest.fixture
def source(tmp_path):
    folder = tmp_path / "source"
    (folder / "docs").mkdir(parents=True)
    (folder / "a.txt").write_text("a", encoding="utf-8")
    (folder / "docs" / "b.txt").write_text("b", encoding="utf-8")
    return folder


def test_sync_copies_and_reports_progress(source, tmp_path, capsys):
    dest = tmp_path / "dest"
    assert main(["sync", str(source), str(dest)]) == 0
    assert (dest / "docs" / "b.txt").read_text(encoding="utf-8") == "b"
    out = capsys.readouterr().out.splitlines()
    assert out == ["copied a.txt", "copied docs/b.txt", "synced 2 file(s)"]


def test_sync_skips_up_to_date_files(source, tmp_path, capsys):
    dest = tmp_path / "dest"
    main(["sync", str(source), str(dest)])
    capsys.readouterr()
    assert main(["sync", str(source), str(dest)]) == 0
    assert capsys.readouterr().out == "synced 0 file(s)\n"


def test_missing_source_is_an_error_on_stderr(tmp_path, capsys):
    assert main(["sync", str(tmp_path / "nope"), str(tmp_path / "dest")]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "source not found" in captured.err


def test_sync_quiet_prints_nothing_on_success(source, tmp_path, capsys):
    dest = tmp_path / "dest"
    assert main(["sync", "--quiet", str(source), str(dest)]) == 0
    assert (dest / "a.txt").exists()
    assert capsys.readouterr() == ("", "")
