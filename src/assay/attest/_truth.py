"""The ground truth of a task: every text the agent must never have seen.

``expected`` (and each of its string leaves), every assert argument, the ``rubric``, each
completion signal, and the contents of ``reference_files``. Not the input, title or body the agent
is given, and not test commands (agents are expected to run tests).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from assay.asserts import as_text
from assay.errors import GoldenError
from assay.goldens import Golden
from assay.io import read_text

_NOT_TRUTH_ARGS = frozenset(
    {
        "path",
        "flags",
        "left_path",
        "right_path",
        "case_insensitive",
        "threshold",
        "dialect",
        "description",
        "name",
    }
)


def _texts(value: Any) -> Iterator[str]:
    """The value as text, then each string leaf of it (for JSON values)."""
    if value is None or isinstance(value, bool):
        return
    yield as_text(value)
    if isinstance(value, dict | list):
        yield from _leaves(value)


def _leaves(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _leaves(item)
    elif isinstance(value, list):
        for item in value:
            yield from _leaves(item)


def source_file(source: str) -> Path:
    """The file a golden came from: ``path``, ``path:line`` (JSONL) or ``path[index]`` (YAML)."""
    path = Path(source)
    if path.is_file():
        return path
    record = re.match(r"^(.*)(?::\d+|\[\d+\])$", source)
    return Path(record.group(1)) if record else path


def ground_truth(task: Golden) -> list[str]:
    """Every ground-truth text of ``task``.

    Raises:
        GoldenError: a declared reference file cannot be read (the seal is refused).
    """
    texts: list[str] = []
    if task.has_expected:
        texts.extend(_texts(task.expected))
    for spec in task.asserts:
        for key, value in spec.args.items():
            if key not in _NOT_TRUTH_ARGS:
                texts.extend(_texts(value))
    if task.rubric:
        texts.append(task.rubric)
    for signal in task.fields.get("completion_signals") or []:
        # A command signal can spell the answer out as well as a prose one.
        texts.extend([signal["name"], signal["run"]] if isinstance(signal, dict) else [signal])
    base = source_file(task.source).parent if task.source else Path.cwd()
    solution = base / "solution.sh"
    if source_file(task.source).name == "task.md" and solution.is_file():
        texts.append(read_text(solution, GoldenError))  # the reference solution is the answer
    for name in task.fields.get("reference_files") or []:
        path = Path(name) if Path(name).is_absolute() else base / name
        try:
            texts.append(read_text(path, GoldenError))
        except GoldenError as exc:
            raise GoldenError(
                f"reference file {name!r} cannot be read ({exc}); refusing to seal",
                source=task.source,
                field="reference_files",
            ) from None
    return [t for t in texts if t.strip()]
