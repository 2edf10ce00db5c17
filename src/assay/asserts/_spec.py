"""One assert, normalised: the op, whether it is negated, its arguments, and how it was written.

Goldens write asserts as strings (``'contains:foo'``, ``'is-json'``) or mappings
(``{op: contains, value: foo, path: /answer}``); scorer definitions use ``type`` instead of ``op``;
an unquoted YAML ``- contains: foo`` arrives as ``{contains: foo}``. All become one
:class:`AssertSpec`. Only the *shape* is checked here; whether the op exists and its arguments are
valid is decided when the check runs, so an unknown op fails closed as a failed check.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import GoldenError
from ._result import CheckResult

NOT_PREFIX = "not-"

# camelCase spellings accepted from the TypeScript helper's scorer definitions.
_ARG_ALIASES = {
    "caseInsensitive": "case_insensitive",
    "leftPath": "left_path",
    "rightPath": "right_path",
}


@dataclass(frozen=True, slots=True, eq=False)
class AssertSpec:
    """A normalised tier 1 assert.

    Attributes:
        op: the op name without any ``not-`` prefix.
        negate: True when the assert was written with a ``not-`` prefix.
        args: the remaining arguments (``value``, ``path``, ``flags``, ...), snake_case.
        text: the assert as the user would recognise it (``'not-contains:foo'``).
        passed: the (immutable) result of this assert passing, shared by every output that
            passes it, so a large suite does not allocate one result per passing check.

    Specs compare by identity: ``args`` may hold any JSON value. Treat them as read-only.
    """

    op: str
    negate: bool
    args: Mapping[str, Any] = field(default_factory=dict)
    text: str = ""
    passed: CheckResult = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "passed", CheckResult(self.text, self.full_op, True))

    @property
    def full_op(self) -> str:
        return f"{NOT_PREFIX}{self.op}" if self.negate else self.op


def _split_negation(op: str) -> tuple[str, bool]:
    if op.startswith(NOT_PREFIX):
        return op[len(NOT_PREFIX) :], True
    return op, False


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 80 else text[:77] + "..."


# String asserts repeat across goldens ('is-json', 'contains:FROM'): parse each text once.
_STRING_SPECS: dict[str, AssertSpec] = {}
_STRING_CACHE_LIMIT = 65536


def parse_assert(raw: Any, *, source: str | None = None, field: str = "asserts") -> AssertSpec:
    """Normalise one assert written in any accepted form.

    Raises:
        GoldenError: when the assert is neither a string nor a mapping with an op.
    """
    if isinstance(raw, str):
        cached = _STRING_SPECS.get(raw)
        if cached is not None:
            return cached
        op_text, sep, arg = raw.partition(":")
        op_text = op_text.strip()
        if not op_text:
            raise GoldenError(f"empty assert op in {raw!r}", source=source, field=field)
        op, negate = _split_negation(op_text)
        args: dict[str, Any] = {"value": arg} if sep else {}
        spec = AssertSpec(op=op, negate=negate, args=args, text=raw)
        if len(_STRING_SPECS) < _STRING_CACHE_LIMIT:
            _STRING_SPECS[raw] = spec
        return spec
    if isinstance(raw, Mapping):
        data = {_ARG_ALIASES.get(str(k), str(k)): v for k, v in raw.items()}
        if "op" in data or "type" in data:
            if "op" in data and "type" in data:
                raise GoldenError("give 'op' or 'type', not both", source=source, field=field)
            op_value = data.pop("op") if "op" in data else data.pop("type")
        elif len(data) == 1:
            # An unquoted ``- contains: foo`` in YAML: the single key is the op.
            op_value, only = next(iter(data.items()))
            data = {"value": only}
        else:
            raise GoldenError(
                "an assert mapping needs an 'op' (e.g. {op: contains, value: foo})",
                source=source,
                field=field,
            )
        if not isinstance(op_value, str) or not op_value.strip():
            raise GoldenError(
                "an assert's op must be a non-empty string", source=source, field=field
            )
        op, negate = _split_negation(op_value.strip())
        shown = op_value.strip()
        if "value" in data:
            shown += f":{_short(data['value'])}"
        if "path" in data:
            shown += f" @{data['path']}"
        return AssertSpec(op=op, negate=negate, args=data, text=shown)
    raise GoldenError(
        f"an assert must be a string like 'contains:foo' or a mapping, not {type(raw).__name__}",
        source=source,
        field=field,
    )
