"""Files assay reads and writes: UTF-8 (BOM tolerated) and JSONL in, atomic writes out."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from assay.errors import AssayError

_BOM = b"\xef\xbb\xbf"


def _fsync_dir(folder: Path) -> None:
    with contextlib.suppress(OSError):  # some filesystems cannot fsync a directory
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _write_temp(path: Path, text: str) -> str:
    """Write ``text`` to a fsynced temp file beside ``path``; returns the temp file's name."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        # mkstemp creates 0600; the final file gets the usual mode (0666 less the umask).
        os.chmod(tmp, 0o666 & ~_umask())
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return tmp


def atomic_write_text(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` so a reader sees the old file or the new one, never a mix."""
    path = Path(path)
    tmp = _write_temp(path, text)
    try:
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_dir(path.parent)


def atomic_create_text(path: Path, text: str) -> bool:
    """Write ``path`` only if it does not exist yet (exclusive, atomic). Return False if it did."""
    path = Path(path)
    tmp = _write_temp(path, text)
    try:
        os.link(tmp, path)  # fails if path exists: never overwrites another file
    except FileExistsError:
        return False
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
    _fsync_dir(path.parent)
    return True


def dump_json(data: Any) -> str:
    """The JSON text assay writes: stable, readable, UTF-8."""
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def decode_utf8(data: bytes, source: str, error: type[AssayError]) -> str:
    """Decode UTF-8 (a leading BOM is dropped) or raise ``error`` naming the byte offset."""
    if data.startswith(_BOM):
        data = data[len(_BOM) :]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"not valid UTF-8 (bad byte at offset {exc.start})", source=source) from None


def iter_jsonl_objects(path: Path, error: type[AssayError]) -> Iterator[tuple[str, dict[str, Any]]]:
    """``(source, object)`` for each non-blank line, where source is ``path:line``.

    Raises:
        error: a line that is not UTF-8, not JSON, or not a JSON object.
    """
    with open(path, "rb") as handle:
        for lineno, raw in enumerate(handle, start=1):
            source = f"{path}:{lineno}"
            line = decode_utf8(raw, source, error).strip()
            if not line:
                continue
            try:
                data = json.loads(line)
            except ValueError as exc:
                raise error(f"invalid JSON: {exc}", source=source) from None
            if not isinstance(data, dict):
                raise error("each line must be a JSON object", source=source)
            yield source, data
