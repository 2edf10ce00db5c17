"""Inputs of the prompt-candidate API: candidates and items (results are :class:`Result`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
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


def field_of(obj: Any, name: str) -> Any:
    if isinstance(obj, Mapping):
        return obj.get(name, UNSET)
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
