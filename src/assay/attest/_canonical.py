"""Canonical JSON (RFC 8785, JCS) for hashing: one byte string per JSON value.

Object keys are sorted by their UTF-16 code units, there is no insignificant whitespace, strings
escape only what JSON requires, and numbers use the ECMAScript shortest form. Another language's
JCS library produces the same bytes, so an orchestrator written in anything can hash events.
"""

from __future__ import annotations

import json
import math
from decimal import Decimal
from typing import Any


def _number(value: float) -> str:
    """ECMAScript Number::toString of a finite double (what RFC 8785 prescribes)."""
    if not math.isfinite(value):
        raise ValueError("NaN and Infinity are not JSON")
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    # repr() gives the shortest digits that round-trip, as ECMAScript requires.
    _, digit_tuple, exponent = Decimal(repr(abs(value))).normalize().as_tuple()
    digits = "".join(map(str, digit_tuple))
    k, n = len(digits), len(digits) + int(exponent)
    if k <= n <= 21:
        body = digits + "0" * (n - k)
    elif 0 < n <= 21:
        body = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        body = "0." + "0" * (-n) + digits
    else:
        e = n - 1
        body = digits[0] + ("." + digits[1:] if k > 1 else "") + f"e{'+' if e > 0 else '-'}{abs(e)}"
    return sign + body


def _encode(value: Any, out: list[str]) -> None:
    if value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, int):
        # JCS numbers are IEEE doubles: beyond 2**53 other implementations print the double.
        out.append(str(value) if abs(value) < 2**53 else _number(float(value)))
    elif isinstance(value, float):
        out.append(_number(value))
    elif isinstance(value, str):
        out.append(json.dumps(value, ensure_ascii=False))
    elif isinstance(value, list | tuple):
        out.append("[")
        for i, item in enumerate(value):
            if i:
                out.append(",")
            _encode(item, out)
        out.append("]")
    elif isinstance(value, dict):
        out.append("{")
        if not all(isinstance(key, str) for key in value):
            raise TypeError("JSON object keys must be strings")
        keys = sorted(value, key=lambda k: k.encode("utf-16-be"))
        for i, key in enumerate(keys):
            if i:
                out.append(",")
            out.append(json.dumps(key, ensure_ascii=False))
            out.append(":")
            _encode(value[key], out)
        out.append("}")
    else:
        raise TypeError(f"not a JSON value: {type(value).__name__}")


def canonical_json(value: Any) -> bytes:
    """The RFC 8785 canonical UTF-8 bytes of ``value``."""
    out: list[str] = []
    _encode(value, out)
    return "".join(out).encode("utf-8")


def parse_canonical(raw: bytes) -> dict[str, Any] | None:
    """The JSON object whose canonical form ``raw`` is, else None: bad UTF-8, not JSON, NaN or
    Infinity (not JSON, though Python's parser takes them), nested too deeply to parse, not an
    object, or not canonical. The one reader of journal lines, ledger lines and records."""
    from assay.asserts import strict_json_loads

    try:
        value = strict_json_loads(raw.decode("utf-8"))
        if not isinstance(value, dict) or canonical_json(value) != raw:
            return None
    except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
        return None
    return value
