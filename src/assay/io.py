"""The one place assay reads and writes files: one BOM policy, one error shape, atomic writes.

Reading
    ``read_bytes``, ``read_text``, ``read_json`` and ``iter_jsonl_objects`` read a document.
    Text is UTF-8, and a leading UTF-8 BOM is dropped everywhere (goldens, outputs, telemetry,
    baselines, candidates files): Windows editors add one and it carries no meaning. The BOM is
    the document's first three bytes only; a BOM inside a document (say at the start of JSONL
    line 2) is data, and invalid JSON there. Reads follow symlinks and accept pipes and devices,
    so ``--outputs <(cmd)`` and ``/dev/stdin`` work; only a folder is refused.

Writing
    ``atomic_write_text`` replaces a file through a fsynced temp file beside it and a rename: a
    reader sees the old file or the new one, never a mix, and a failure (disk full, read-only,
    no permission, ``/proc``...) leaves the old file intact and no temp file behind.
    ``atomic_create_text`` / ``atomic_create_bytes`` create a file that must not exist yet
    (exclusive, and never through a symlink: a hard link of the temp file cannot follow one).
    ``append_bytes`` / ``append_text`` append (the journal, the ledgers, the step summary).

    assay never writes through a special file. A target that exists and is not a regular file (a
    folder, a device such as /dev/null, a FIFO, a socket) is refused, so ``--output /dev/null``
    fails and leaves /dev/null a device instead of replacing it with a regular file. A symlink to
    a regular file is followed: the file it leads to is replaced atomically and the link stays a
    link (what a shell's ``>`` does, and what someone who symlinked a baseline expects). A
    dangling symlink is refused, since writing it would create a file the user never named.
    Replacing a file gives it a fresh inode: a hard link to the old file keeps the old content.

Errors
    Every failure raises the caller's ``AssayError`` subclass (``error``) as one line naming the
    file, and the line (``path:3``) or byte offset where known; the OS reason is ``strerror``::

        goldens/x.md: cannot read: Permission denied
        outputs.json: is a folder, not a file
        tel.jsonl:3: not valid UTF-8 (bad byte at offset 41)
        /proc/x: cannot write: No such file or directory
        /dev/null: not a regular file: refusing to replace it (it is a character device)

    Byte offsets count from the start of the file, BOM included, so ``xxd -s`` finds the byte.
"""

from __future__ import annotations

import contextlib
import errno
import io
import json
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, Final

from assay.errors import AssayError

_BOM: Final = b"\xef\xbb\xbf"
_FILE_MODE: Final = 0o666  # before the umask, as open(2) does
_KINDS: Final = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
)


def _reason(exc: OSError) -> str:
    return exc.strerror or str(exc)


# ------------------------------------------------------------------------------------ reading


def _read_error(exc: OSError, source: str, error: type[AssayError], missing: str) -> AssayError:
    if isinstance(exc, FileNotFoundError):
        return error(missing, source=source)
    if isinstance(exc, IsADirectoryError):
        return error("is a folder, not a file", source=source)
    return error(f"cannot read: {_reason(exc)}", source=source)


def _open_for_reading(path: Path | str, error: type[AssayError], missing: str) -> IO[bytes]:
    try:
        return open(path, "rb")
    except OSError as exc:
        raise _read_error(exc, str(path), error, missing) from None


def require_regular_file(path: Path | str, error: type[AssayError]) -> None:
    """For files found by walking a folder (goldens, telemetry): each must be a regular file.
    Reading a FIFO named ``x.md`` would block the run forever, and a symlink loop or a dangling
    link has nothing to read. (A file the user names is read as given: ``<(cmd)`` works.)
    Otherwise ``error`` names the file and what it is instead.
    """
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        raise error(
            f"cannot read: {_reason(exc)} (a broken or looping symlink?)", source=str(path)
        ) from None
    if not stat.S_ISREG(mode):
        raise error(f"not a regular file ({_kind(mode)}): refusing to read it", source=str(path))


def read_bytes(
    path: Path | str, error: type[AssayError], *, missing: str = "file not found"
) -> bytes:
    """The file's bytes, undecoded (a BOM is kept; ``decode_utf8`` drops it), for parsers that
    take bytes or need their own decoding.

    A missing file, a folder or an unreadable file (the OS reason named) is an ``error`` (the
    AssayError subclass to raise: ConfigError, GoldenError...); ``missing`` is the message
    when the file does not exist (say what the user should do).
    """
    with _open_for_reading(path, error, missing) as handle:
        try:
            return handle.read()
        except OSError as exc:
            raise _read_error(exc, str(path), error, missing) from None


