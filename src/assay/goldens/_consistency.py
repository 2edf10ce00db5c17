"""``--self-test``: each golden's asserts run against its own ``expected``.

A golden whose expected answer fails its own asserts is inconsistent (the golden is wrong, or its
asserts are). Goldens that do not say where they came from (no ``## Origin`` section), and
frontmatter keys that are no field of assay's (kept as metadata; perhaps another tool's, perhaps a
typo), are warned about, never failed.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from assay.asserts import DEFAULT_CONTEXT, CheckContext, CheckResult, OutputView, run_assert
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
