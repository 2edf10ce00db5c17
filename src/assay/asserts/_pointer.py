"""RFC 6901 JSON Pointers, strictly.

``~1`` is decoded before ``~0``; array indices are ``0`` or a digit string without a leading
zero; ``-`` (one past the end) never resolves; only a mapping's own keys are followed. A pointer
that does not resolve yields :data:`MISSING` rather than raising, because a missing value is an
ordinary failed check, not an error.

The URI fragment form of section 6 is accepted too: ``#`` and ``#/c%25d`` are the pointers
``""`` and ``/c%d`` (the text after ``#`` is percent-decoded as UTF-8, then read as a pointer).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Final

__all__ = ["MISSING", "PointerSyntaxError", "escape_token", "parse_pointer", "resolve"]


class _Missing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"

    def __bool__(self) -> bool:
        return False


MISSING: Final[Any] = _Missing()


class PointerSyntaxError(ValueError):
    """The text is not a JSON Pointer (it must be empty or start with ``/``)."""


# A '~' that is not the escape '~0' or '~1'; a '%' that does not start a two-hex-digit escape.
_BAD_TILDE: Final = re.compile(r"~(?![01])")
_BAD_PERCENT: Final = re.compile(r"%(?![0-9A-Fa-f]{2})")
_ESCAPE: Final = re.compile(r"(?:%[0-9A-Fa-f]{2})+")


def _unescape(token: str, pointer: str) -> str:
    if _BAD_TILDE.search(token):
        raise PointerSyntaxError(f"invalid escape '~' in JSON Pointer {pointer!r}")
    return token.replace("~1", "/").replace("~0", "~")


def _percent_decode(fragment: str, written: str) -> str:
    """RFC 3986 percent-decoding, strictly: a stray '%' or escapes that are not UTF-8 make the
    pointer malformed (urllib's unquote would keep or replace them silently)."""
    if "%" not in fragment:
        return fragment
    if _BAD_PERCENT.search(fragment):
        raise PointerSyntaxError(f"invalid percent-encoding in JSON Pointer {written!r}")
    try:
        return _ESCAPE.sub(lambda m: bytes.fromhex(m[0].replace("%", "")).decode(), fragment)
    except UnicodeDecodeError:
        raise PointerSyntaxError(
            f"percent-encoding in JSON Pointer {written!r} is not UTF-8"
        ) from None


@lru_cache(maxsize=4096)
def _parse_cached(written: str) -> tuple[str, ...]:
    pointer = _percent_decode(written[1:], written) if written.startswith("#") else written
    if pointer == "":
        return ()
    if not pointer.startswith("/"):
        raise PointerSyntaxError(
            f"a JSON Pointer must start with '/' (or '#/' as a URI fragment): {written!r}"
        )
    return tuple(_unescape(token, written) for token in pointer[1:].split("/"))


def parse_pointer(pointer: str) -> tuple[str, ...]:
    """Split a pointer into its decoded reference tokens (a PointerSyntaxError if malformed)."""
    if not isinstance(pointer, str):
        raise PointerSyntaxError(f"a JSON Pointer must be a string, not {type(pointer).__name__}")
    return _parse_cached(pointer)


def escape_token(token: str) -> str:
    """Encode one reference token (``~`` → ``~0`` first, then ``/`` → ``~1``)."""
    return token.replace("~", "~0").replace("/", "~1")


def _is_index(token: str) -> bool:
    # RFC 6901: array-index = %x30 / ( %x31-39 *(%x30-39) ); isascii() keeps out other digits.
    return token.isascii() and token.isdigit() and (token == "0" or token[0] != "0")


def resolve(document: Any, pointer: str) -> Any:
    """The value at ``pointer`` in ``document``, or :data:`MISSING` (a malformed pointer
    raises PointerSyntaxError)."""
    value = document
    for token in parse_pointer(pointer):
        if isinstance(value, dict):
            if token not in value:
                return MISSING
            value = value[token]
        elif isinstance(value, list):
            if not _is_index(token):
                return MISSING
            index = int(token)
            if index >= len(value):
                return MISSING
            value = value[index]
        else:
            return MISSING
    return value
