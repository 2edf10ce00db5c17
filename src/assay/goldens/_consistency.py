"""``--self-test``: each golden's asserts run against its own ``expected``.

A golden whose expected answer fails its own asserts is inconsistent (the golden is wrong, or its
asserts are). Goldens that do not say where they came from (no ``## Origin`` section), and
frontmatter keys that are no field of assay's (kept as metadata; perhaps another tool's, perhaps a
typo), are warned about, never failed. A ``python`` assert whose file is not in the project is an
error (:func:`check_python_files`), with an expected answer or without one: loading checked all
the rest an assert can be found wrong by without an output.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay._yaml import field_line
from assay.asserts import (
    DEFAULT_CONTEXT,
    CheckContext,
    CheckResult,
    OutputView,
    python_file_problems,
    run_assert,
)
from assay.errors import GoldenError
from assay.goldens._model import Defaults, Golden, unknown_fields


@dataclass(slots=True)
class Inconsistency:
    id: str
    source: str
    failed: list[CheckResult]


@dataclass(slots=True)
class SelfTestReport:
    checked: int = 0
    inconsistent: list[Inconsistency] = field(default_factory=list)
    no_expected: list[str] = field(default_factory=list)
    no_origin: list[str] = field(default_factory=list)
    unknown_fields: dict[str, list[str]] = field(default_factory=dict)
    # The folder defaults the goldens got (listed, so that checks no golden file shows are
    # seen): the first golden's that has any; one run loads one folder, so one defaults file.
    defaults: Defaults | None = None

    @property
    def ok(self) -> bool:
        return not self.inconsistent

    def to_dict(self) -> dict[str, Any]:
        return {
            "checked": self.checked,
            "inconsistent": [
                {"id": i.id, "source": i.source, "failed": [c.to_dict() for c in i.failed]}
                for i in self.inconsistent
            ],
            "no_expected": list(self.no_expected),
            "no_origin": list(self.no_origin),
            "unknown_fields": {k: list(v) for k, v in self.unknown_fields.items()},
            "defaults": None if self.defaults is None else self.defaults.to_dict(),
            "ok": self.ok,
        }


def self_test(goldens: Iterable[Golden], ctx: CheckContext = DEFAULT_CONTEXT) -> SelfTestReport:
    """Each golden's asserts against its own expected answer (see the module).

    Raises:
        GoldenError: a ``python`` assert names a file the project (``ctx.root``) lacks.
    """
    goldens = list(goldens)
    check_python_files(goldens, ctx.root)
    report = SelfTestReport()
    for golden in goldens:
        if report.defaults is None and golden.defaults is not None:
            report.defaults = golden.defaults
        if not golden.has_origin:
            report.no_origin.append(golden.id)
        unknown = unknown_fields(golden) if golden.fields else None
        if unknown:
            report.unknown_fields[golden.id] = unknown
        if not golden.asserts:
            continue
        if not golden.has_expected:
            report.no_expected.append(golden.id)
            continue
        report.checked += 1
        view = OutputView(golden.expected)
        failed = [c for c in (run_assert(s, view, ctx) for s in golden.asserts) if not c.passed]
        if failed:
            report.inconsistent.append(Inconsistency(golden.id, golden.source, failed))
    return report


def check_python_files(goldens: Iterable[Golden], root: Path | None) -> None:
    """Fail on the first code file (a ``python`` or ``javascript`` assert's, a transform's:
    the golden's, its defaults', an assert's) that is not under the project ``root`` (None:
    the working directory), naming the golden's (or defaults) file, the line and the field:
    a check that cannot be found fails every output alike, with or without an expected answer.

    Raises:
        GoldenError: ``goldens/g.md:6: field 'asserts[0].value': checks.py:fn: no file ...``.
    """
    from assay.asserts import has_code_files

    checked: set[int] = set()
    for golden in goldens:
        if golden.transform is not None and id(golden.transform) not in checked:
            checked.add(id(golden.transform))
            _check_transform_file(golden, root)
        if not any([has_code_files(spec) for spec in golden.asserts]):
            continue
        start = len(golden.defaults.asserts) if golden.defaults is not None else 0
        for index, path, problem in python_file_problems(golden.asserts, root):
            if index < start and golden.defaults is not None:
                raise _located(problem, golden.defaults.source, path)
            own = path.replace(f"asserts[{index}]", f"asserts[{index - start}]", 1)
            raise _located(problem, golden.source, own)


def _check_transform_file(golden: Golden, root: Path | None) -> None:
    from assay.asserts import transform_code_problem

    transform = golden.transform
    assert transform is not None
    problem = transform_code_problem(transform, root, files=True)
    if problem is None:
        return
    field_path = f"transform.{transform.language}"
    defaults = golden.defaults
    if defaults is not None and defaults.transform is transform:
        raise _located(problem, defaults.source, field_path)
    raise _located(problem, golden.source, field_path)


_LIST_ITEM = re.compile(r"(.*)\[(\d+)\]\Z")  # a YAML list's golden: ``suite.yaml[3]``


def _located(message: str, source: str, field_path: str) -> GoldenError:
    """A GoldenError at ``field_path`` of the golden (or defaults file) at ``source``, with
    the field's line where the file has lines (re-read: this is the error path)."""
    from assay.goldens._markdown import split_frontmatter
    from assay.io import read_text

    item = _LIST_ITEM.match(source)
    path, index = (item.group(1), int(item.group(2))) if item else (source, None)
    line = None
    if path.endswith((".md", ".yaml", ".yml")) and Path(path).is_file():
        text = read_text(path, GoldenError)
        if path.endswith(".md"):
            front = split_frontmatter(text, path)[0]
            line = field_line(front, field_path, line_offset=1)
        else:
            line = field_line(text, field_path, item=index)
    if line is None:  # a JSONL golden's source names its line already
        return GoldenError(message, source=source, field=field_path)
    return GoldenError(message, source=path, field=field_path, line=line)
