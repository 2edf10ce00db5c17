"""Reading the text files users give assay: UTF-8 (BOM tolerated) and JSONL, streamed.

Every reader takes the error class of its caller, so a bad byte or line in an outputs file is an
OutputsError and in a golden a GoldenError, each naming the file, line and offset.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .errors import AssayError

_BOM = b"\xef\xbb\xbf"


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
