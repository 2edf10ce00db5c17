"""One declarative validation layer for every file a user writes or assay reads back.

It is a walker, not pydantic or msgspec: their messages name no file, line or near miss, and
their import alone would cost a fast gate run much of its start-up time.

How it is used: a format declares its fields once, as :class:`Spec` values (:class:`Str`,
:class:`Bool`, :class:`Num`, :class:`Int`, :class:`List`, :class:`Dict`, :class:`Row`,
:class:`Maybe` (or null), :class:`Table`, and :class:`Check` for a rule of its own), in a
:class:`Table` or on the dataclass it fills (:func:`rule` puts a spec in a field's metadata,
:meth:`Table.of` reads them back).
``spec.check(value, At(source, error=FormatError))`` returns the value as assay holds it
(numbers as float, lists as tuples) or raises the format's error, one line: ``FILE:LINE: field
'x.y': problem``. The line is added where the format has lines (:func:`located` with
:func:`toml_line`, or ``assay._yaml.field_line``), on the error path only. A message may hold
``{field}``, ``{value}`` (its repr) and ``{found}`` (its JSON type, for files assay wrote: a
hand edit could hold anything). An unknown key's error names its near miss (:func:`near_miss`).
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any, NoReturn, TypeGuard

from assay.errors import AssayError, ConfigError

Key = str | int | None


def is_number(value: Any) -> TypeGuard[int | float]:
    """A finite real number (a bool is not a number here, whatever Python says)."""
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def json_type(value: Any) -> str:
    """A value named by its JSON type (a short string by its text)."""
    if isinstance(value, bool) or value is None:
        return {True: "true", False: "false", None: "null"}[value]
    if isinstance(value, str):
        return f"the string {json.dumps(value)}" if len(value) <= 40 else "a long string"
    if isinstance(value, int | float):
        return f"the number {value!r}" if math.isfinite(value) else "a non-finite number"
    return "a list" if isinstance(value, list | tuple) else "an object"


class At:
    """Where the values being checked sit: the file, the path of their table, the error class.
    A field's path is built only when it fails, so a value that is fine costs no string."""

    __slots__ = ("error", "field", "source")

    def __init__(
        self, source: str | None, field: str = "", error: type[AssayError] = ConfigError
    ) -> None:
        self.source, self.field, self.error = source, field, error

    def path(self, key: Key = None) -> str:
        if key is None:
            return self.field
        if isinstance(key, int):
            return f"{self.field}[{key}]"
        return f"{self.field}.{key}" if self.field else key

    def sub(self, key: Key) -> At:
        return self if key is None else At(self.source, self.path(key), self.error)

    def fail(self, message: str, key: Key = None) -> NoReturn:
        path = self.path(key)
        raise self.error(message, source=self.source, field=path or None)


Msg = str | None
Bound = float | None


class Spec:
    """What one field may hold (any value, as written, for a plain Spec). ``check`` returns it
    as assay holds it or raises naming the field; ``message`` replaces every message of the
    kind, ``required`` the message when the field is missing (True: ``message``; None: the
    field is optional). Specs are
    plain classes: a dataclass costs a millisecond to define, and start-up counts."""

    __slots__ = ("message", "required")

    def __init__(self, *, message: Msg = None, required: str | bool | None = None) -> None:
        self.message = message
        self.required = (message or "is required") if required is True else required or None

    def check(self, value: Any, at: At, key: Key = None) -> Any:
        return value

    def fail(self, at: At, key: Key, message: str, value: Any) -> NoReturn:
        """Fail with ``message`` (or the spec's own), its ``{field}``, ``{value}`` and
        ``{found}`` filled in."""
        text = self.message or message
        if "{" in text:
            fill = {"field": at.path(key), "value": repr(value), "found": json_type(value)}
            text = re.sub(r"\{(field|value|found)\}", lambda m: fill[m.group(1)], text)
        at.fail(text, key)


class Bool(Spec):
    __slots__ = ()

    def check(self, value: Any, at: At, key: Key = None) -> bool:
        if type(value) is not bool:
            self.fail(at, key, "must be true or false", value)
        return value


