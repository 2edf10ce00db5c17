"""The ground truth of a task: every text the agent must never have seen.

``expected`` (and each of its string leaves), every assert argument, the ``rubric``, each
completion signal (a prose one, or a command signal's ``name``), and the contents of
``reference_files``. Not the input, title or body the agent is given, and not test commands
(``verify``, a command signal's ``run``: agents are expected to run tests).

Nor the content of a task folder's ``solution.sh``: it is the fix a correct agent writes, so
matching it in what an agent wrote or ran would fail every correct agent. It is protected by its
path instead: it lives in the task folder, inside the goldens folder, and reading it there is
``ground_truth_path``.

What the agent is given (:func:`given_texts`: its instruction, the title, the fixture's files)
is subtracted from the commitment when sealing: a shingle the agent can read in its own
worktree is no secret.
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
    "path flags left_path right_path case_insensitive threshold dialect description name".split()
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
        texts.append(signal["name"] if isinstance(signal, dict) else signal)
    base = source_file(task.source).parent if task.source else Path.cwd()
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


MAX_GIVEN_FILE_BYTES = 1 << 20


def given_texts(task: Golden, fixture: Path | None = None) -> list[str]:
    """What the agent is given to read: the instruction, the title, and each text file of the
    fixture repository (``fixture``; up to 1 MiB a file)."""
    texts = [as_text(task.input)] if task.input is not None else []
    title = task.fields.get("title")
    if isinstance(title, str):
        texts.append(title)
    if fixture is not None and fixture.is_dir():
        for path in sorted(fixture.rglob("*")):
            try:
                if path.is_symlink() or not path.is_file():
                    continue
                if path.stat().st_size <= MAX_GIVEN_FILE_BYTES:
                    texts.append(path.read_bytes().decode("utf-8"))
            except (OSError, UnicodeDecodeError):
                continue
    return [t for t in texts if t.strip()]
