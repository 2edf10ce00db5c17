"""File errors through the command line: exit 1 and exactly one stderr line naming the path, never
a traceback, never a write through a special file, and a BOM accepted in every input."""

from __future__ import annotations

import builtins
import errno
import json
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from assay import io
from assay.cli import main

GOLDEN = "---\nid: g\ninput: q\nasserts: ['contains:a']\n---\n## Origin\nWritten for this test.\n"
PROC = Path("/proc/self").is_dir()

Run = Callable[..., tuple[int, str, str]]


@pytest.fixture
def run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Run:
    """``run(*args)`` → (exit code, stdout, stderr) of ``assay *args`` in-process, in tmp_path."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    monkeypatch.delenv("ASSAY_KEY_FILE", raising=False)
    (tmp_path / "goldens").mkdir()
    (tmp_path / "goldens" / "g.md").write_text(GOLDEN, encoding="utf-8")
    (tmp_path / "out.json").write_text(json.dumps({"g": "a"}), encoding="utf-8")

    def invoke(*args: str | os.PathLike[str]) -> tuple[int, str, str]:
        capsys.readouterr()
        with pytest.raises(SystemExit) as info:
            main([str(a) for a in args])
        out, err = capsys.readouterr()
        code = info.value.code
        return code if isinstance(code, int) else 1, out, err

    return invoke


def gate(*extra: str | os.PathLike[str]) -> list[str | os.PathLike[str]]:
    return ["gate", "goldens", "--outputs", "out.json", *extra]


def one_error(result: tuple[int, str, str], path: str | os.PathLike[str], *needles: str) -> str:
    """Exit 1, no traceback, and stderr is one line naming ``path`` (and every needle)."""
    code, out, err = result
    assert code == 1, f"exit {code}\nstdout:\n{out}\nstderr:\n{err}"
    assert "Traceback" not in err + out
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"assay: error: {path}: "), err
    for needle in needles:
        assert needle in lines[0], f"{needle!r} not in {lines[0]!r}"
    return lines[0]


def is_char_device(path: Path) -> bool:
    return stat.S_ISCHR(os.lstat(path).st_mode)


def disk_full(*args: Any, **kwargs: Any) -> Any:
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


# ------------------------------------------------------------------------------ --output


def test_the_sample_project_passes(run: Run, tmp_path: Path) -> None:
    code, _, err = run(*gate("--output", "report.txt"))
    # The report went to the file; stderr gets only where it went and the verdict.
    assert code == 0
    assert err.startswith("assay: report written to report.txt\n")
    assert "error" not in err.replace("0 error", "")
    assert (tmp_path / "report.txt").is_file()


@pytest.mark.skipif(not PROC, reason="Linux /proc only")
def test_output_into_proc(run: Run) -> None:
    one_error(run(*gate("--output", "/proc/x")), "/proc/x", "cannot write: ")


def test_output_a_folder(run: Run, tmp_path: Path) -> None:
    (tmp_path / "reports").mkdir()
    one_error(
        run(*gate("--output", "reports")),
        "reports",
        "not a regular file: refusing to replace it (it is a folder)",
    )
    assert (tmp_path / "reports").is_dir()
    assert list((tmp_path / "reports").iterdir()) == []


def test_output_a_device_node_is_left_a_device_node(run: Run, tmp_path: Path) -> None:
    node = tmp_path / "null"
    try:
        os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    except (PermissionError, AttributeError):
        node = Path("/dev/null")  # not written through either way: only its kind is checked
        if not node.exists() or not is_char_device(node):
            pytest.skip("no device node to test with")
    one_error(run(*gate("--output", node)), node, "it is a character device")
    assert is_char_device(node)


def test_output_under_a_file(run: Run, tmp_path: Path) -> None:
    one_error(run(*gate("--output", "out.json/report.txt")), "out.json/report.txt", "directory")
    assert json.loads((tmp_path / "out.json").read_text(encoding="utf-8")) == {"g": "a"}


def test_output_a_dangling_symlink(run: Run, tmp_path: Path) -> None:
    (tmp_path / "report.txt").symlink_to(tmp_path / "nowhere" / "r.txt")
    one_error(run(*gate("--output", "report.txt")), "report.txt", "symlink to a missing file")
    assert not (tmp_path / "nowhere").exists()


def test_output_through_a_symlink_writes_its_target(run: Run, tmp_path: Path) -> None:
    (tmp_path / "real.txt").write_text("old", encoding="utf-8")
    (tmp_path / "report.txt").symlink_to("real.txt")
    code, _, err = run(*gate("--output", "report.txt"))
    assert code == 0
    assert err.startswith("assay: report written to report.txt\n")
    assert (tmp_path / "report.txt").is_symlink()
    assert "g" in (tmp_path / "real.txt").read_text(encoding="utf-8")


def test_output_on_a_full_disk_keeps_the_old_report(
    run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "report.txt").write_text("old report", encoding="utf-8")
    monkeypatch.setattr(os, "fsync", disk_full)
    one_error(run(*gate("--output", "report.txt")), "report.txt", "No space left on device")
    assert (tmp_path / "report.txt").read_text(encoding="utf-8") == "old report"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["goldens", "out.json", "report.txt"]


# ----------------------------------------------------------------------------- baselines


@pytest.mark.skipif(not PROC, reason="Linux /proc only")
def test_write_baseline_into_proc(run: Run) -> None:
    one_error(
        run(*gate("--write-baseline", "--baseline", "/proc/b.json")),
        "/proc/b.json",
        "cannot write: ",
    )


def test_write_baseline_over_a_folder(run: Run, tmp_path: Path) -> None:
    (tmp_path / "b.json").mkdir()
    one_error(run(*gate("--write-baseline", "--baseline", "b.json")), "b.json", "a folder")
    assert (tmp_path / "b.json").is_dir()


def test_check_against_a_folder(run: Run, tmp_path: Path) -> None:
    (tmp_path / "b.json").mkdir()
    one_error(run(*gate("--check", "--baseline", "b.json")), "b.json", "is a folder, not a file")


def test_a_baseline_with_a_bom_is_read(run: Run, tmp_path: Path) -> None:
    assert run(*gate("--write-baseline", "--baseline", "b.json"))[0] == 0
    path = tmp_path / "b.json"
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    code, _, err = run(*gate("--check", "--baseline", "b.json"))
    assert (code, err) == (0, "")


# ------------------------------------------------------------------------------ --outputs


def test_outputs_a_folder(run: Run, tmp_path: Path) -> None:
    (tmp_path / "outs").mkdir()
    one_error(run("gate", "goldens", "--outputs", "outs"), "outs", "is a folder, not a file")


@pytest.mark.skipif(not PROC, reason="Linux /proc only")
def test_outputs_unreadable_at_read_time(run: Run) -> None:
    # /proc/self/mem opens, then reading offset 0 fails: a real read error, even for root.
    mem = "/proc/self/mem"
    one_error(run("gate", "goldens", "--outputs", mem), mem, "cannot read: Input/output error")


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a mode-000 file anyway")
def test_outputs_without_read_permission(run: Run, tmp_path: Path) -> None:
    (tmp_path / "out.json").chmod(0)
    one_error(run(*gate()), "out.json", "cannot read: Permission denied")


def test_outputs_permission_denied_at_open(run: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    real_open = open

    def guarded(file: Any, *args: Any, **kwargs: Any) -> Any:
        if str(file) == "out.json":
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(io, "open", guarded, raising=False)
    one_error(run(*gate()), "out.json", "cannot read: Permission denied")


def test_an_unreadable_golden(run: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    real_open = open
    golden = os.path.join("goldens", "g.md")

    real_os_open = os.open

    def refuse(file: Any) -> None:
        if str(file) == golden:
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(file))

    def guarded(file: Any, *args: Any, **kwargs: Any) -> Any:
        refuse(file)
        return real_open(file, *args, **kwargs)

    def guarded_os(file: Any, *args: Any, **kwargs: Any) -> Any:
        refuse(file)
        return real_os_open(file, *args, **kwargs)

    # The loader reads a golden with os.open (three system calls) and falls back to
    # assay.io.read_bytes, which opens it again to name the failure: refuse both. Running as
    # root, chmod 000 would not stop the read.
    monkeypatch.setattr(os, "open", guarded_os)
    monkeypatch.setattr(io, "open", guarded, raising=False)
    monkeypatch.setattr(builtins, "open", guarded)
    one_error(run(*gate()), golden, "cannot read: Permission denied")


# ----------------------------------------------------------------------------- telemetry

SMOKE_TASK = "smoke-fix-readme-typo"  # a packaged smoke task (--packaged: the project has one)


@pytest.mark.parametrize("layout", ["folder", "jsonl"])
def test_a_bom_in_a_telemetry_file_is_accepted(run: Run, tmp_path: Path, layout: str) -> None:
    record = json.dumps({"task_id": SMOKE_TASK, "turns_used": 2}).encode("utf-8")
    if layout == "folder":
        (tmp_path / "tel").mkdir()
        (tmp_path / "tel" / f"{SMOKE_TASK}.json").write_bytes(b"\xef\xbb\xbf" + record)
        where = "tel"
    else:
        (tmp_path / "tel.jsonl").write_bytes(b"\xef\xbb\xbf" + record + b"\n")
        where = "tel.jsonl"
    args = ("--tier", "smoke", "--packaged", "--json", "--no-save")
    code, out, err = run("bench", "--telemetry", where, *args)
    assert (code, err) == (0, "")
    assert SMOKE_TASK in [r["id"] for r in json.loads(out)["results"]]


def test_bad_utf8_in_a_telemetry_file_names_it(run: Run, tmp_path: Path) -> None:
    (tmp_path / "tel").mkdir()
    path = Path("tel") / f"{SMOKE_TASK}.json"
    (tmp_path / path).write_bytes(b'{"task_id": "\xff"}')
    one_error(
        run("bench", "--telemetry", "tel", "--tier", "smoke", "--packaged", "--no-save"),
        path,
        "not valid UTF-8 (bad byte at offset 13)",
    )


# ------------------------------------------------------------------------- other commands


@pytest.mark.skipif(not PROC, reason="Linux /proc only")
def test_init_into_proc(run: Run) -> None:
    one_error(run("init", "/proc/x"), "/proc/x/assay.toml", "cannot write: ")


def test_cache_clear_of_a_cache_that_is_an_empty_folder_removes_it(
    run: Run, tmp_path: Path
) -> None:
    # More cases (garbage, truncated, a folder with files) in tests/models/test_cache_recovery.py.
    cache = tmp_path / ".assay" / "cache" / "outputs.sqlite"
    cache.mkdir(parents=True)
    code, out, err = run("cache", "clear")
    assert (code, err) == (0, "")
    assert out == f"a folder, not a cache file: deleted outputs.sqlite from {cache.parent}\n"
    assert not cache.exists()


def test_attest_keygen_on_a_full_disk_leaves_no_key(
    run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = tmp_path / "keys" / "attest.key"
    monkeypatch.setattr(os, "fsync", disk_full)
    one_error(run("attest", "keygen", "--key-file", key), key, "No space left on device")
    assert not key.exists()


def test_a_step_summary_that_cannot_be_written_warns_and_keeps_the_exit_code(
    run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "summary").mkdir()
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "summary"))
    code, _, err = run(*gate("--output", "report.txt"))
    assert code == 0
    warnings = [line for line in err.splitlines() if line.startswith("assay: warning")]
    assert warnings == [
        f"assay: warning: GITHUB_STEP_SUMMARY: {tmp_path / 'summary'}: not a regular file: "
        "refusing to write to it (it is a folder)"
    ]
