"""One assert, normalised: the op, whether it is negated, its arguments, and how it was written.

Goldens write asserts as strings (``'contains:foo'``, ``'is-json'``) or mappings
(``{op: contains, value: foo, path: /answer}``); scorer definitions use ``type`` instead of ``op``;
an unquoted YAML ``- contains: foo`` arrives as ``{contains: foo}``. All become one
:class:`AssertSpec`. Only the *shape* is checked here. A golden's asserts are checked further
when it is loaded (the op exists, its arguments are known, a regex compiles:
:mod:`assay.asserts._check`); through the Python API, an unknown op or a bad argument is decided
when the check runs, and fails closed as a failed check.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Callable, Mapping
from typing import Any, Final

from assay.asserts._result import CheckResult, clip
from assay.errors import GoldenError
from assay.validate import At, Maybe, Num, Str, is_number

NOT_PREFIX = "not-"

# camelCase spellings accepted from the TypeScript helper's scorer definitions.
_ARG_ALIASES = {
    "caseInsensitive": "case_insensitive",
    "leftPath": "left_path",
    "rightPath": "right_path",
}


class AssertSpec:
    """A normalised tier 1 assert.

    Attributes:
        op: the op name without any ``not-`` prefix.
        negate: True when the assert was written with a ``not-`` prefix.
        args: the remaining arguments (``value``, ``path``, ``flags``, ...), snake_case.
        text: the assert as the user would recognise it (``'not-contains:foo'``).
        passed: the (immutable) result of this assert passing, shared by every output that
            passes it, so a large suite does not allocate one result per passing check.
        weight: how much the check counts in its golden's (or group's) score; 0 makes it
            informational. Read from ``args['weight']`` (kept there so fingerprints see it).
        children: a group's (``assert-set``, ``any-of``) parsed asserts, else None; the raw
            list stays in ``args['asserts']`` so the spec's arguments remain JSON.
        plain: the check counts exactly 0 or 1 with weight 1, so a golden made only of plain
            checks is decided by the original all-must-pass rule without any weighting.
        rank: the op's cost (0 cheap, 1 ``similar``, 2 ``judge``): the order a golden's
            asserts run in, and which may be skipped (see assay.cascade._cascade).
        templated: a ``{{ var }}`` (or ``{% ... %}``) is in one of its :data:`RENDERED_ARGS`
            (or a child's): a golden renders it with its vars when it is loaded.
        checked: the load-time checks passed (:func:`assay.asserts.check_asserts`); a spec
            shared by many goldens is checked once.

    Specs compare by identity and are read-only (``args`` may hold any JSON value). ``text`` and
    ``passed`` are computed on first use: the scorer API builds a spec per call and rarely
    needs either.
    """

    __slots__ = (
        "_passed",
        "_text",
        "args",
        "checked",
        "children",
        "full_op",
        "negate",
        "op",
        "plain",
        "rank",
        "templated",
        "weight",
    )

    def __init__(
        self,
        op: str,
        negate: bool,
        args: Mapping[str, Any] | None = None,
        text: str | None = None,
        children: tuple[AssertSpec, ...] | None = None,
    ):
        self.op = op
        self.negate = negate
        self.args: Mapping[str, Any] = {} if args is None else args
        self.full_op = f"{NOT_PREFIX}{op}" if negate else op
        self._text = text
        self._passed: CheckResult | None = None
        self.children = children
        raw_weight = self.args.get("weight", 1) if self.args else 1
        # parse_assert rejects a bad weight; a spec built in Python with one counts as 1.
        self.weight = float(raw_weight) if is_number(raw_weight) and raw_weight >= 0 else 1.0
        self.plain = self.weight == 1.0 and op not in SCORED_OPS
        self.rank = COST_RANKS.get(op, 0)
        self.checked = False
        self.templated: bool = (bool(self.args) and _holds_template(self.args)) or any(
            [child.templated for child in children or ()]
        )

    @property
    def text(self) -> str:
        if self._text is None:
            shown = self.full_op
            if "value" in self.args:
                shown += f":{_short(self.args['value'])}"
            if "path" in self.args:
                shown += f" @{self.args['path']}"
            self._text = shown
        return self._text

    @property
    def passed(self) -> CheckResult:
        if self._passed is None:
            self._passed = CheckResult(self.text, self.full_op, True)
        return self._passed

    def __repr__(self) -> str:
        return f"AssertSpec({self.full_op!r}, args={dict(self.args)!r})"


# Ops whose check carries its own score (evidence ``{"score": x}``) rather than 0 or 1.
GROUP_OPS: Final = frozenset({"assert-set", "any-of"})
SCORED_OPS: Final = frozenset({"python", "javascript", "similar", "judge", *GROUP_OPS})
# The model-graded ops and their cost rank (every other op: 0, cheap): a golden's asserts run
# cheapest first, and a costlier one is skipped once the cheaper ones decided the outcome.
COST_RANKS: Final = {"similar": 1, "judge": 2}
JUDGE_OP: Final = "judge"
_JUDGE_ARGS: Final = frozenset({"rubric", "threshold", "weight", "description", "name"})
_GROUP_ARGS: Final = frozenset({"asserts", "weight", "description", "name"})
# What a judge's or an assert-set's threshold, an assert's weight and a rubric may be.
_THRESHOLD: Final = Maybe(
    Num(at_least=0, at_most=1, message="threshold must be a number between 0 and 1")
)
_WEIGHT: Final = Num(at_least=0, message="weight must be a number >= 0, not {value}")
_RUBRIC: Final = Str(pattern=r".*\S.*", message="a judge assert needs a non-empty 'rubric'")


def yaml_typed(value: Any) -> str | None:
    """What YAML made of an unquoted scalar that is not text (None for a string or a
    container): ``the number 3.1``, ``true``, ``null``, ``a date (2024-01-01)``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, int | float):
        return f"the number {value!r}"
    if isinstance(value, datetime.date):
        return f"a date ({value.isoformat()})"
    return None


