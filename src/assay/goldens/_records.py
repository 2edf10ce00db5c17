"""Goldens as records: JSONL (one object per line) and YAML lists (one mapping per item)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from assay._yaml import yaml_load
from assay.errors import GoldenError
from assay.goldens._model import Golden, build_golden
from assay.io import iter_jsonl_objects, read_text
from assay.vocabulary import Tier


def iter_jsonl(path: Path, folder_tier: Tier | None) -> Iterator[Golden]:
    """Stream goldens from a JSONL file, one line at a time."""
    for source, data in iter_jsonl_objects(path, GoldenError):
        yield build_golden(data, source=source, default_id=None, folder_tier=folder_tier)


def iter_yaml_list(path: Path, folder_tier: Tier | None) -> Iterator[Golden]:
    """Goldens from a YAML file holding a list of mappings."""
    data = yaml_load(read_text(path, GoldenError), str(path))
    if not isinstance(data, list):
        raise GoldenError("a YAML goldens file must hold a list of goldens", source=str(path))
    for index, item in enumerate(data):
        yield build_golden(
            item, source=f"{path}[{index}]", default_id=None, folder_tier=folder_tier
        )
