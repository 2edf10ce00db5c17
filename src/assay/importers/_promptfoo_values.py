"""JavaScript's semantics for the values promptfoo handles: ``String(value)``, ``trim()``, and
``resolveVariables`` (src/evaluatorHelpers.ts), which promptfoo runs on a test's vars before it
renders the prompt."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final


def is_scalar(value: Any) -> bool:
    return isinstance(value, int | float | bool)


def js_string(value: Any) -> str:
    """JavaScript's ``String(value)`` of a YAML scalar (``1.0`` is ``"1"``, true ``"true"``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if value != value:
            return "NaN"
        if value in (float("inf"), float("-inf")):
            return "Infinity" if value > 0 else "-Infinity"
        if value.is_integer() and abs(value) < 1e21:
            return str(int(value))
        return repr(value)
    return str(value)


def js_trim(text: str) -> str:
    """JavaScript's ``String.prototype.trim`` (whitespace and line terminators, BOM too)."""
    return text.strip(
        " \t\n\r\v\f\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005"
        "\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
    )


def js_value(value: Any) -> str:
    """What JavaScript's ``String.replace`` inserts for a var that is not text."""
    if isinstance(value, (dict, list)):
        return "[object Object]" if isinstance(value, dict) else ",".join(map(js_value, value))
    return js_string(value) if is_scalar(value) else str(value)


VAR_REFERENCE: Final = re.compile(r"\{\{\s*(\w+)\s*\}\}")


def resolve_variables(vars_: Mapping[str, Any]) -> dict[str, Any]:
    """promptfoo's ``resolveVariables``: in each of up to 5 rounds, each text var's first
    ``{{ name }}`` naming a var that exists is replaced by that var's text (``String(value)``
    for one that is not text); a reference to a var that does not exist is left as it is."""
    out = dict(vars_)
    for _ in range(5):
        changed = False
        for key, value in out.items():
            if not isinstance(value, str):
                continue
            match = VAR_REFERENCE.search(value)
            if match and match.group(1) in out:
                replacement = out[match.group(1)]
                text = replacement if isinstance(replacement, str) else js_value(replacement)
                out[key] = value[: match.start()] + text + value[match.end() :]
                changed = True
        if not changed:
            break
    return out