class Str(Spec):
    """A string: optionally matching ``pattern`` (whole: ``.+`` for a non-empty one) or one of
    ``choices`` (``message`` then says what it must be, ``{value}`` the value)."""

    __slots__ = ("choices", "match")

    def __init__(
        self, *, choices: tuple[str, ...] = (), pattern: Msg = None, **common: Any
    ) -> None:
        super().__init__(**common)
        self.choices = choices
        self.match = None if pattern is None else re.compile(pattern, re.DOTALL).fullmatch

    def check(self, value: Any, at: At, key: Key = None) -> str:
        if not isinstance(value, str):
            self.fail(at, key, "must be a string", value)
        if self.match is not None and not self.match(value):
            self.fail(at, key, "must be a non-empty string", value)
        if self.choices and value not in self.choices:
            self.fail(at, key, "{value} is not one of " + ", ".join(self.choices), value)
        return value


class Num(Spec):
    """A finite number, optionally ``> above``, ``>= at_least`` and ``<= at_most``; one message
    says the whole rule (``must be a number between 0 and 1``)."""

    __slots__ = ("above", "at_least", "at_most", "rule")

    def __init__(
        self, *, above: Bound = None, at_least: Bound = None, at_most: Bound = None, **common: Any
    ) -> None:
        super().__init__(**common)
        self.above, self.at_least, self.at_most = above, at_least, at_most
        sides = ((">", above), (">=", at_least), ("<=", at_most))
        rule = " and ".join(f"{op} {bound:g}" for op, bound in sides if bound is not None)
        if at_least is not None and at_most is not None:
            rule = f"between {at_least:g} and {at_most:g}"
        self.rule = f"a number {rule}".strip()

    def check(self, value: Any, at: At, key: Key = None) -> float:
        if not (
            is_number(value)
            and (self.above is None or value > self.above)
            and (self.at_least is None or value >= self.at_least)
            and (self.at_most is None or value <= self.at_most)
        ):
            self.fail(at, key, f"must be {self.rule}", value)
        return float(value)


class Int(Spec):
    """A whole number (not a bool; not 1.0 unless ``integral``: then 2.0 reads as 2),
    optionally ``>= at_least``."""

    __slots__ = ("at_least", "integral")

    def __init__(
        self, *, at_least: int | None = None, integral: bool = False, **common: Any
    ) -> None:
        super().__init__(**common)
        self.at_least, self.integral = at_least, integral

    def check(self, value: Any, at: At, key: Key = None) -> int:
        if self.integral and isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            self.fail(at, key, "must be an integer", value)
        if self.at_least is not None and value < self.at_least:
            self.fail(at, key, f"must be an integer >= {self.at_least}", value)
        return value


class List(Spec):
    """A list (a tuple once checked), each item checked by ``of``: at the list's own field, or
    with ``indexed`` at ``field[i]``. ``message`` is for a value that is no list (or an empty
    one, with ``non_empty``)."""

    __slots__ = ("indexed", "non_empty", "of")

    def __init__(
        self,
        of: Spec | None = None,
        *,
        non_empty: bool = False,
        indexed: bool = False,
        **common: Any,
    ) -> None:
        super().__init__(**common)
        self.of, self.non_empty, self.indexed = of, non_empty, indexed

    def check(self, value: Any, at: At, key: Key = None) -> tuple[Any, ...]:
        if not isinstance(value, list | tuple) or (self.non_empty and not value):
            self.fail(at, key, "must be a list", value)
        if self.of is None:
            return tuple(value)
        if self.indexed:
            inner = at.sub(key)
            return tuple(self.of.check(item, inner, i) for i, item in enumerate(value))
        return tuple(self.of.check(item, at, key) for item in value)


class Dict(Spec):
    """A mapping: as written (what its keys hold is another rule's to check), or with each
    value checked by ``of`` at ``field.key`` (``message``: for a value that is no mapping)."""

    __slots__ = ("of",)

    def __init__(self, of: Spec | None = None, **common: Any) -> None:
        super().__init__(**common)
        self.of = of

    def check(self, value: Any, at: At, key: Key = None) -> dict[Any, Any]:
        if not isinstance(value, dict):
            self.fail(at, key, "must be a mapping", value)
        if self.of is None:
            return value
        inner, of = at.sub(key), self.of
        return {name: of.check(item, inner, str(name)) for name, item in value.items()}


