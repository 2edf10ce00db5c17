"""assay.io, the one I/O module: one BOM policy, one error shape, atomic writes that never write
through a special file, and every call site reading through it."""

from __future__ import annotations

import errno
import json
import os
import socket
import stat
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from assay import io
from assay.errors import AssayError, BaselineError, GoldenError, OutputsError, TelemetryError
from assay.results import SCHEMA_VERSION

BOM = b"\xef\xbb\xbf"


def names(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def boom(*args: Any, **kwargs: Any) -> None:
    raise OSError("simulated failure")


def disk_full(*args: Any, **kwargs: Any) -> Any:
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def one_line(exc: BaseException) -> str:
    text = str(exc)
    assert "\n" not in text, text
    return text


@pytest.fixture
def device(tmp_path: Path) -> Path:
    """A character device node like /dev/null (1, 3), made in tmp_path (root only)."""
    path = tmp_path / "null"
    try:
        os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    except (PermissionError, AttributeError):
        pytest.skip("cannot create a device node here")
    return path


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "pipe"
    os.mkfifo(path)
    return path


@pytest.fixture
def unix_socket(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "s"
    if len(str(path)) > 100:  # AF_UNIX paths are limited to about 108 bytes
        pytest.skip("tmp_path too long for a unix socket")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(path))
    yield path
    sock.close()


def is_char_device(path: Path) -> bool:
    return stat.S_ISCHR(os.lstat(path).st_mode)


# ============================================================================== reading


READERS: dict[str, Callable[[Path], Any]] = {
    "read_text": lambda p: io.read_text(p, GoldenError),
    "read_json": lambda p: io.read_json(p, GoldenError),
    "iter_jsonl_objects": lambda p: list(io.iter_jsonl_objects(p, GoldenError)),
    "read_bytes": lambda p: io.read_bytes(p, GoldenError),
}


@pytest.mark.parametrize(
    ("reader", "body", "expected"),
    [
        ("read_text", "café\n", "café\n"),
        ("read_json", '{"a": "é"}', {"a": "é"}),
        ("iter_jsonl_objects", '{"a": 1}\n\n{"b": 2}\n', [("F:1", {"a": 1}), ("F:3", {"b": 2})]),
    ],
)
def test_a_leading_bom_is_dropped_by_every_text_reader(
    tmp_path: Path, reader: str, body: str, expected: Any
) -> None:
    path = tmp_path / "doc"
    path.write_bytes(BOM + body.encode("utf-8"))
    got = READERS[reader](path)
    if reader == "iter_jsonl_objects":
        expected = [(source.replace("F", str(path)), obj) for source, obj in expected]
    assert got == expected


def test_read_bytes_keeps_the_bom_for_parsers_that_decode_themselves(tmp_path: Path) -> None:
    path = tmp_path / "x.toml"
    path.write_bytes(BOM + b"a = 1\n")
    data = io.read_bytes(path, GoldenError)
    assert data == BOM + b"a = 1\n"
    assert io.decode_utf8(data, str(path), GoldenError) == "a = 1\n"


def test_a_bom_inside_a_jsonl_file_is_data_not_tolerated(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_bytes(b'{"a": 1}\n' + BOM + b'{"b": 2}\n')
    with pytest.raises(GoldenError) as info:
        list(io.iter_jsonl_objects(path, GoldenError))
    assert one_line(info.value).startswith(f"{path}:2: invalid JSON")


@pytest.mark.parametrize("reader", ["read_text", "read_json", "iter_jsonl_objects", "read_bytes"])
def test_a_missing_file_names_the_path(tmp_path: Path, reader: str) -> None:
    path = tmp_path / "nope.json"
    with pytest.raises(GoldenError) as info:
        READERS[reader](path)
    assert one_line(info.value) == f"{path}: file not found"


def test_the_caller_says_what_a_missing_file_means(tmp_path: Path) -> None:
    path = tmp_path / "out.json"
    with pytest.raises(OutputsError) as info:
        io.read_json(path, OutputsError, missing="outputs file not found (run your model)")
    assert str(info.value) == f"{path}: outputs file not found (run your model)"


@pytest.mark.parametrize("reader", ["read_text", "read_json", "iter_jsonl_objects", "read_bytes"])
def test_a_folder_where_a_file_is_expected_says_so(tmp_path: Path, reader: str) -> None:
    with pytest.raises(GoldenError) as info:
        READERS[reader](tmp_path)
    assert one_line(info.value) == f"{tmp_path}: is a folder, not a file"


def test_a_path_through_a_file_gives_the_os_reason(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x", encoding="utf-8")
    path = tmp_path / "file" / "inner.md"
    with pytest.raises(GoldenError) as info:
        io.read_text(path, GoldenError)
    assert one_line(info.value) == f"{path}: cannot read: Not a directory"


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a mode-000 file anyway")
def test_a_permission_denied_file_gives_the_os_reason(tmp_path: Path) -> None:
    path = tmp_path / "secret.md"
    path.write_text("x", encoding="utf-8")
    path.chmod(0)
    with pytest.raises(GoldenError) as info:
        io.read_text(path, GoldenError)
    assert one_line(info.value) == f"{path}: cannot read: Permission denied"


def test_a_permission_denied_open_gives_the_os_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As root a mode-000 file is readable: simulate the refusal at open().
    path = tmp_path / "goldens" / "x.md"

    def denied(file: Any, *args: Any, **kwargs: Any) -> Any:
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(file))

    monkeypatch.setattr(io, "open", denied, raising=False)
    with pytest.raises(GoldenError) as info:
        io.read_text(path, GoldenError)
    assert one_line(info.value) == f"{path}: cannot read: Permission denied"


PROC_MEM = Path("/proc/self/mem")  # opens, then reading offset 0 fails with EIO


@pytest.mark.skipif(not PROC_MEM.exists(), reason="Linux /proc only")
@pytest.mark.parametrize("reader", ["read_text", "iter_jsonl_objects"])
def test_an_error_while_reading_gives_the_os_reason(reader: str) -> None:
    with pytest.raises(GoldenError) as info:
        READERS[reader](PROC_MEM)
    assert one_line(info.value) == f"{PROC_MEM}: cannot read: Input/output error"


def test_reads_accept_a_pipe(fifo: Path) -> None:
    writer = threading.Thread(target=lambda: fifo.write_bytes(BOM + b'{"from": "pipe"}'))
    writer.start()
    try:
        assert io.read_json(fifo, OutputsError) == {"from": "pipe"}
    finally:
        writer.join(timeout=5)


def test_bad_utf8_names_the_byte_offset_in_the_file_bom_included(tmp_path: Path) -> None:
    path = tmp_path / "g.md"
    path.write_bytes(BOM + b"ab\xff")
    with pytest.raises(GoldenError) as info:
        io.read_text(path, GoldenError)
    assert one_line(info.value) == f"{path}: not valid UTF-8 (bad byte at offset 5)"


def test_bad_utf8_in_jsonl_names_the_line_and_the_file_offset(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_bytes(b'{"a": 1}\n{"b": "\xff"}\n')
    with pytest.raises(TelemetryError) as info:
        list(io.iter_jsonl_objects(path, TelemetryError))
    assert one_line(info.value) == f"{path}:2: not valid UTF-8 (bad byte at offset 16)"


def test_invalid_json_names_the_file_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "b.json"
    path.write_text('{\n  "a": 1,\n}', encoding="utf-8")
    with pytest.raises(BaselineError) as info:
        io.read_json(path, BaselineError)
    message = one_line(info.value)
    assert message.startswith(f"{path}: invalid JSON: ")
    assert "line 3 column 1" in message


def test_json_nested_too_deeply_is_an_error_not_a_crash(tmp_path: Path) -> None:
    path = tmp_path / "deep.json"
    path.write_text("[" * 200_000 + "]" * 200_000, encoding="utf-8")
    with pytest.raises(OutputsError) as info:
        io.read_json(path, OutputsError)
    assert one_line(info.value) == f"{path}: invalid JSON: nested too deeply"


def test_jsonl_lines_must_be_objects(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text('{"a": 1}\n[1]\n', encoding="utf-8")
    with pytest.raises(GoldenError) as info:
        list(io.iter_jsonl_objects(path, GoldenError))
    assert str(info.value) == f"{path}:2: each line must be a JSON object"


def test_jsonl_is_streamed_line_by_line(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text('{"a": 1}\nnot json\n', encoding="utf-8")
    rows = io.iter_jsonl_objects(path, GoldenError)
    assert next(rows) == (f"{path}:1", {"a": 1})  # the bad line 2 is not read yet
    with pytest.raises(GoldenError, match=":2: invalid JSON"):
        next(rows)


# ============================================================================== writing

# --- atomic_write_text: the basics ---------------------------------------------------------


def test_write_creates_file(tmp_path: Path) -> None:
    path = tmp_path / "out.json"
    io.atomic_write_text(path, "hello\n")
    assert path.read_text(encoding="utf-8") == "hello\n"
    assert names(tmp_path) == ["out.json"]


def test_write_replaces_content(tmp_path: Path) -> None:
    path = tmp_path / "out.txt"
    path.write_text("old content that is longer than the new one\n", encoding="utf-8")
    io.atomic_write_text(path, "new\n")
    assert path.read_text(encoding="utf-8") == "new\n"
    assert names(tmp_path) == ["out.txt"]


def test_write_many_times_leaves_no_temp_files(tmp_path: Path) -> None:
    path = tmp_path / "out.txt"
    for i in range(20):
        io.atomic_write_text(path, f"version {i}\n")
    assert path.read_text(encoding="utf-8") == "version 19\n"
    assert names(tmp_path) == ["out.txt"]


def test_write_creates_parent_folders(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "c.txt"
    io.atomic_write_text(path, "deep")
    assert path.read_text(encoding="utf-8") == "deep"
    assert names(path.parent) == ["c.txt"]


def test_write_accepts_str_path(tmp_path: Path) -> None:
    path = tmp_path / "s.txt"
    io.atomic_write_text(str(path), "ok")
    assert path.read_text(encoding="utf-8") == "ok"


def test_write_is_utf8_and_keeps_newlines(tmp_path: Path) -> None:
    path = tmp_path / "u.txt"
    text = "café ✓ 日本\nline2\r\nline3"
    io.atomic_write_text(path, text)
    assert path.read_bytes() == text.encode("utf-8")


def test_write_empty_text(tmp_path: Path) -> None:
    path = tmp_path / "empty.txt"
    path.write_text("something", encoding="utf-8")
    io.atomic_write_text(path, "")
    assert path.read_bytes() == b""


def test_write_large_text(tmp_path: Path) -> None:
    path = tmp_path / "big.txt"
    text = "x" * (5 * 1024 * 1024) + "end"
    io.atomic_write_text(path, text)
    assert path.read_text(encoding="utf-8") == text


def test_write_a_255_byte_name(tmp_path: Path) -> None:
    path = tmp_path / ("n" * 255)
    io.atomic_write_text(path, "ok")  # the temp name beside it must still fit
    assert path.read_text(encoding="utf-8") == "ok"


def test_write_gives_the_usual_mode(tmp_path: Path) -> None:
    path = tmp_path / "m.txt"
    io.atomic_write_text(path, "x")
    mask = os.umask(0)
    os.umask(mask)
    assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~mask


# --- atomic_write_text: failures keep the old file and leave no temp file -------------------


@pytest.mark.parametrize("where", ["write", "fsync", "replace"])
def test_disk_full_keeps_the_old_file_and_names_the_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    path = tmp_path / "state.json"
    path.write_text('{"old": true}\n', encoding="utf-8")
    monkeypatch.setattr(os, where, disk_full)
    with pytest.raises(BaselineError) as info:
        io.atomic_write_text(path, '{"new": true}\n', BaselineError)
    assert one_line(info.value) == f"{path}: cannot write: No space left on device"
    assert path.read_text(encoding="utf-8") == '{"old": true}\n'
    assert names(tmp_path) == ["state.json"]


def test_a_failure_after_a_partial_write_leaves_no_temp_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "state.json"
    path.write_text("old\n", encoding="utf-8")
    real_write = os.write
    calls: list[int] = []

    def half_then_full(fd: int, data: Any) -> int:
        calls.append(fd)
        if len(calls) > 1:
            disk_full()
        return real_write(fd, bytes(data[:2]))

    monkeypatch.setattr(os, "write", half_then_full)
    with pytest.raises(AssayError, match="No space left on device"):
        io.atomic_write_text(path, "new content\n")
    assert len(calls) == 2  # a short write is continued, not taken for the whole
    assert path.read_text(encoding="utf-8") == "old\n"
    assert names(tmp_path) == ["state.json"]


def test_write_failure_at_rename_keeps_old_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "state.json"
    path.write_text('{"old": true}\n', encoding="utf-8")
    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(AssayError, match="simulated failure"):
        io.atomic_write_text(path, '{"new": true}\n')
    assert path.read_text(encoding="utf-8") == '{"old": true}\n'
    assert names(tmp_path) == ["state.json"]


def test_write_failure_when_no_old_file_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "state.json"
    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(AssayError):
        io.atomic_write_text(path, "new\n")
    assert names(tmp_path) == []


def test_write_interrupted_keeps_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "state.json"
    path.write_text("old\n", encoding="utf-8")

    def interrupt(*args: Any, **kwargs: Any) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", interrupt)
    with pytest.raises(KeyboardInterrupt):
        io.atomic_write_text(path, "new\n")
    assert path.read_text(encoding="utf-8") == "old\n"
    assert names(tmp_path) == ["state.json"]


def test_write_unencodable_text_keeps_old_file(tmp_path: Path) -> None:
    path = tmp_path / "state.txt"
    path.write_text("old\n", encoding="utf-8")
    with pytest.raises(UnicodeEncodeError):
        io.atomic_write_text(path, "lone surrogate \udc80")
    assert path.read_text(encoding="utf-8") == "old\n"
    assert names(tmp_path) == ["state.txt"]


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="Linux /proc only")
@pytest.mark.parametrize("target", ["/proc/x", "/proc/assay-test/b.json"])
def test_a_proc_target_is_one_error_naming_it(target: str) -> None:
    with pytest.raises(AssayError) as info:
        io.atomic_write_text(Path(target), "x")
    assert one_line(info.value).startswith(f"{target}: cannot write: ")
    assert not Path(target).exists()


def test_a_file_in_the_way_of_the_folder_is_not_a_directory(tmp_path: Path) -> None:
    (tmp_path / "out").write_text("a file", encoding="utf-8")
    path = tmp_path / "out" / "sub" / "r.json"
    with pytest.raises(AssayError) as info:
        io.atomic_write_text(path, "x")
    assert one_line(info.value) == f"{path}: cannot write: Not a directory"
    assert (tmp_path / "out").read_text(encoding="utf-8") == "a file"


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only folder anyway")
def test_a_read_only_folder_gives_the_os_reason(tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    (folder / "r.json").write_text("old", encoding="utf-8")
    folder.chmod(0o555)
    try:
        with pytest.raises(AssayError) as info:
            io.atomic_write_text(folder / "r.json", "new")
    finally:
        folder.chmod(0o755)
    assert one_line(info.value) == f"{folder / 'r.json'}: cannot write: Permission denied"
    assert names(folder) == ["r.json"]


# --- never through a special file ------------------------------------------------------------


def test_a_folder_target_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "report"
    target.mkdir()
    with pytest.raises(AssayError) as info:
        io.atomic_write_text(target, "x")
    assert one_line(info.value) == (
        f"{target}: not a regular file: refusing to replace it (it is a folder)"
    )
    assert target.is_dir()
    assert names(tmp_path) == ["report"]


def test_a_fifo_target_is_refused_without_blocking(tmp_path: Path, fifo: Path) -> None:
    with pytest.raises(
        AssayError, match=r"not a regular file: refusing to replace it \(it is a FIFO"
    ):
        io.atomic_write_text(fifo, "x")
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert names(tmp_path) == ["pipe"]


def test_a_socket_target_is_refused(unix_socket: Path) -> None:
    with pytest.raises(AssayError, match=r"refusing to replace it \(it is a socket\)"):
        io.atomic_write_text(unix_socket, "x")
    assert stat.S_ISSOCK(os.lstat(unix_socket).st_mode)


def test_a_device_target_is_refused_and_stays_a_device(tmp_path: Path, device: Path) -> None:
    with pytest.raises(AssayError) as info:
        io.atomic_write_text(device, "x")
    assert one_line(info.value) == (
        f"{device}: not a regular file: refusing to replace it (it is a character device)"
    )
    assert is_char_device(device)
    assert names(tmp_path) == ["null"]


def test_dev_null_is_refused_and_stays_a_device() -> None:
    devnull = Path("/dev/null")
    if not devnull.exists() or not is_char_device(devnull):
        pytest.skip("no /dev/null device here")
    with pytest.raises(AssayError, match="not a regular file: refusing to replace it"):
        io.atomic_write_text(devnull, "x")
    assert is_char_device(devnull)


def test_a_symlink_to_a_device_is_refused(tmp_path: Path, device: Path) -> None:
    link = tmp_path / "link"
    link.symlink_to(device)
    with pytest.raises(AssayError, match=f"{link}: not a regular file"):
        io.atomic_write_text(link, "x")
    assert is_char_device(device)
    assert link.is_symlink()


def test_a_symlink_to_a_regular_file_replaces_that_file_and_stays_a_link(tmp_path: Path) -> None:
    real = tmp_path / "baselines" / "main.json"
    real.parent.mkdir()
    real.write_text("old", encoding="utf-8")
    link = tmp_path / "assay-baseline.json"
    link.symlink_to(Path("baselines") / "main.json")
    io.atomic_write_text(link, "new")
    assert link.is_symlink()
    assert real.read_text(encoding="utf-8") == "new"
    assert names(real.parent) == ["main.json"]  # the temp file went beside the real file


def test_a_dangling_symlink_is_refused(tmp_path: Path) -> None:
    link = tmp_path / "out.json"
    link.symlink_to(tmp_path / "elsewhere.json")
    with pytest.raises(AssayError) as info:
        io.atomic_write_text(link, "x")
    assert one_line(info.value) == (
        f"{link}: a symlink to a missing file: refusing to write through it"
    )
    assert not (tmp_path / "elsewhere.json").exists()
    assert link.is_symlink()


# --- atomic_create_bytes / atomic_create_text ---------------------------------------------------


def test_create_new_file(tmp_path: Path) -> None:
    path = tmp_path / "runs" / "eval_run_1.json"
    assert io.atomic_create_text(path, "first\n") is True
    assert path.read_text(encoding="utf-8") == "first\n"
    assert names(path.parent) == ["eval_run_1.json"]


def test_create_refuses_to_overwrite(tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    path.write_text("original\n", encoding="utf-8")
    assert io.atomic_create_text(path, "intruder\n") is False
    assert path.read_text(encoding="utf-8") == "original\n"
    assert names(tmp_path) == ["run.json"]


def test_create_twice(tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    assert io.atomic_create_text(path, "one") is True
    assert io.atomic_create_text(path, "two") is False
    assert path.read_text(encoding="utf-8") == "one"
    assert names(tmp_path) == ["run.json"]


def test_create_never_follows_a_symlink(tmp_path: Path) -> None:
    link = tmp_path / "k"
    link.symlink_to(tmp_path / "target")
    assert io.atomic_create_bytes(link, b"secret") is False
    assert not (tmp_path / "target").exists()
    assert names(tmp_path) == ["k"]


def test_create_over_a_device_leaves_it_a_device(tmp_path: Path, device: Path) -> None:
    assert io.atomic_create_text(device, "x") is False
    assert is_char_device(device)


def test_create_with_a_secret_mode(tmp_path: Path) -> None:
    path = tmp_path / "attest.key"
    assert io.atomic_create_bytes(path, b"k", mode=0o600) is True
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_create_failure_leaves_no_temp_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "run.json"
    monkeypatch.setattr(os, "fsync", disk_full)
    with pytest.raises(OutputsError) as info:
        io.atomic_create_text(path, "data", OutputsError)
    assert one_line(info.value) == f"{path}: cannot write: No space left on device"
    assert names(tmp_path) == []


def test_create_accepts_str_path(tmp_path: Path) -> None:
    path = tmp_path / "s.txt"
    assert io.atomic_create_text(str(path), "ok") is True
    assert path.read_text(encoding="utf-8") == "ok"


# --- append_bytes / append_text -----------------------------------------------------------------


def test_append_creates_then_appends(tmp_path: Path) -> None:
    path = tmp_path / "summary.md"
    io.append_text(path, "one\n")
    io.append_bytes(path, b"two\n", fsync=True)
    assert path.read_text(encoding="utf-8") == "one\ntwo\n"


@pytest.mark.parametrize("where", ["write", "fsync"])
def test_a_failed_append_is_undone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    path = tmp_path / "ledger.jsonl"
    path.write_bytes(b'{"index":0}\n')
    real_write = os.write

    def partial_then_full(fd: int, data: Any) -> int:
        real_write(fd, bytes(data[:3]))  # half a line reaches the file...
        disk_full()  # ...then the disk is full
        return 0

    monkeypatch.setattr(os, "write", partial_then_full if where == "write" else real_write)
    if where == "fsync":
        monkeypatch.setattr(os, "fsync", disk_full)
    with pytest.raises(AssayError) as info:
        io.append_bytes(path, b'{"index":1}\n', fsync=True)
    assert one_line(info.value) == f"{path}: cannot write: No space left on device"
    assert path.read_bytes() == b'{"index":0}\n'


def test_append_refuses_a_fifo_without_blocking(fifo: Path) -> None:
    with pytest.raises(
        AssayError, match=r"not a regular file: refusing to write to it \(it is a FIFO"
    ):
        io.append_text(fifo, "x")


def test_append_refuses_a_folder(tmp_path: Path) -> None:
    with pytest.raises(AssayError) as info:
        io.append_text(tmp_path, "x")
    assert one_line(info.value) == (
        f"{tmp_path}: not a regular file: refusing to write to it (it is a folder)"
    )


def test_append_refuses_a_device(device: Path) -> None:
    with pytest.raises(AssayError, match="it is a character device"):
        io.append_text(device, "x")
    assert is_char_device(device)


def test_append_follows_a_symlink_unless_told_not_to(tmp_path: Path) -> None:
    real = tmp_path / "real.jsonl"
    real.write_text("", encoding="utf-8")
    link = tmp_path / "link.jsonl"
    link.symlink_to(real)
    io.append_text(link, "a\n")
    assert real.read_text(encoding="utf-8") == "a\n"
    with pytest.raises(AssayError, match=f"{link}: a symlink: refusing to follow it"):
        io.append_bytes(link, b"b\n", follow_symlinks=False)
    assert real.read_text(encoding="utf-8") == "a\n"


# --- dump_json ----------------------------------------------------------------------------------


def test_dump_json_format() -> None:
    text = io.dump_json({"b": 1, "a": "café", "list": [1, 2]})
    assert text.endswith("}\n")
    assert "café" in text
    assert text.startswith('{\n  "b": 1,')
    assert json.loads(text) == {"b": 1, "a": "café", "list": [1, 2]}


def test_dump_json_compact_is_one_line_for_what_assay_reads_back(tmp_path: Path) -> None:
    from assay.gate import save_run

    assert io.dump_json({"b": 1, "a": "café"}, compact=True) == '{"b":1,"a":"café"}\n'
    run_id = save_run(tmp_path, {"kind": "gate", "summary": {}})
    text = (tmp_path / ".assay" / "runs" / f"{run_id}.json").read_text(encoding="utf-8")
    assert text == io.dump_json(
        {"schema_version": 2, "run_id": run_id, "kind": "gate", "summary": {}}, compact=True
    )


# ============================================================ every call site reads through io


def bom_file(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(BOM + text.encode("utf-8"))
    return path


def test_a_bom_is_tolerated_in_a_telemetry_folder_file(tmp_path: Path) -> None:
    from assay.agent import load_telemetry

    bom_file(tmp_path / "tel" / "t1.json", '{"task_id": "t1", "turns_used": 3}')
    assert load_telemetry(tmp_path / "tel", {"t1"})["t1"].turns_used == 3


def test_a_bom_is_tolerated_in_a_baseline(tmp_path: Path) -> None:
    from assay.gate import _baseline as baseline

    document = {"schema_version": SCHEMA_VERSION, "goldens": {}}
    path = bom_file(tmp_path / "assay-baseline.json", json.dumps(document))
    assert baseline.load_baseline(path)["goldens"] == {}


def test_a_bom_is_tolerated_in_a_yaml_goldens_list(tmp_path: Path) -> None:
    from assay.goldens import iter_goldens

    bom_file(tmp_path / "g" / "list.yaml", "- {id: a, input: q, asserts: ['contains:x']}\n")
    assert [g.id for g in iter_goldens(tmp_path / "g")] == ["a"]


def test_a_bom_is_tolerated_in_a_candidates_file(tmp_path: Path) -> None:
    from assay.models._candidates_file import load_candidates_file

    text = "provider: {type: command, command: cat}\ncandidates:\n  - {id: c, prompt: 'p'}\n"
    loaded = load_candidates_file(bom_file(tmp_path / "candidates.yaml", text))
    assert [c.id for c in loaded.candidates] == ["c"]


def test_a_bom_is_tolerated_in_a_saved_run(tmp_path: Path) -> None:
    from assay.agent._saved_runs import load_run, runs_dir

    record = {
        "schema_version": SCHEMA_VERSION,
        "run_id": "eval_run_20260101T000000_000000Z",
        "results": [],
        "summary": {},
    }
    bom_file(runs_dir(tmp_path) / f"{record['run_id']}.json", json.dumps(record))
    assert load_run(tmp_path)["run_id"] == record["run_id"]


def test_a_bom_is_tolerated_in_a_journal(tmp_path: Path) -> None:
    from assay.attest import Journal

    path = tmp_path / "run.journal.jsonl"
    Journal(path).append("read", path="a.py")
    path.write_bytes(BOM + path.read_bytes())
    check = Journal(path).verify()
    assert check.ok, check.reason
    assert check.events == 1


def test_a_bom_is_tolerated_in_a_key_file(tmp_path: Path) -> None:
    from assay.attest import keygen, load_key

    path = tmp_path / "attest.key"
    keygen(path)
    key = load_key(path)
    path.write_bytes(BOM + path.read_bytes())
    assert load_key(path) == key


def test_an_unreadable_outputs_file_is_one_line(tmp_path: Path) -> None:
    from assay.models._static import load_outputs

    with pytest.raises(OutputsError) as info:
        load_outputs(tmp_path)
    assert one_line(info.value) == f"{tmp_path}: is a folder, not a file"
    with pytest.raises(OutputsError, match="outputs file not found"):
        load_outputs(tmp_path / "missing.jsonl")


def test_a_baseline_write_failure_is_a_baseline_error_and_keeps_the_old_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from assay.gate import _baseline as baseline

    path = tmp_path / "assay-baseline.json"
    path.write_text("old", encoding="utf-8")
    monkeypatch.setattr(os, "fsync", disk_full)
    document = {"schema_version": SCHEMA_VERSION, "goldens": {}}
    with pytest.raises(BaselineError, match="No space left on device"):
        baseline.write(path, document, force=True)
    assert path.read_text(encoding="utf-8") == "old"
    assert names(tmp_path) == ["assay-baseline.json"]


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda p: p.mkdir(), "a folder, not a cache file"),
        (lambda p: p.write_text("not sqlite " * 100, encoding="utf-8"), "not a database"),
    ],
)
def test_a_cache_that_cannot_be_opened_is_one_line_naming_it(
    tmp_path: Path, make: Callable[[Path], Any], message: str
) -> None:
    from assay.models import OutputCache

    path = tmp_path / "outputs.sqlite"
    make(path)
    with pytest.raises(AssayError) as info:
        OutputCache(path)
    assert one_line(info.value).startswith(f"{path}: ")
    assert message in str(info.value)


@pytest.mark.parametrize("file_in_the_way", [".assay", ".assay/cache"])
def test_a_cache_under_a_file_is_one_line_naming_it(tmp_path: Path, file_in_the_way: str) -> None:
    from assay.models import OutputCache

    (tmp_path / file_in_the_way).parent.mkdir(exist_ok=True)
    (tmp_path / file_in_the_way).write_text("a file", encoding="utf-8")
    path = tmp_path / ".assay" / "cache" / "outputs.sqlite"
    with pytest.raises(AssayError) as info:
        OutputCache(path)
    assert one_line(info.value) == f"{path}: cannot use the cache: Not a directory"


def test_keygen_on_a_full_disk_leaves_no_key_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from assay.attest import keygen
    from assay.errors import ConfigError

    path = tmp_path / "keys" / "attest.key"
    monkeypatch.setattr(os, "fsync", disk_full)
    with pytest.raises(ConfigError) as info:
        keygen(path)
    assert one_line(info.value) == f"{path}: cannot write: No space left on device"
    assert names(path.parent) == []  # no half key: a retry is not refused as "already exists"


def test_load_key_of_a_folder_says_folder(tmp_path: Path) -> None:
    from assay.attest import load_key
    from assay.errors import ConfigError

    with pytest.raises(ConfigError) as info:
        load_key(tmp_path)
    assert one_line(info.value) == f"{tmp_path}: is a folder, not a file"


def test_a_journal_append_failure_names_the_journal_and_leaves_it_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from assay.attest import Journal

    path = tmp_path / "run.journal.jsonl"
    journal = Journal(path, fsync=True)
    journal.append("read", path="a.py")
    before = path.read_bytes()
    monkeypatch.setattr(os, "fsync", disk_full)
    with pytest.raises(AssayError) as info:
        journal.append("read", path="b.py")
    assert one_line(info.value) == f"{path}: cannot write: No space left on device"
    assert path.read_bytes() == before
    monkeypatch.undo()
    assert Journal(path).verify().ok


def test_a_ledger_line_with_nan_is_a_one_line_error(tmp_path: Path) -> None:
    from assay.attest._ledger import attest_dir, store

    path = attest_dir(tmp_path) / "lineage.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(b'{"index":NaN}\n')
    with pytest.raises(AssayError) as info:
        store(tmp_path, b"{}", "task", "run", b"k" * 32, "CLEAN")
    assert one_line(info.value) == (
        f"{path}:1: the lineage is damaged here (not canonical JSON); no line before it is "
        "intact: move the file away to start a new one, then seal again"
    )


def test_a_record_is_never_written_through_a_symlink(tmp_path: Path) -> None:
    import hashlib

    from assay.attest._ledger import record_path, write_record

    data = b'{"a":1}'
    path = record_path(tmp_path, "sha256:" + hashlib.sha256(data).hexdigest())
    path.parent.mkdir(parents=True)
    path.symlink_to(tmp_path / "elsewhere")
    with pytest.raises(AssayError, match="this attestation already exists"):
        write_record(tmp_path, data)
    assert not (tmp_path / "elsewhere").exists()


def test_init_never_replaces_a_file_that_appears_while_it_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from assay.cli import init
    from assay.errors import ConfigError

    (tmp_path / "assay.toml").write_text("mine", encoding="utf-8")
    monkeypatch.setattr(init, "_conflicts", lambda root: [])  # the check ran before it appeared
    with pytest.raises(ConfigError, match="refusing to overwrite it"):
        init.scaffold(tmp_path)
    assert (tmp_path / "assay.toml").read_text(encoding="utf-8") == "mine"


def test_a_step_summary_that_cannot_be_written_is_one_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from assay.cli._common import append_step_summary

    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path))
    append_step_summary("# summary")
    err = capsys.readouterr().err
    assert err == (
        f"assay: warning: GITHUB_STEP_SUMMARY: {tmp_path}: not a regular file: refusing to "
        "write to it (it is a folder)\n"
    )


def test_the_step_summary_is_appended(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from assay.cli._common import append_step_summary

    path = tmp_path / "summary.md"
    path.write_text("# earlier step\n", encoding="utf-8")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(path))
    append_step_summary("# assay")
    assert path.read_text(encoding="utf-8") == "# earlier step\n# assay\n"
