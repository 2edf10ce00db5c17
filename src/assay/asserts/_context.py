"""What a check sees: the output (parsed as JSON at most once) and run-wide settings."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay.asserts._result import ArgumentProblem

_UNPARSED = object()
_UNRENDERED = object()


@dataclass(frozen=True, slots=True)
class CheckContext:
    """Settings shared by every check of a run.

    Attributes:
        regex_timeout: seconds one regex search may take before the check fails closed.
        schema_registry: a ``referencing.Registry`` of schemas that ``$ref`` may name (no
            network retrieval ever happens; an unknown remote ref is a failed check).
        root: the project root, where a ``python`` assert's file or module is found (None:
            the working directory).
        similarity: the run's similarity backend name, the default of a ``similar`` assert.
        similarity_fn: the run's backend function (None: looked up by name), so a ``similar``
            assert on an embedding run reuses the model the run loaded.
    """

    regex_timeout: float = 0.1
    schema_registry: Any = None
    root: Path | None = None
    similarity: str = "none"
    similarity_fn: Any = None


DEFAULT_CONTEXT = CheckContext()


class OutputView:
    """A candidate output plus its JSON parse and its text form, each computed lazily and once."""

    __slots__ = (
        "_json",
        "_text",
        "cost_usd",
        "finish_reason",
        "golden",
        "is_text",
        "latency_ms",
        "raw",
    )

    def __init__(
        self,
        raw: Any,
        *,
        text: bool = True,
        finish_reason: str | None = None,
        golden: Any = None,
        latency_ms: float | None = None,
        cost_usd: float | None = None,
    ):
        """``text=True``: a string output is text that may hold JSON (parsed on demand);
        ``text=False``: the output is already a JSON value, strings included.

        ``is_text`` is True for the first case only: ``equals`` compares such an output as text
        and any other output as a JSON value (the value at a pointer is one).

        ``finish_reason`` is why the model stopped (a live output), for ``natural-stop``.

        ``golden`` is the golden being scored (None through the scorer API), for the context
        a ``python`` assert's function is given; typed Any so this module needs no goldens.

        ``latency_ms`` and ``cost_usd`` are what the live call took, for ``latency`` and
        ``cost`` (None for a static output; a cached answer keeps what its call measured)."""
        self.raw = raw
        self.finish_reason = finish_reason
        self.golden = golden
        self.latency_ms = latency_ms
        self.cost_usd = cost_usd
        self.is_text = text and isinstance(raw, str)
        self._json: Any = _UNPARSED if self.is_text else raw
        if not self.is_text and not _json_shaped(raw):
            self._json = _NOT_JSON  # a set, bytes, NaN, ... handed in through the Python API
        self._text: Any = raw if isinstance(raw, str) else _UNRENDERED

    def text(self) -> str:
        """The text ops' view of the output: a string as it is, a JSON value as compact JSON.

        Raises:
            ArgumentProblem: the output is a Python value with no JSON form (a set, bytes, a
                cycle); such an output cannot be judged, so the check fails closed.
        """
        if self._text is _UNRENDERED:
            try:
                self._text = as_text(self.raw)
            except (TypeError, ValueError, RecursionError):
                raise ArgumentProblem(
                    f"the output ({type(self.raw).__name__}) is neither text nor a JSON value",
                    {"reason": "not_json"},
                ) from None
        return self._text  # type: ignore[no-any-return]

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
_JSON_TYPES = (str, dict, list, int, bool, type(None))


def _json_shaped(value: Any) -> bool:
    """Whether ``value`` is a JSON value at its top level (a cheap O(1) test; what is nested
    inside a list or a mapping is not walked on the hot path)."""
    if isinstance(value, float):
        return math.isfinite(value)
    return isinstance(value, _JSON_TYPES)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON (RFC 8259)")


# One decoder for every output: json.loads with a keyword builds a new JSONDecoder per call.
STRICT_DECODER = json.JSONDecoder(parse_constant=_reject_constant)


def strict_json_loads(text: str) -> Any:
    """``json.loads`` without the NaN / Infinity extensions, which are not JSON."""
    return STRICT_DECODER.decode(text)


def as_text(value: Any) -> str:
    """Text form of a value: strings as they are, JSON values as compact JSON (a non-finite
    number as ``Infinity`` / ``-Infinity`` / ``NaN``, never Python's ``inf``)."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def is_nan(value: Any) -> bool:
    """NaN equals nothing, itself included: as an assert argument it would make the op fail
    on every output and its negation pass on every output, so it is a bad argument."""
    return isinstance(value, float) and math.isnan(value)


def json_value_problem(value: Any, depth: int = 0) -> str | None:
    """Why ``value`` is not a JSON value (NaN, a non-string key, a set, ...), or None.

    An expected value that is not JSON could never equal a JSON output, or would equal a
    Python one only by accident, so ``equals`` treats it as a bad argument.
    """
    if value is None or isinstance(value, str | bool | int):
        return None
    if isinstance(value, float):
        return "NaN is not a JSON value" if math.isnan(value) else None
    if depth > _MAX_DEPTH:
        return "the value is nested too deeply"
    if isinstance(value, list):
        for item in value:
            if (problem := json_value_problem(item, depth + 1)) is not None:
                return problem
        return None
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                return f"the key {key!r} is not a string"
            if (problem := json_value_problem(item, depth + 1)) is not None:
                return problem
        return None
    return f"a {type(value).__name__} is not a JSON value"


# Deeper than any JSON parser assay uses would accept; keeps the walk off the recursion limit.
_MAX_DEPTH = 512


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
