"""Shapes of the prompt-candidate API: candidates, items, per-item records, candidate scores."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from assay.errors import ValidationError


class _Unset:
    __slots__ = ()

    def __repr__(self) -> str:
        return "UNSET"


UNSET: Final[Any] = _Unset()


@dataclass(frozen=True, slots=True)
class PromptCandidate:
    """A prompt variant. ``id`` is part of the deterministic ranking: keep it stable."""

    id: str
    prompt: str
    metadata: Mapping[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class EvaluationItem:
    """One input to run every candidate on. ``expected``/``context`` reach the scorer only
    when given (``None`` included)."""

    id: str
    input: Any
    expected: Any = UNSET
    context: Any = UNSET


@dataclass(frozen=True, slots=True)
class ItemScore:
    """What the scorer said about one candidate's output for one item."""

    item_id: str
    score: float
    passed: bool
    evidence: Any = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "item_id": self.item_id,
            "score": self.score,
            "passed": self.passed,
            "evidence": self.evidence,
        }


@dataclass(frozen=True, slots=True)
class CandidateScore:
    """Aggregates for one candidate, with every per-item record kept for debugging.

    Attributes:
        candidate_id: the candidate's id.
        mean_score: mean of the item scores.
        pass_rate: passed items / items.
        item_count: how many items were scored.
        scorer_count: how many scorer results were aggregated (one per item).
        items: per-item records in item input order.
    """

    candidate_id: str
    mean_score: float
    pass_rate: float
    item_count: int
    scorer_count: int
    items: tuple[ItemScore, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        return {
            "candidate_id": self.candidate_id,
            "mean_score": self.mean_score,
            "pass_rate": self.pass_rate,
            "item_count": self.item_count,
            "scorer_count": self.scorer_count,
            "items": [i.to_dict() for i in self.items],
        }


def field_of(obj: Any, name: str) -> Any:
    """Read a field from a mapping or an object; UNSET when absent."""
    if isinstance(obj, Mapping):
        return obj.get(name, UNSET) if name in obj else UNSET
    return getattr(obj, name, UNSET)


def check_ids(objects: Any, what: str, need_prompt: bool) -> list[str]:
    """Validate candidates or items up front; returns their ids in order."""
    ids: list[str] = []
    seen: set[str] = set()
    for index, obj in enumerate(objects):
        ident = field_of(obj, "id")
        if not isinstance(ident, str) or not ident:
            raise ValidationError(f"{what}[{index}] needs a non-empty string id", field="id")
        if ident in seen:
            raise ValidationError(f"duplicate {what} id {ident!r}", field="id")
        if need_prompt and not isinstance(field_of(obj, "prompt"), str):
            raise ValidationError(f"{what} {ident!r} needs a string prompt", field="prompt")
        seen.add(ident)
        ids.append(ident)
    return ids