def quote_it(what: str, typed: str, example: str) -> str:
    """The one message for a value YAML typed that the author wrote as text: ``what`` (``the
    value of 'contains'``, ``expected``) was read as ``typed`` (``the number 3.1``, ``false``);
    ``example`` shows it quoted."""
    return f"YAML read {what} as {typed}: quote it ({example}) to test the text you wrote"


# The words YAML 1.1 reads as booleans that YAML 1.2 and JSON do not (any case): an unquoted
# `expected: No` is False, and the answer "No" would fail. `true` and `false` are JSON's own.
YAML11_BOOLEANS: Final = frozenset({"yes", "no", "on", "off"})


def yaml11_word_message(what: str, word: str, value: bool, example_key: str | None) -> str:
    """:func:`quote_it` for an unquoted YAML 1.1 boolean word (``No``) where a value is
    compared: the text was meant, or ``true`` / ``false`` for the boolean. ``example_key``:
    the key it is the value of (None: a list item)."""
    typed = "true" if value else "false"
    example = f'"{word}"' if example_key is None else f'{example_key}: "{word}"'
    message = quote_it(f"the unquoted {word} of {what}", typed, example)
    return f"{message}, or write {typed} for the boolean"


# The arguments whose text a golden renders with its vars (promptfoo renders an assert's value;
# a regex may be written as pattern; a judge's rubric is its value). Others (path, flags,
# threshold...) are settings, never rendered.
RENDERED_ARGS: Final = ("value", "pattern", "rubric")


def is_template(text: str) -> bool:
    return "{{" in text or "{%" in text


def _holds_template(args: Mapping[str, Any]) -> bool:
    stack = [args[name] for name in RENDERED_ARGS if name in args]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if is_template(item):
                return True
        elif isinstance(item, Mapping):
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
    return False


# render(text, field) -> the rendered text; ``field`` names the argument (``value``,
# ``value.answer``, ``asserts[0].value`` inside a group) for its errors.
Renderer = Callable[[str, str], str]


