"""A fast path for the frontmatter most goldens have: flat ``key: scalar`` lines and lists of
scalars, read exactly as PyYAML reads them.

PyYAML's pure-Python constructor is most of the cost of loading a markdown golden. This module
reads the common subset line by line and gives up on anything else (:data:`UNSUPPORTED`), which
the caller hands to PyYAML.

The subset, and why each value is PyYAML's own:

* a block mapping at column 0 of plain keys (``id``, ``max_cost_usd``), each followed by
  ``: value``, or by nothing and then a block sequence of scalars (``- item`` lines, one
  indentation), blank lines and comment lines anywhere;
* scalars on one line: single-quoted, double-quoted without a backslash, a flow sequence
  ``[a, 'b']`` of such scalars, or a plain scalar that does not start with an indicator and
  holds no ``: `` (a plain scalar's text ends at `` #``, trailing spaces dropped).

A plain scalar's type is decided by the loader's own implicit resolvers (the same regular
expressions PyYAML applies, read from the loader class at call time), and ints, floats,
booleans and nulls are built by PyYAML's own ``SafeConstructor`` methods; any other type (a
date, a merge key, ``=``) is left to PyYAML. Anything outside the subset (tabs, CR, anchors,
tags, block scalars, flow mappings, nested mappings, multi-line scalars, escapes, special line
breaks, a document over the size bound, characters YAML refuses) is unsupported, so errors and
their messages always come from PyYAML. ``tests/goldens/test_frontmatter_fast_path.py``
compares both on generated documents, types included.
"""

from __future__ import annotations

import re
from typing import Any, Final

from yaml.constructor import SafeConstructor
from yaml.nodes import ScalarNode
from yaml.reader import Reader

from assay._yaml import MAX_YAML_BYTES
from assay._yaml import _Loader as _LOADER  # the loader yaml_load uses: same resolvers

UNSUPPORTED: Final[Any] = object()

_STR_TAG: Final = "tag:yaml.org,2002:str"
# The scalar types this path builds itself (with PyYAML's constructor); the others are PyYAML's.
_BUILT: Final = frozenset(f"tag:yaml.org,2002:{name}" for name in ("int", "float", "bool", "null"))
_CONSTRUCTOR: Final = SafeConstructor()

# Characters PyYAML's reader refuses, and line breaks YAML 1.1 knows besides \n (\x85, \u2028,
# \u2029); a BOM, tab or CR changes how the text is scanned: all are left to PyYAML.
_NON_PRINTABLE: Final = Reader.NON_PRINTABLE
_AWKWARD: Final = re.compile("[\t\r\x85\u2028\u2029\ufeff]")
# Both at once for ASCII text: every control character but \n (tab and CR included), and DEL.
_ASCII_AWKWARD: Final = re.compile("[\x00-\x09\x0b-\x1f\x7f]")

_KEY: Final = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*):(?: +(.*))?\Z")
_ITEM: Final = re.compile(r"( *)-(?: +(.*))?\Z")
# A single-quoted scalar's inside is matched possessively (*+: what it took is never given
# back, which changes no match: a closing quote is never followed by another). A plain
# repetition of a group keeps a backtracking record per repetition, about 135 bytes each: one
# per character made a 20 MB single-quoted value peak at 2.7 GB, one per '' an English text
# full of it''s at 7 times its size (bench/golden_memory.py).
_SINGLE: Final = re.compile(r"'([^']*+(?:''[^']*+)*+)'(?: +#.*)? *\Z")
_DOUBLE: Final = re.compile(r'"([^"\\]*)"(?: +#.*)? *\Z')
_FLOW_EMPTY: Final = re.compile(r"\[ *\](?: +#.*)? *\Z")
# One flow item and what follows it (a comma or the closing bracket). A plain item holds no
# character that ends or changes a plain scalar in flow context (, [ ] { } # : ?) nor a quote.
_FLOW_ITEM: Final = re.compile(
    r" *(?:'([^']*+(?:''[^']*+)*+)'"  # single-quoted (possessive, as _SINGLE)
    r'|"([^"\\]*)"'  # double-quoted, no escape
    r"|([^ ,\[\]{}#&*!|>'\"%@`?:\-][^,\[\]{}#:?'\"]*?))"  # plain
    r" *([,\]])"
)
_AFTER_FLOW: Final = re.compile(r"(?: +#.*)? *\Z")
# A plain scalar cannot start with an indicator (PyYAML's check_plain); '-', '?' and ':' may
# start one when a non-space follows, which this path leaves to PyYAML.
_INDICATORS: Final = frozenset("-?:,[]{}#&*!|>'\"%@`")

_PLAIN_CACHE: dict[str, Any] = {}
_PLAIN_CACHE_LIMIT: Final = 4096
# Only short texts are remembered (here and in _LINES): those are the ones that recur across a
# suite, and a long answer kept in a cache would outlive its golden (a suite of large goldens
# would hold every one of them until the process ends).
_CACHED_MAX_CHARS: Final = 256


def _plain(text: str) -> Any:
    """A plain scalar's value: resolved and built as PyYAML does, or UNSUPPORTED."""
    cached = _PLAIN_CACHE.get(text, UNSUPPORTED)
    if cached is not UNSUPPORTED:
        return cached
    resolvers = _LOADER.yaml_implicit_resolvers
    candidates = [*resolvers.get(text[0] if text else "", ()), *resolvers.get(None, ())]
    tag = next((found for found, pattern in candidates if pattern.match(text)), _STR_TAG)
    if tag == _STR_TAG:
        value: Any = text
    elif tag in _BUILT:
        value = _CONSTRUCTOR.yaml_constructors[tag](_CONSTRUCTOR, ScalarNode(tag, text))
    else:
        return UNSUPPORTED
    if len(_PLAIN_CACHE) < _PLAIN_CACHE_LIMIT and len(text) <= _CACHED_MAX_CHARS:
        _PLAIN_CACHE[text] = value
    return value