class Maybe(Spec):
    """``of``, or null: for a field that may be null but not absent (``"passed": null`` is an
    undecided result; a missing one is an error). ``Table(null_absent=True)`` is for fields
    whose null means absent."""

    __slots__ = ("of",)

    def __init__(self, of: Spec, **common: Any) -> None:
        super().__init__(**common)
        self.of = of

    def check(self, value: Any, at: At, key: Key = None) -> Any:
        return None if value is None else self.of.check(value, at, key)


class Row(Spec):
    """A list of exactly one item per spec in ``items``, item i checked at ``field[i]``: a
    record files assay writes hold compactly (``[id, position, fingerprint, strict]``)."""

    __slots__ = ("items",)

    def __init__(self, *items: Spec, **common: Any) -> None:
        super().__init__(**common)
        self.items = items

    def check(self, value: Any, at: At, key: Key = None) -> tuple[Any, ...]:
        if not isinstance(value, list | tuple) or len(value) != len(self.items):
            self.fail(at, key, f"must be a list of {len(self.items)} items", value)
        inner = at.sub(key)
        pairs = enumerate(zip(self.items, value, strict=True))
        return tuple(spec.check(item, inner, i) for i, (spec, item) in pairs)


class Check(Spec):
    """A rule of the format's own: ``fn(value, at, key)`` returns the value or fails with
    ``at.fail(message, key)``."""

    __slots__ = ("fn",)

    def __init__(self, fn: Callable[[Any, At, Key], Any], **common: Any) -> None:
        super().__init__(**common)
        self.fn = fn

    def check(self, value: Any, at: At, key: Key = None) -> Any:
        return self.fn(value, at, key)


def rule(spec: Spec, default: Any = dataclasses.MISSING, factory: Any = dataclasses.MISSING) -> Any:
    """A dataclass field a user writes, checked by ``spec`` (see :meth:`Table.of`). A field with
    no default is ``field(metadata={"rule": spec})``, which type checkers read as such."""
    return dataclasses.field(default=default, default_factory=factory, metadata={"rule": spec})


def near_miss(
    key: object, known: Iterable[str], *, also: Mapping[str, str] | None = None, cutoff: float = 0.6
) -> str | None:
    """The known name ``key`` is a typo of (``temprature``, ``Asserts``, ``max-cost-usd``), or the
    name assay gives what another tool calls ``key`` (``also``: ``prompts`` -> ``candidates``)."""
    if not isinstance(key, str):
        return None
    folded = key.strip().lower().replace("-", "_")
    names = sorted(known)
    if folded in names or (also and folded in also):
        return folded if folded in names else (also or {})[folded]
    import difflib  # only for a key nobody knows: a valid file never loads it

    close = difflib.get_close_matches(folded, names, n=1, cutoff=cutoff)
    return close[0] if close else None


def did_you_mean(
    message: str,
    key: object,
    known: Iterable[str],
    also: Mapping[str, str] | None = None,
    cutoff: float = 0.6,
) -> str:
    """``message``, and the near miss of ``key`` when there is one (``: did you mean 'x'?``)."""
    meant = near_miss(key, known, also=also, cutoff=cutoff)
    return message if meant is None else f"{message}: did you mean {meant!r}?"


