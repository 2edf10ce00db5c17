"""A damaged output cache, through the command line.

A run against a damaged cache (garbage bytes, a truncated file, a folder in its place) stops
before any call with one line naming the file and saying that ``assay cache clear`` resets it;
it is not reset behind the user's back. ``assay cache clear`` always recovers: it deletes the
damaged database and SQLite's files beside it, says what it removed, and exits 0. A cache write
that fails (disk full) is one line and leaves the entries already stored intact.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from assay.models import _cache
from tests.helpers.cli import run_cli

GOLDENS = '{"id": "g1", "input": "hello", "asserts": ["contains:hello"]}\n'
CACHE = Path(".assay") / "cache" / "outputs.sqlite"


def project(tmp_path: Path, prompt: str = "{{ input }}") -> list[str]:
    (tmp_path / "goldens.jsonl").write_text(GOLDENS, encoding="utf-8")
    (tmp_path / "cands.yaml").write_text(
        f"provider: {{type: echo}}\ncandidates:\n  - {{id: a, prompt: '{prompt}'}}\n",
        encoding="utf-8",
    )
    return ["eval", "goldens.jsonl", "--candidates", "cands.yaml", "--json"]


def cached_rows(tmp_path: Path) -> int:
    with sqlite3.connect(tmp_path / CACHE) as db:
        return int(db.execute("SELECT COUNT(*) FROM outputs").fetchone()[0])


def one_error_line(err: str, path: Path, *needles: str) -> str:
    """No traceback, and stderr is one error line naming ``path`` (and every needle)."""
    assert "Traceback" not in err
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"assay: error: {path}: "), err
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


def fill_cache(tmp_path: Path) -> list[str]:
    args = project(tmp_path)
    code, _, err = run_cli(args, tmp_path)
    assert (code, err) == (0, "")
    # Fold the write-ahead log into the file, so damaging the file damages the data.
    with sqlite3.connect(tmp_path / CACHE) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return args


def damage(tmp_path: Path, how: str) -> None:
    path = tmp_path / CACHE
    if how == "garbage":
        path.write_bytes(b"this is not a database\x00\xff" * 400)
        path.with_name(path.name + "-wal").write_bytes(b"\xde\xad" * 2000)
        path.with_name(path.name + "-shm").write_bytes(b"\xbe\xef" * 2000)
    elif how == "truncated":
        with path.open("r+b") as handle:
            handle.truncate(100)
    elif how == "folder":
        for side in path.parent.iterdir():
            side.unlink()
        path.mkdir()
    else:
        raise AssertionError(how)


@pytest.mark.parametrize("how", ["garbage", "truncated", "folder"])
def test_a_damaged_cache_is_one_line_saying_how_to_reset_it(tmp_path: Path, how: str) -> None:
    args = fill_cache(tmp_path)
    damage(tmp_path, how)
    code, out, err = run_cli([*args, "--output", "report.json"], tmp_path)
    assert (code, out) == (1, "")
    one_error_line(err, tmp_path / CACHE, "`assay cache clear` resets it", "--no-cache")
    assert not (tmp_path / "report.json").exists()
    # --no-cache still runs without touching it.
    code, _, err = run_cli([*args, "--no-cache"], tmp_path)
    assert (code, err) == (0, "")


@pytest.mark.parametrize("how", ["garbage", "truncated", "folder"])
def test_cache_clear_always_recovers_a_damaged_cache(tmp_path: Path, how: str) -> None:
    args = fill_cache(tmp_path)
    damage(tmp_path, how)
    code, out, err = run_cli(["cache", "clear"], tmp_path)
    assert "Traceback" not in err
    assert (code, err) == (0, "")
    assert "outputs.sqlite" in out and "deleted" in out
    if how == "garbage":
        assert "outputs.sqlite-wal" in out and "outputs.sqlite-shm" in out
    assert list((tmp_path / CACHE).parent.iterdir()) == []
    # A run works again, and fills a fresh cache.
    code, _, err = run_cli(args, tmp_path)
    assert (code, err) == (0, "")
    assert cached_rows(tmp_path) == 1


def test_cache_clear_leaves_a_folder_with_files_where_the_cache_should_be(
    tmp_path: Path,
) -> None:
    (tmp_path / CACHE).mkdir(parents=True)
    (tmp_path / CACHE / "keep.txt").write_text("someone's", encoding="utf-8")
    code, out, err = run_cli(["cache", "clear"], tmp_path)
    assert (code, out) == (1, "")
    one_error_line(err, tmp_path / CACHE, "a folder with files in it", "move it away")
    assert (tmp_path / CACHE / "keep.txt").read_text(encoding="utf-8") == "someone's"


def test_a_garbage_write_ahead_log_is_ignored_by_runs_and_cleared(tmp_path: Path) -> None:
    args = fill_cache(tmp_path)
    wal = (tmp_path / CACHE).with_name("outputs.sqlite-wal")
    wal.write_bytes(b"\x00garbage" * 1000)
    code, _, err = run_cli(args, tmp_path)
    assert (code, err) == (0, "")
    code, out, err = run_cli(["cache", "clear"], tmp_path)
    assert (code, err) == (0, "")
    assert "removed 1 cached output(s)" in out


def test_a_full_disk_on_a_cache_write_is_one_line_and_keeps_the_stored_entries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fill_cache(tmp_path)
    prepare = _cache._prepare

    def full_disk(db: sqlite3.Connection) -> None:
        prepare(db)
        # SQLite's own "database or disk is full": no page can be added any more.
        pages = db.execute("PRAGMA page_count").fetchone()[0]
        db.execute(f"PRAGMA max_page_count = {pages}")

    monkeypatch.setattr(_cache, "_prepare", full_disk)
    # A new, long prompt: a cache miss whose output needs pages the file cannot grow by.
    args = project(tmp_path, "{{ input }} " + "padding " * 2000)
    code, out, err = run_cli(args, tmp_path)
    assert (code, out) == (1, "")
    one_error_line(
        err, tmp_path / CACHE, "cannot write the cache: database or disk is full", "free some space"
    )
    monkeypatch.undo()
    assert cached_rows(tmp_path) == 1
    code, _, err = run_cli(project(tmp_path), tmp_path)  # the first entry reads back
    assert (code, err) == (0, "")
