"""Goldens as records: JSONL (one object per line) and YAML lists (one mapping per item)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from assay._yaml import field_line, yaml_load
from assay.errors import GoldenError
from assay.goldens._model import Defaults, Golden, build_goldens
from assay.io import iter_jsonl_objects, read_text
from assay.vocabulary import Tier


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