class Table(Spec):
    """A mapping of declared fields, each checked by its spec; returns the checked values of the
    fields given. A key nobody declared is an error (a typo must never silently change a run)
    saying ``unknown`` (``{key}``: the key, ``{known}``: the fields) and its near miss, unless
    ``keep(key)`` keeps it aside; a ``renamed`` key is an error naming its new name.

    ``also`` names other tools' names of fields (``prompts``: ``candidates``); ``null_absent``
    reads a null as an absent field; ``names_table`` names the table in an unknown key's error.
    """

    __slots__ = ("also", "fields", "keep", "known", "names", "need", "nulls", "renamed", "unknown")

    def __init__(
        self,
        fields: Mapping[str, Spec],
        *,
        unknown: str = "unknown setting (known: {known})",
        also: Mapping[str, str] | None = None,
        keep: Callable[[str], bool] | None = None,
        renamed: Mapping[str, str] | None = None,
        null_absent: bool = False,
        names_table: bool = False,
        **common: Any,
    ) -> None:
        super().__init__(**common)
        self.fields, self.known, self.unknown = fields, frozenset(fields), unknown
        self.also, self.keep, self.renamed = also, keep, renamed or {}
        self.nulls, self.names = null_absent, names_table
        self.need = tuple(name for name, s in fields.items() if s.required is not None)

    @classmethod
    def of(cls, model: type[Any], **options: Any) -> Table:
        """The table of a dataclass's fields declared with :func:`rule`."""
        specs = {f.name: f.metadata["rule"] for f in dataclasses.fields(model) if f.metadata}
        return cls(specs, **options)

    def check(self, value: Any, at: At, key: Key = None) -> dict[str, Any]:
        if type(value) is not dict and not isinstance(value, Mapping):
            self.fail(at, key, "must be a table", value)
        inner = at.sub(key)
        if not self.known.issuperset(value):
            self.refuse(value, inner)
        for name in self.need:
            if value.get(name) is None if self.nulls else name not in value:
                inner.fail(self.fields[name].required or "", name)
        out = {}
        for name, item in value.items():
            spec = self.fields.get(name)
            if spec is not None and not (item is None and self.nulls):
                out[name] = spec.check(item, inner, name)
        return out

    def refuse(self, value: Mapping[Any, Any], at: At) -> None:
        """Fail on the first key (in the file's order) that is not a field and not kept."""
        for name in value:
            key = name if isinstance(name, str) else str(name)
            if name in self.known or (key not in self.renamed and self.keep and self.keep(key)):
                continue
            if key in self.renamed:
                at.fail(f"renamed to {self.renamed[key]!r} (the old name is no longer read)", key)
            known = ", ".join(sorted(self.known))
            message = self.unknown.replace("{key}", repr(name)).replace("{known}", known)
            message = did_you_mean(message, key, self.known, self.also)
            at.fail(message, None if self.names else key)


# ------------------------------------------------------------------------ lines of a field


def located(exc: AssayError, line: int | None) -> AssayError:
    """``exc`` with the line of its field (``file:12: field 'x'``), when there is one."""
    if line is None or exc.line is not None:
        return exc
    return type(exc)(exc.message, source=exc.source, field=exc.field, line=line)


# Patterns, not compiled ones: re compiles (and caches) them when an error needs a line.
_KEY = r"(?:[A-Za-z0-9_-]+|\"(?:[^\"\\]|\\.)*\"|'[^']*')"
_TOML_KEY = rf"\s*({_KEY}(?:\s*\.\s*{_KEY})*)\s*="
_TOML_TABLE = r"\s*\[\[?([^\[\]]+)\]\]?\s*(?:#.*)?$"
_TOML_PART = r"([A-Za-z0-9_-]+)|\"((?:[^\"\\]|\\.)*)\"|'([^']*)'"


def _toml_parts(dotted: str) -> list[str]:
    found = re.findall(_TOML_PART, re.sub(r"\[\d+\]", "", dotted))
    return [bare or double or single for bare, double, single in found]


def toml_line(text: str, field: str | None, prefix: str = "") -> int | None:
    """The 1-based line of ``field`` (``judge.provider.timeout_s``, ``schemas."https://x"``) in
    a TOML document whose settings are under the table ``prefix`` (``tool.assay``): the line of
    its key, or of the nearest table or key holding it. Meant for the error path."""
    if not field:
        return None
    target = _toml_parts(f"{prefix}.{field}" if prefix else field)
    best: int | None = None
    best_len, table, quote = 0, list[str](), ""
    for number, line in enumerate(text.splitlines(), 1):
        if quote:  # inside a multi-line string
            quote = "" if line.count(quote) % 2 else quote
            continue
        if header := re.match(_TOML_TABLE, line):
            path = table = _toml_parts(header.group(1))
        elif key := re.match(_TOML_KEY, line):
            path = table + _toml_parts(key.group(1))
            quote = next((q for q in ('"""', "'''") if line[key.end() :].count(q) % 2), "")
        else:
            continue
        if path == target:
            return number
        if best_len < len(path) < len(target) and target[: len(path)] == path:
            best, best_len = number, len(path)
    return best
