"""Goldens as records: JSONL (one object per line) and YAML lists (one mapping per item)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

from assay._yaml import field_line, yaml_load
from assay.errors import GoldenError
from assay.goldens._model import Defaults, Golden, build_goldens
from assay.io import iter_jsonl_objects, read_text
from assay.vocabulary import Tier

_BOM: Final = b"\xef\xbb\xbf"
_BLOCK: Final = 1 << 20


class Irregular(Exception):
    """Something :func:`jsonl_lines` leaves to :func:`assay.io.iter_jsonl_objects`."""


def jsonl_lines(
    path: str, start: int = 0, stop: int | None = None, first_line: int = 1
) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` of each non-blank line of ``path`` between the byte offsets
    ``start`` (a line start) and ``stop`` (a line start, or the end), read in 1 MiB blocks: a
    worker process reads its share of one large JSONL file (:mod:`assay.gate._load`).

    It gives what :func:`assay.io.iter_jsonl_objects` gives for those lines (valid UTF-8
    decodes the same whole or split at newlines). Anything else (a BOM, bad UTF-8, bad JSON, a
    line that is no object, an OS error) raises :class:`Irregular`: the run then loads in one
    process, where the exact reader raises the error with its message.

    Raises:
        Irregular: as above.
    """
    try:
        with open(path, "rb", buffering=0) as handle:
            if start:
                handle.seek(start)
            left = stop - start if stop is not None else -1
            lineno = first_line
            pending = b""
            loads = json.loads
            while left != 0:
                block = handle.read(_BLOCK if left < 0 else min(_BLOCK, left))
                if block is None:
                    raise Irregular
                if left > 0:
                    left -= len(block)
                if not block:
                    break
                if not pending and start == 0 and lineno == first_line and block[:3] == _BOM:
                    raise Irregular
                data = pending + block if pending else block
                cut = data.rfind(b"\n") + 1
                pending = data[cut:]
                if not cut:
                    continue
                lines = data[:cut].decode("utf-8").split("\n")
                lines.pop()  # the empty text after the block's last newline
                for line in lines:
                    text = line.strip()
                    if text:
                        value = loads(text)
                        if type(value) is not dict:
                            raise Irregular
                        yield lineno, value
                    lineno += 1
            if pending:
                text = pending.decode("utf-8").strip()
                if text:
                    value = loads(text)
                    if type(value) is not dict:
                        raise Irregular
                    yield lineno, value
    except (OSError, ValueError, RecursionError):  # UnicodeDecodeError and JSON errors too
        raise Irregular from None


def with_line(
    exc: GoldenError, text: str, *, item: int | None = None, line_offset: int = 0
) -> GoldenError:
    """``exc`` with the line of its field in ``text`` added to its source (``file:12``), when
    the field can be found there; only the error path pays for finding it."""
    line = None
    if exc.field is not None:
        line = field_line(text, exc.field, item=item, line_offset=line_offset)
    if line is None or exc.source is None:
        return exc
    source = exc.source if item is None else exc.source.rpartition("[")[0]
    return GoldenError(exc.message, source=f"{source}:{line}", field=exc.field)


def iter_jsonl(
    path: Path,
    folder_tier: Tier | None,
    *,
    strict: bool = False,
    defaults: Defaults | None = None,
) -> Iterator[Golden]:
    """Stream goldens from a JSONL file, one line at a time (sources are ``file:line``)."""
    for source, data in iter_jsonl_objects(path, GoldenError):
        yield from build_goldens(
            data,
            source=source,
            default_id=None,
            folder_tier=folder_tier,
            strict=strict,
            defaults=defaults,
        )


def iter_yaml_list(
    path: Path,
    folder_tier: Tier | None,
    *,
    strict: bool = False,
    defaults: Defaults | None = None,
) -> Iterator[Golden]:
    """Goldens from a YAML file holding a list of mappings."""
    text = read_text(path, GoldenError)
    data = yaml_load(text, str(path))
    if not isinstance(data, list):
        raise GoldenError("a YAML goldens file must hold a list of goldens", source=str(path))
    for index, item in enumerate(data):
        try:
            goldens = build_goldens(
                item,
                source=f"{path}[{index}]",
                default_id=None,
                folder_tier=folder_tier,
                strict=strict,
                defaults=defaults,
            )
        except GoldenError as exc:
            raise with_line(exc, text, item=index) from None
        yield from goldens
