"""Canonical JSON (RFC 8785, JCS) for hashing: one byte string per JSON value.

Object keys are sorted by their UTF-16 code units, there is no insignificant whitespace, strings
escape only what JSON requires, and numbers use the ECMAScript shortest form. Another language's
JCS library produces the same bytes, so an orchestrator written in anything can hash events.
"""

from __future__ import annotations

import math
from decimal import Decimal
from json.encoder import encode_basestring
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


def _encode(value: Any) -> str:
    if value is None or isinstance(value, bool):
        return {None: "null", True: "true", False: "false"}[value]
    if isinstance(value, int):
        # JCS numbers are IEEE doubles: beyond 2**53 other implementations print the double.
        return str(value) if abs(value) < 2**53 else _number(float(value))
    if isinstance(value, float):
        return _number(value)
    if isinstance(value, str):
        return encode_basestring(value)  # json.dumps(value, ensure_ascii=False), faster
    if isinstance(value, list | tuple):
        return "[" + ",".join(map(_encode, value)) + "]"
    if isinstance(value, dict):
        if not all(isinstance(key, str) for key in value):
            raise TypeError("JSON object keys must be strings")
        keys = sorted(value, key=lambda k: k.encode("utf-16-be"))
        items = [encode_basestring(key) + ":" + _encode(value[key]) for key in keys]
        return "{" + ",".join(items) + "}"
    raise TypeError(f"not a JSON value: {type(value).__name__}")


def canonical_json(value: Any) -> bytes:
    """The RFC 8785 canonical UTF-8 bytes of ``value``."""
    return _encode(value).encode("utf-8")


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