def _flow(rest: str) -> Any:
    """A one-line flow sequence of scalars, or UNSUPPORTED."""
    if _FLOW_EMPTY.match(rest):
        return []
    items: list[Any] = []
    pos = 1
    while True:
        m = _FLOW_ITEM.match(rest, pos)
        if m is None:
            return UNSUPPORTED
        single, double, plain, end = m.groups()
        if single is not None:
            items.append(single.replace("''", "'"))
        elif double is not None:
            items.append(double)
        else:
            value = _plain(plain)
            if value is UNSUPPORTED:
                return UNSUPPORTED
            items.append(value)
        pos = m.end()
        if end == "]":
            return items if _AFTER_FLOW.match(rest, pos) else UNSUPPORTED


def _scalar(rest: str) -> Any:
    """The value written after ``key: `` or ``- `` (not empty, no leading space)."""
    first = rest[0]
    if first == "'":
        m = _SINGLE.match(rest)
        return UNSUPPORTED if m is None else m.group(1).replace("''", "'")
    if first == '"':
        m = _DOUBLE.match(rest)
        return UNSUPPORTED if m is None else m.group(1)
    if first == "[":
        return _flow(rest)
    if first in _INDICATORS:
        return UNSUPPORTED
    cut = rest.find(" #")
    text = (rest if cut < 0 else rest[:cut]).rstrip(" ")
    if ": " in text or text.endswith(":"):
        return UNSUPPORTED
    return _plain(text)


# What a line is, once read: a line is read the same wherever it stands, so lines that recur
# across a suite (``asserts:``, ``  - is-json``) are read once. Only a flow sequence's list is
# mutable: each use gets a copy.
_SKIP: Final = (0,)
_KEY_VALUE: Final = 1  # (1, key, value)
_OPEN_KEY: Final = 2  # (2, key): nothing after the colon; a block sequence may follow
_ITEM_LINE: Final = 3  # (3, indentation, value)
_LINES: dict[str, Any] = {}
_LINES_LIMIT: Final = 8192


def _read_line(line: str) -> Any:
    """What one line is (see above), or UNSUPPORTED."""
    if not line:
        return _SKIP
    first = line[0]
    if first == "#":
        return _SKIP
    if first == " " or first == "-":
        stripped = line.lstrip(" ")
        if not stripped or stripped[0] == "#":
            return _SKIP
        m = _ITEM.match(line)
        if m is None:
            return UNSUPPORTED  # a nested mapping or a continuation line
        spaces, rest = m.groups()
        if rest is None or not rest.strip(" ") or rest[0] == "#":
            return UNSUPPORTED  # a null item ("-" alone): PyYAML's
        value = _scalar(rest)
        return UNSUPPORTED if value is UNSUPPORTED else (_ITEM_LINE, len(spaces), value)
    m = _KEY.match(line)
    if m is None:
        return UNSUPPORTED
    key, rest = m.groups()
    if len(key) > 1000 or not isinstance(_plain(key), str):
        # A key YAML reads as a boolean, number or null (`yes:`), or one longer than the
        # 1024 characters a YAML simple key may have.
        return UNSUPPORTED
    if rest is None:
        return (_OPEN_KEY, key)
    stripped = rest.lstrip(" ")
    if not stripped or stripped[0] == "#":  # nothing but spaces or a comment
        return (_OPEN_KEY, key)
    value = _scalar(rest)
    return UNSUPPORTED if value is UNSUPPORTED else (_KEY_VALUE, key, value)


def load_frontmatter(text: str) -> Any:
    """The frontmatter's value as ``yaml.load(text, Loader=CSafeLoader)`` returns it, or
    :data:`UNSUPPORTED` when ``text`` is outside the subset this module reads."""
    if len(text) > MAX_YAML_BYTES:
        return UNSUPPORTED
    if text.isascii():
        if _ASCII_AWKWARD.search(text):
            return UNSUPPORTED
    elif _AWKWARD.search(text) or _NON_PRINTABLE.search(text):
        return UNSUPPORTED
    lines = _LINES
    out: dict[Any, Any] = {}
    open_key: str | None = None  # a key with no value yet: a block sequence may follow
    items: list[Any] | None = None
    indent = -1
    for line in text.split("\n"):
        read = lines.get(line)
        if read is None:
            read = _read_line(line)
            if read is UNSUPPORTED:
                return UNSUPPORTED
            if len(line) <= _CACHED_MAX_CHARS:
                if len(lines) >= _LINES_LIMIT:
                    lines.clear()
                lines[line] = read
        kind = read[0]
        if kind == _ITEM_LINE:
            if open_key is None:
                return UNSUPPORTED  # an item after a key that has a value, or before any key
            if items is None:
                items, indent = [], read[1]
                out[open_key] = items
            elif read[1] != indent:
                return UNSUPPORTED
            value = read[2]
            items.append(list(value) if type(value) is list else value)
        elif kind == _KEY_VALUE:
            value = read[2]
            out[read[1]] = list(value) if type(value) is list else value
            open_key, items = None, None
        elif kind == _OPEN_KEY:
            out[read[1]] = None
            open_key, items = read[1], None
    return out if out else UNSUPPORTED


__all__ = ["UNSUPPORTED", "load_frontmatter"]