def render_spec(spec: AssertSpec, render: Renderer, field: str = "") -> AssertSpec:
    """``spec`` with each template in its :data:`RENDERED_ARGS` (and its children's) rendered
    by ``render``; ``spec`` itself when it holds none. ``field``: where ``spec`` sits inside a
    group (``asserts[1]``), for the errors ``render`` raises."""
    if not spec.templated:
        return spec
    prefix = f"{field}." if field else ""
    args = dict(spec.args)
    for name in RENDERED_ARGS:
        if name in args:
            args[name] = _render_value(args[name], render, prefix + name)
    children = None
    if spec.children is not None:
        children = tuple(
            render_spec(child, render, f"{prefix}asserts[{i}]")
            for i, child in enumerate(spec.children)
        )
        # A group's raw list stays in its args (what fingerprints read): rendered alike.
        args["asserts"] = [_spec_dict(child) for child in children]
    text = f"{JUDGE_OP}:{_short(args['rubric'])}" if spec.op == JUDGE_OP else None
    return AssertSpec(spec.op, spec.negate, args, text=text, children=children)


def _render_value(value: Any, render: Renderer, field: str) -> Any:
    if isinstance(value, str):
        return render(value, field) if is_template(value) else value
    if isinstance(value, Mapping):
        return {k: _render_value(v, render, f"{field}.{k}") for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_render_value(v, render, f"{field}[{i}]") for i, v in enumerate(value)]
    return value


def _spec_dict(spec: AssertSpec) -> dict[str, Any]:
    """A parsed child as the mapping it could have been written as."""
    return {"op": spec.full_op, **spec.args}


# Ops that test text: YAML's typing of an unquoted argument (3.10 -> 3.1) would test something
# the author never wrote. equals and the JSON ops take JSON values and keep them.
TEXT_OPS = frozenset(
    "contains icontains starts-with contains-any contains-all regex levenshtein similar".split()
)
_TEXT_ARGS = ("value", "pattern")


def typed_text_argument(spec: AssertSpec) -> tuple[str, str] | None:
    """For a text op, the argument YAML typed as something other than text and what it made
    of it (``('value', 'the number 3.1')``), else None. List items count (contains-any)."""
    if spec.op not in TEXT_OPS:
        return None
    for name in _TEXT_ARGS:
        if name not in spec.args:
            continue
        value = spec.args[name]
        items = value if isinstance(value, list) and spec.op in _LIST_OPS else [value]
        for item in items:
            if (typed := yaml_typed(item)) is not None:
                return name, typed
    return None


_LIST_OPS = frozenset({"contains-any", "contains-all"})


