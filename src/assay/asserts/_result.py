"""The one result shape every check returns."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class CheckResult:
    """The outcome of one assert on one output.

    Attributes:
        text: the assert as written.
        op: the op including any ``not-`` prefix.
        passed: whether the check passed.
        reason: why it failed (None when it passed).
        evidence: structured detail for machines (e.g. ``{reason: missing_pointer, path}``).
    """

    text: str
    op: str
    passed: bool
    reason: str | None = None
    evidence: Any = None

    def __reduce__(self) -> tuple[type[CheckResult], tuple[Any, ...]]:
        # Pickled as its fields, as Golden is (the parallel loader sends thousands).
        return CheckResult, (self.text, self.op, self.passed, self.reason, self.evidence)

    def to_dict(self) -> dict[str, Any]:
        """The check as JSON: every record has these five keys, everywhere."""
        return {
            "text": self.text,
            "op": self.op,
            "passed": self.passed,
            "reason": self.reason,
            "evidence": self.evidence,
        }

    def recorded_op(self) -> str:
        """The op as a run record may hold it: an op assay does not know is whatever the user
        wrote (an answer written as a bare assert, say), so it is recorded as ``unknown-op``."""
        evidence = self.evidence
        if isinstance(evidence, dict) and evidence.get("reason") == "unknown_op":
            return "unknown-op"
        return self.op

    def to_redacted_dict(self) -> dict[str, Any]:
        """The same keys for run records, which hold no ground truth: the op and the verdict;
        the text, reason and evidence (which quote the assert's argument) are dropped."""
        op = self.recorded_op()
        return {"text": op, "op": op, "passed": self.passed, "reason": None, "evidence": None}


class ArgumentProblem(Exception):
    """A bad assert argument (invalid regex, invalid schema, missing value).

    Always a failed check, negated or not: a broken assert must never pass.
    """

    def __init__(self, reason: str, evidence: dict[str, Any] | None = None):
        super().__init__(reason)
        self.reason = reason
        self.evidence = evidence


def clip(text: str, limit: int = 80) -> str:
    """``text`` for a message: cut to ``limit`` characters, ending in ``...`` when cut."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


# What a handler returns: passed, a reason for the non-negated failure, optional evidence.
Outcome = tuple[bool, str | None, dict[str, Any] | None]