def decode_utf8(data: bytes, source: str, error: type[AssayError], base: int = 0) -> str:
    """Decode UTF-8 (a leading BOM is dropped) or raise ``error`` naming the byte offset.

    Args:
        base: the file offset of ``data``'s first byte (for a line in the middle of a file).
    """
    skip = len(_BOM) if base == 0 and data.startswith(_BOM) else 0
    try:
        return data[skip:].decode("utf-8")
    except UnicodeDecodeError as exc:
        offset = base + skip + exc.start
        raise error(f"not valid UTF-8 (bad byte at offset {offset})", source=source) from None


def read_text(path: Path | str, error: type[AssayError], *, missing: str = "file not found") -> str:
    """The file as UTF-8 text, a leading BOM dropped; ``error`` as ``read_bytes``, or when the
    bytes are not UTF-8 (naming the byte offset)."""
    return decode_utf8(read_bytes(path, error, missing=missing), str(path), error)


def parse_json(text: str, source: str, error: type[AssayError]) -> Any:
    """``json.loads`` raising ``error`` (with the parser's line and column) on bad JSON."""
    try:
        return json.loads(text)
    except ValueError as exc:
        raise error(f"invalid JSON: {exc}", source=source) from None
    except RecursionError:  # json's C parser recurses per nesting level
        raise error("invalid JSON: nested too deeply", source=source) from None


def read_json(path: Path | str, error: type[AssayError], *, missing: str = "file not found") -> Any:
    """The file's JSON value (UTF-8, a leading BOM dropped); ``error`` as ``read_text``, or when
    the text is not JSON."""
    return parse_json(read_text(path, error, missing=missing), str(path), error)


# One decoder for every line: ``raw_decode`` skips the whitespace scans and the argument
# checks of ``json.loads``, half its cost on a short line.
_DECODER: Final = json.JSONDecoder()


def iter_jsonl_objects(
    path: Path | str,
    error: type[AssayError],
    *,
    missing: str = "file not found",
    start: int = 0,
    stop: int | None = None,
    first_line: int = 1,
) -> Iterator[tuple[str, dict[str, Any]]]:
    """``(path:line, object)`` for each non-blank line, streamed; a leading BOM dropped. A file
    that cannot be read, or a line that is not UTF-8, not JSON or not an object, is an ``error``.

    ``start``, ``stop``: the bytes to read, between two line starts (a chunk of a large file);
    ``first_line`` is the number of the line at ``start``.
    """
    source = str(path)
    with _open_for_reading(path, error, missing) as handle:
        try:
            if start:
                handle.seek(start)
            lines = handle if stop is None else io.BytesIO(handle.read(stop - start))
            offset = start
            for lineno, raw in enumerate(lines, first_line):
                where = f"{source}:{lineno}"
                text = decode_utf8(raw, where, error, base=offset).strip()
                offset += len(raw)
                if text:
                    yield where, _object(text, where, error)
        except OSError as exc:
            raise error(f"cannot read: {_reason(exc)}", source=source) from None


def _object(text: str, source: str, error: type[AssayError]) -> dict[str, Any]:
    try:
        value, end = _DECODER.raw_decode(text)
    except (ValueError, RecursionError):
        end = -1
    if end != len(text):
        value = parse_json(text, source, error)  # raises, with json's own message
    if not isinstance(value, dict):
        raise error("each line must be a JSON object", source=source)
    return value


# ------------------------------------------------------------------------------------ writing


def _write_error(path: Path, exc: OSError, error: type[AssayError]) -> AssayError:
    return error(f"cannot write: {_reason(exc)}", source=str(path))


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "a special file")


def _refuse_special(path: Path, info: os.stat_result, error: type[AssayError], verb: str) -> None:
    if not stat.S_ISREG(info.st_mode):
        raise error(
            f"not a regular file: refusing to {verb} it (it is {_kind(info.st_mode)})",
            source=str(path),
        )


def _replace_target(path: Path, error: type[AssayError]) -> Path:
    """The file ``atomic_write_text`` replaces: ``path``, or the regular file its symlink names."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return path
    target = path
    if stat.S_ISLNK(info.st_mode):
        target = Path(os.path.realpath(path))
        try:
            info = os.stat(target)
        except FileNotFoundError:
            raise error(
                "a symlink to a missing file: refusing to write through it", source=str(path)
            ) from None
    _refuse_special(path, info, error, "replace")
    return target


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _make_folder(folder: Path) -> None:
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        # A file sits where a folder of the path should be: say so as open(2) would.
        raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR)) from None


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _fsync_dir(folder: Path) -> None:
    with contextlib.suppress(OSError):  # some filesystems cannot fsync a directory
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _write_temp(folder: Path, name: str, data: bytes, mode: int) -> str:
    """Write ``data`` to a fsynced temp file in ``folder``; returns the temp file's name."""
    _make_folder(folder)
    # The prefix is cut so that a 255-byte target name still leaves room for the temp name.
    fd, tmp = tempfile.mkstemp(prefix=f".{name[:200]}.", suffix=".tmp", dir=folder)
    try:
        try:
            # mkstemp creates 0600; the final file gets ``mode`` less the umask, as open(2) would.
            os.fchmod(fd, mode & ~_umask())
            _write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)  # close can report a delayed write error (NFS): still a failure
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return tmp