def find_date(value: Any) -> str | None:
    """The first date or time inside ``value`` (YAML makes one of an unquoted 2024-01-01)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, datetime.date):
            return item.isoformat()
        if isinstance(item, Mapping):
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
    return None


def _split_negation(op: str) -> tuple[str, bool]:
    return op.removeprefix(NOT_PREFIX), op.startswith(NOT_PREFIX)


def _short(value: Any) -> str:
    return clip(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))


# String asserts repeat across goldens ('is-json', 'contains:FROM'): parse each text once.
_STRING_SPECS: dict[str, AssertSpec] = {}
_STRING_CACHE_LIMIT = 65536


# A golden's whole list of string asserts repeats too: every golden that lists the same texts
# gets the same tuple (one object for 10,000 goldens; what remembers work by it, such as a
# baseline's fingerprints, does that work once).
_STRING_LISTS: dict[tuple[str, ...], tuple[AssertSpec, ...]] = {}
_LIST_CACHE_LIMIT = 16384


def parse_asserts(raws: list[Any], *, source: str | None) -> tuple[tuple[AssertSpec, ...], bool]:
    """:func:`parse_assert` of each entry of a golden's ``asserts`` list (``asserts[i]`` in
    errors), and whether any entry was a mapping: only a mapping's arguments can hold a value
    YAML typed (a string entry's argument is the text after its colon)."""
    key: tuple[Any, ...] | None = tuple(raws)
    try:
        known = _STRING_LISTS.get(key)  # type: ignore[arg-type]
    except TypeError:  # a mapping among them: not a list of texts
        known, key = None, None
    if known is not None:
        return known, False
    specs = []
    mapped = False
    for index, raw in enumerate(raws):
        spec = _STRING_SPECS.get(raw) if type(raw) is str else None
        if spec is None:
            # The field name is formatted only here: most entries are cached strings.
            spec = parse_assert(raw, source=source, field=f"asserts[{index}]")
            mapped = mapped or not isinstance(raw, str)
        specs.append(spec)
    parsed = tuple(specs)
    if (
        key is not None
        and not mapped
        and len(_STRING_LISTS) < _LIST_CACHE_LIMIT
        and all([type(raw) is str for raw in raws])
    ):
        _STRING_LISTS[key] = parsed
    return parsed, mapped


def _refuse_unknown(data: Mapping[str, Any], allowed: frozenset[str], op: str, at: At) -> None:
    unknown = sorted(str(k) for k in data if k not in allowed)
    if unknown:
        at.fail(f"unknown argument(s) {unknown} for {op}", unknown[0])


def _group_children(
    op: str, negate: bool, data: Mapping[str, Any], at: At, nested: bool
) -> tuple[AssertSpec, ...]:
    """The parsed asserts of an ``assert-set`` or ``any-of``, checked at load time so a bad
    child is an error naming it (``asserts[2].asserts[0]``), never a silently failed check."""
    if negate:
        at.fail(f"'{NOT_PREFIX}{op}' is not an assert: a group cannot be negated")
    if op == "assert-set" and nested:
        # promptfoo rejects nested assert-sets too: one level of grouping keeps the score
        # arithmetic readable.
        at.fail("an assert-set cannot be nested in another group")
    raws = data.get("asserts")
    if not isinstance(raws, list) or not raws:
        at.fail(f"{op} needs a non-empty list 'asserts'", "asserts")
    allowed = _GROUP_ARGS
    if op == "assert-set":
        allowed = _GROUP_ARGS | {"threshold"}
        _THRESHOLD.check(data.get("threshold"), at, "threshold")
    _refuse_unknown(data, allowed, op, at)
    inner = at.sub("asserts")
    return tuple(_parse(raw, inner.sub(index), nested=True) for index, raw in enumerate(raws))


def parse_assert(raw: Any, *, source: str | None = None, field: str = "asserts") -> AssertSpec:
    """Normalise one assert written in any accepted form.

    A mapping may carry ``weight`` (a number >= 0); ``assert-set`` and ``any-of`` groups have
    their ``asserts`` parsed here, recursively.

    Raises:
        GoldenError: when the assert is neither a string nor a mapping with an op, has a bad
            weight, or is a malformed group.
    """
    return _parse(raw, At(source, field, GoldenError), nested=False)


def _parse(raw: Any, at: At, nested: bool) -> AssertSpec:
    if isinstance(raw, str):
        return _parse_string(raw, at)
    if isinstance(raw, Mapping):
        return _parse_mapping(raw, at, nested)
    at.fail(
        f"an assert must be a string like 'contains:foo' or a mapping, not {type(raw).__name__}"
    )


def _parse_string(raw: str, at: At) -> AssertSpec:
    """``'op'`` or ``'op:value'`` (``'not-op:value'`` negated); specs of the same text are
    one spec, cached: a large suite writes the same few strings again and again."""
    if (cached := _STRING_SPECS.get(raw)) is not None:
        return cached
    op_text, sep, arg = raw.partition(":")
    op_text = op_text.strip()
    if not op_text:
        at.fail(f"empty assert op in {raw!r}")
    op, negate = _split_negation(op_text)
    if op == JUDGE_OP:
        at.fail('judge needs a rubric: write it as a mapping ({op: judge, rubric: "..."})')
    if op in GROUP_OPS:
        at.fail(f"{op} holds asserts: write it as a mapping ({{op: {op}, asserts: [...]}})")
    # 'contains: 30 days' means "30 days": the spaces after the colon go (nobody writes them
    # into the value; the mapping form keeps exact values).
    args: dict[str, Any] = {"value": arg.lstrip(" \t")} if sep else {}
    spec = AssertSpec(op=op, negate=negate, args=args, text=raw)
    if len(_STRING_SPECS) < _STRING_CACHE_LIMIT:
        _STRING_SPECS[raw] = spec
    return spec


def _parse_mapping(raw: Mapping[Any, Any], at: At, nested: bool) -> AssertSpec:
    """``{op: ..., ...}`` (or ``type:``), or YAML's unquoted ``{contains: foo}``; a
    ``judge`` or a group has its own arguments checked here."""
    data = _text_keys(raw, at)
    op_value, data = _op_and_arguments(data, at)
    if not isinstance(op_value, str) or not op_value.strip():
        at.fail("an assert's op must be a non-empty string")
    for key, value in data.items():
        if (dated := find_date(value)) is not None:
            at.fail(f"YAML read {dated} as a date, which is not JSON: quote it", key)
    op, negate = _split_negation(op_value.strip())
    if "weight" in data:
        _WEIGHT.check(data["weight"], at, "weight")
    if op == JUDGE_OP:
        return _judge_spec(negate, data, at, nested)
    children = _group_children(op, negate, data, at, nested) if op in GROUP_OPS else None
    return AssertSpec(op=op, negate=negate, args=data, children=children)


def _text_keys(raw: Mapping[Any, Any], at: At) -> dict[str, Any]:
    """The mapping's keys, every one text, camelCase aliases in snake_case."""
    data = dict(raw)
    for key in data:
        if not isinstance(key, str):
            # {1: x} or YAML's `yes:` (true): sorting or naming such keys later fails.
            at.fail(
                f"an assert's keys must be text; YAML read {key!r} as "
                f"{yaml_typed(key) or type(key).__name__}: quote it"
            )
    if not _ARG_ALIASES.keys().isdisjoint(data):
        data = {_ARG_ALIASES.get(str(k), str(k)): v for k, v in data.items()}
    return data


def _op_and_arguments(data: dict[str, Any], at: At) -> tuple[Any, dict[str, Any]]:
    """The op as written (not checked yet) and the arguments beside it."""
    if "op" in data or "type" in data:
        if "op" in data and "type" in data:
            at.fail("give 'op' or 'type', not both")
        return (data.pop("op") if "op" in data else data.pop("type")), data
    if len(data) == 1:
        # An unquoted ``- contains: foo`` in YAML: the single key is the op.
        op_value, only = next(iter(data.items()))
        if (typed := yaml_typed(only)) is not None:
            # YAML 1.1 reads `- contains: 3.10` as 3.1 and `- equals: yes` as true: the
            # assert would test something the author never wrote.
            at.fail(quote_it(f"the value of '{op_value}'", typed, f"'{op_value}: \"...\"'"))
        return op_value, {"value": only}
    at.fail("an assert mapping needs an 'op' (e.g. {op: contains, value: foo})")


def _judge_spec(negate: bool, data: dict[str, Any], at: At, nested: bool) -> AssertSpec:
    """A ``judge`` assert, checked at load time: the gate grades it (batched, through the
    ``[judge]`` provider), not run_assert, so a bad one must be an error naming it rather than
    a check that fails only when a judge is configured."""
    if negate:
        at.fail(f"'{NOT_PREFIX}{JUDGE_OP}' is not an assert: write the rubric the other way round")
    if nested:
        # A group is aggregated inside run_assert, which never calls a model.
        at.fail("a judge assert cannot be inside a group: list it among the golden's asserts")
    _refuse_unknown(data, _JUDGE_ARGS, JUDGE_OP, at)
    rubric = _RUBRIC.check(data.get("rubric"), at, "rubric")
    _THRESHOLD.check(data.get("threshold"), at, "threshold")
    return AssertSpec(op=JUDGE_OP, negate=False, args=data, text=f"{JUDGE_OP}:{_short(rubric)}")
