"""Bounded YAML: the one safe loader for every YAML file assay reads (goldens, candidates
files, schemas written as YAML text), capped in size, nesting and alias expansion."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, Final

import yaml

from assay.errors import AssayError, GoldenError

# The C loader is several times faster; both are safe loaders (no arbitrary objects).
_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

# Bounds on one YAML document: its size, and how far its aliases may multiply it. An alias is
# a shared reference, so a "billion laughs" document loads small, then everything that walks it
# (validation, fingerprints, JSON) pays for every expansion: 45 s and 3 GB for one golden.
MAX_YAML_BYTES: Final = 64 * 1024 * 1024
ALIAS_EXPANSION_FACTOR: Final = 100  # expanded values per byte of YAML, at most (plus a floor)
_EXPANSION_FLOOR: Final = 100_000


def yaml_load(
    text: str,
    source: str,
    line_offset: int = 0,
    error: type[AssayError] = GoldenError,
    loader: Any = _Loader,
) -> Any:
    """Safe-load YAML; malformed YAML (naming the line), a document too big, nested too deeply
    or with aliases that loop or expand it too far is an ``error`` naming ``source``.
    ``loader``: a safe loader of other resolvers, e.g. YAML 1.2's booleans for promptfoo."""
    if len(text) > MAX_YAML_BYTES:
        raise error(
            f"the YAML document is over {MAX_YAML_BYTES // (1024 * 1024)} MiB", source=source
        )
    try:
        value = yaml.load(text, Loader=loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1 + line_offset}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        hint = _hint(text, problem, mark)
        raise error(f"malformed YAML{where}: {problem}{hint}", source=source) from None
    except RecursionError:
        raise error("the YAML document is nested too deeply", source=source) from None
    if "&" in text and "*" in text:  # only an alias (of an anchor) can share or loop a value
        check_expansion(value, _EXPANSION_FLOOR + ALIAS_EXPANSION_FACTOR * len(text), source, error)
    return value


def _hint(text: str, problem: str, mark: Any) -> str:
    """What to do about the two YAML errors a newcomer meets most, after the parser's own
    words (which, from the C parser, name neither the tab nor the escape)."""
    if mark is None or not 0 <= mark.index <= len(text):
        return ""
    line_start = text.rfind("\n", 0, mark.index) + 1
    line_end = text.find("\n", mark.index)
    line = text[line_start : len(text) if line_end < 0 else line_end]
    if "escape" in problem:
        # The C parser's mark is on the backslash, the pure-Python one's just after it.
        at = text.rfind("\\", line_start, mark.index + 1)
        escape = text[at : at + 2] if at >= 0 else "\\d"
        return (
            f" {escape}: use single quotes for regexes: in double quotes {escape} is an escape "
            f"(or double the backslash: {escape[0]}{escape})"
        )
    if "\t" in line[: len(line) - len(line.lstrip(" \t"))] or "tab" in problem:
        return ": tabs are not allowed for indentation (indent with spaces)"
    return ""


def _children(node: Any) -> Iterable[Any]:
    return node.values() if isinstance(node, dict) else node


def check_expansion(
    root: Any, budget: int, source: str, error: type[AssayError] = GoldenError
) -> None:
    """Count the values of ``root`` as if every alias were copied out, without copying: each
    shared list or mapping is sized once. A loop, or more than ``budget`` values, is an
    ``error`` naming ``source``."""
    sizes: dict[int, int] = {}
    open_: set[int] = set()  # containers on the current path: meeting one again is a loop
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, finished = stack.pop()
        key = id(node)
        if finished:
            open_.discard(key)
            total = 1 + sum(sizes.get(id(c), 1) for c in _children(node))
            if total > budget:
                raise error(
                    f"YAML aliases expand the document to more than {budget:,} values "
                    "(an alias bomb?); write the values out instead",
                    source=source,
                )
            sizes[key] = total
            continue
        if key in sizes:
            continue
        open_.add(key)
        stack.append((node, True))
        for child in _children(node):
            if isinstance(child, list | dict):
                if id(child) in open_:
                    raise error("a YAML alias contains itself", source=source)
                if id(child) not in sizes:
                    stack.append((child, False))


_FIELD_TOKEN = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def field_line(
    text: str, field: str, *, item: int | None = None, line_offset: int = 0
) -> int | None:
    """The 1-based line of ``field`` (``asserts[2].value``, ``tier``) in a YAML document, for an
    error message; with ``item``, inside that item of a top-level list. None when it cannot be
    found. Composes the document (nodes only, aliases unexpanded): meant for the error path."""
    try:
        node = yaml.compose(text, Loader=_Loader)
    except (yaml.YAMLError, RecursionError):
        return None
    line, _ = _walk(node, field, item)
    return None if line is None else line + 1 + line_offset


def _walk(node: Any, field: str, item: int | None) -> tuple[int | None, Any]:
    """The 0-based line of ``field`` under ``node`` (its key's, or the nearest found), and its
    value node (None when the field is not there)."""
    line = None
    if item is not None:
        node = _child(node, item)
        line = None if node is None else node.start_mark.line
    for name, index in _FIELD_TOKEN.findall(field):
        if node is None:
            break
        key_line, node = _entry(node, name) if name else (None, _child(node, int(index)))
        if key_line is not None:
            line = key_line
        elif node is not None:
            line = node.start_mark.line
    return line, node


def plain_scalars(text: str, fields: Iterable[str], *, item: int | None = None) -> list[str | None]:
    """For each of ``fields`` (``expected``, ``vars.flag``), its text in a YAML document when
    it is a plain (unquoted) scalar, as written (``No`` where YAML made False); else None.
    ``item``: inside that item of a top-level list. Composes the document once: meant for the
    few values whose spelling matters."""
    try:
        root = yaml.compose(text, Loader=_Loader)
    except (yaml.YAMLError, RecursionError):
        root = None
    found: list[str | None] = []
    for field in fields:
        node = None if root is None else _walk(root, field, item)[1]
        if isinstance(node, yaml.ScalarNode) and not node.style:  # C's plain style is ''
            found.append(str(node.value))
        else:
            found.append(None)
    return found


def _entry(node: Any, key: str) -> tuple[int | None, Any]:
    """The line of ``key`` in a mapping node, and its value node."""
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            if isinstance(key_node, yaml.ScalarNode) and key_node.value == key:
                return key_node.start_mark.line, value_node
    return None, None


def _child(node: Any, index: int) -> Any:
    if isinstance(node, yaml.SequenceNode) and 0 <= index < len(node.value):
        return node.value[index]
    return None