def atomic_write_text(path: Path | str, text: str, error: type[AssayError] = AssayError) -> None:
    """Replace ``path`` with ``text`` (UTF-8, newlines as given), atomically.

    Parent folders are created. A symlink to a regular file writes that file (see the module).
    A target that is not a regular file, a dangling symlink or any OSError is an ``error`` (the
    old file left intact, no temp file remaining); a lone surrogate in ``text`` is a
    UnicodeEncodeError (nothing is touched).
    """
    path = Path(path)
    data = text.encode("utf-8")  # before touching the disk: a bad text changes nothing
    try:
        target = _replace_target(path, error)
        tmp = _write_temp(target.parent, target.name, data, _FILE_MODE)
        try:
            os.replace(tmp, target)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
    except OSError as exc:
        raise _write_error(path, exc, error) from None
    _fsync_dir(target.parent)


def atomic_create_bytes(
    path: Path | str, data: bytes, error: type[AssayError] = AssayError, *, mode: int = _FILE_MODE
) -> bool:
    """Create ``path`` holding ``data`` only if nothing is there yet; False if something was.

    Exclusive and atomic: the file appears whole or not at all, an existing file, folder or
    symlink (dangling too) is never replaced or followed. Any OSError is an ``error`` (no temp
    file remains). ``mode``: permission bits before the umask (0o600 for a secret: it is never
    wider on disk).
    """
    path = Path(path)
    try:
        tmp = _write_temp(path.parent, path.name, data, mode)
        try:
            os.link(tmp, path)  # fails if anything exists at path: never overwrites, never follows
        except FileExistsError:
            return False
        finally:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
    except OSError as exc:
        raise _write_error(path, exc, error) from None
    _fsync_dir(path.parent)
    return True


def atomic_create_text(
    path: Path | str, text: str, error: type[AssayError] = AssayError, *, mode: int = _FILE_MODE
) -> bool:
    """``atomic_create_bytes`` of ``text`` in UTF-8."""
    return atomic_create_bytes(path, text.encode("utf-8"), error, mode=mode)


def _check_appendable(path: Path, follow_symlinks: bool, error: type[AssayError]) -> None:
    """Refuse before opening: opening a FIFO or a device for writing can block or act."""
    try:
        info = os.stat(path) if follow_symlinks else os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISLNK(info.st_mode):
        raise error("a symlink: refusing to follow it", source=str(path))
    _refuse_special(path, info, error, "write to")


def _append_fd(fd: int, path: Path, data: bytes, fsync: bool, error: type[AssayError]) -> None:
    info = os.fstat(fd)
    _refuse_special(path, info, error, "write to")  # it may have been swapped since the check
    try:
        _write_all(fd, data)
        if fsync:
            os.fsync(fd)
    except BaseException:
        # Do not leave half a line: JSONL readers would reject the whole file from then on.
        with contextlib.suppress(OSError):
            os.ftruncate(fd, info.st_size)
        raise


def append_bytes(
    path: Path | str,
    data: bytes,
    error: type[AssayError] = AssayError,
    *,
    fsync: bool = False,
    follow_symlinks: bool = True,
) -> None:
    """Append ``data`` to ``path`` (created if missing); a failed append is undone.

    The undo truncates back to the size before the append, so the caller must be the only
    appender at that moment (the ledger holds a lock; the journal and step summary have one
    writer). A ``path`` that is not a regular file (or is a symlink and ``follow_symlinks`` is
    False), or any OSError, is an ``error``.
    """
    path = Path(path)
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK | os.O_CLOEXEC
    if not follow_symlinks:
        flags |= os.O_NOFOLLOW
    try:
        _check_appendable(path, follow_symlinks, error)
        fd = os.open(path, flags, _FILE_MODE)
        try:
            _append_fd(fd, path, data, fsync, error)
        finally:
            os.close(fd)
    except OSError as exc:
        raise _write_error(path, exc, error) from None


def append_text(path: Path | str, text: str, error: type[AssayError] = AssayError) -> None:
    """``append_bytes`` of ``text`` in UTF-8."""
    append_bytes(path, text.encode("utf-8"), error)


def dump_json(data: Any, *, compact: bool = False) -> str:
    """The JSON text of every document and record assay writes: UTF-8, keys in the order given,
    one line per run; indented for a person, ``compact`` for what assay reads back (a big run's
    record is ten times faster to write so)."""
    if compact:
        return json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n"
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
