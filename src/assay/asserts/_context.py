"""What a check sees: the output (parsed as JSON at most once) and run-wide settings."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

_UNPARSED = object()


@dataclass(frozen=True, slots=True)
class CheckContext:
    """Settings shared by every check of a run.

    Attributes:
        regex_timeout: seconds one regex search may take before the check fails closed.
        schema_registry: a ``referencing.Registry`` of schemas that ``$ref`` may name (no
            network retrieval ever happens; an unknown remote ref is a failed check).
    """

    regex_timeout: float = 0.1
    schema_registry: Any = None


DEFAULT_CONTEXT = CheckContext()


class OutputView:
    """A candidate output plus its JSON parse, computed lazily and once."""

    __slots__ = ("_json", "raw")

    def __init__(self, raw: Any, *, text: bool = True):
        """``text=True``: a string output is text that may hold JSON (parsed on demand);
        ``text=False``: the output is already a JSON value, strings included."""
        self.raw = raw
        self._json: Any = _UNPARSED if text and isinstance(raw, str) else raw

    def as_json(self) -> tuple[bool, Any]:
        """Return ``(True, value)`` when the output is JSON (a JSON value or JSON text)."""
        if self._json is _UNPARSED:
            try:
                self._json = strict_json_loads(self.raw)
            except (ValueError, RecursionError):
                self._json = _NOT_JSON
        if self._json is _NOT_JSON:
            return False, None
        return True, self._json


_NOT_JSON = object()


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON (RFC 8259)")


# One decoder for every output: json.loads with a keyword builds a new JSONDecoder per call,
# which cost a third of a second on a 100,000-golden suite.
_STRICT_DECODER = json.JSONDecoder(parse_constant=_reject_constant)


def strict_json_loads(text: str) -> Any:
    """``json.loads`` without the NaN / Infinity extensions, which are not JSON."""
    return _STRICT_DECODER.decode(text)


def as_text(value: Any) -> str:
    """Text form of a value: strings as they are, JSON values as compact JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


_NUMBER = (int, float)


def json_equal(a: Any, b: Any) -> bool:
    """JSON-value deep equality: 1 == 1.0, but booleans are not numbers."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a is b
    if isinstance(a, _NUMBER) and isinstance(b, _NUMBER):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    if a is None or b is None:
        return a is None and b is None
    return type(a) is type(b) and bool(a == b)
