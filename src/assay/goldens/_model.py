"""The Golden model and the validation of its fields (one place for every source format)."""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from operator import attrgetter
from typing import Any, Final

from assay._yaml import field_line, plain_scalars
from assay.asserts import (
    TEXT_OPS,
    YAML11_BOOLEANS,
    AssertSpec,
    Renderer,
    Transform,
    check_asserts,
    find_date,
    parse_asserts,
    parse_transform,
    quote_it,
    render_spec,
    transform_code_problem,
    typed_text_argument,
    yaml11_word_message,
    yaml_typed,
)
from assay.errors import GoldenError
from assay.validate import At, Bool, Check, Key, List, Num, Spec, Str, near_miss
from assay.vocabulary import TIERS, Tier

DEFAULT_THRESHOLD: Final[float] = 0.8
# gate: strict keeps the exact rule (any pass -> not pass is a regression) for a golden whose
# outcome is random; "statistical" is the default for random outcomes, said explicitly.
GATE_RULES: Final = ("strict", "statistical")
_TIER: Final = Str(choices=TIERS, message=f"unknown tier {{value}} (use one of {', '.join(TIERS)})")
THRESHOLD_RULE: Final = Num(
    at_least=0, at_most=1, message="threshold must be a number between 0 and 1"
)

# The golden's own names a prompt template sees (assay.models._template.RESERVED_NAMES, which
# this module does not import: loading goldens never loads the model code). A var of one of
# these names would hide the golden's own value, so it is refused when the golden is loaded,
# not first when a paid model is about to be called.
RESERVED_VARS: Final = ("input", "id", "tier", "title", "role")


@dataclass(frozen=True, slots=True)
class Defaults:
    """What a goldens folder's ``_defaults.yaml`` adds to each of its goldens.

    Attributes:
        source: the defaults file, for error messages and ``--self-test``.
        asserts: checks run before each golden's own (promptfoo's ``defaultTest`` order).
        vars: vars under each golden's own (a golden's var of the same name wins).
        threshold: the threshold of a golden that sets none (None: the built-in default).
        transform: the output transform of a golden that sets none (promptfoo's
            ``defaultTest.options.transform``: a golden's own replaces it).
    """

    source: str
    asserts: tuple[AssertSpec, ...] = ()
    vars: Mapping[str, Any] | None = None
    threshold: float | None = None
    transform: Transform | None = None

    def to_dict(self) -> dict[str, Any]:
        """What ``--self-test --json`` lists: the file, assert texts, var names, threshold and
        (when set) the transform."""
        listed: dict[str, Any] = {
            "source": self.source,
            "asserts": [spec.text for spec in self.asserts],
            "vars": list(self.vars or ()),
            "threshold": self.threshold,
        }
        if self.transform is not None:
            listed["transform"] = self.transform.to_dict()
        return listed


@dataclass(frozen=True, slots=True)
class Golden:
    """One golden case.

    Attributes:
        id: stable id (defaults to the file stem for markdown goldens).
        tier: smoke, standard, stretch or adversarial.
        input: what the candidate is given.
        expected: the reference output (None when absent; see ``has_expected``).
        rubric: text for the tier 3 judge.
        asserts: tier 1 checks, normalised.
        threshold: tier 2 pass threshold.
        source: where it came from (``path`` or ``path:line``), for error messages.
        has_origin: whether it says where it came from (a ``## Origin`` section / ``origin``).
        fields: every other frontmatter field (agent-task fields among them).
        threshold_given: whether the golden (or its suite's defaults) set ``threshold``
            explicitly; False means ``threshold`` is the built-in default.
        defaults: the folder defaults applied to it (None: none, or ``defaults: false``).
        transform: what rewrites the output before its asserts read it (its own, else its
            defaults'; None: none), see :mod:`assay.asserts._transform`.
    """

    id: str
    tier: Tier
    source: str
    input: Any = None
    expected: Any = None
    has_expected: bool = False
    rubric: str | None = None
    asserts: tuple[AssertSpec, ...] = ()
    threshold: float = DEFAULT_THRESHOLD
    has_origin: bool = False
    fields: Mapping[str, Any] = field(default_factory=dict)
    # Last, so the positional construction in _build stays cheap.
    threshold_given: bool = False
    defaults: Defaults | None = None
    transform: Transform | None = None

    def __reduce__(self) -> tuple[type[Golden], tuple[Any, ...]]:
        # Pickled as its fields: the parallel loader sends thousands, and a slotted dataclass's
        # default state takes twice as long to load (bench/big_suite.py).
        return Golden, _GOLDEN_FIELDS(self)


# A slotted dataclass's __slots__ are its fields, in order: Golden's positional arguments.
_GOLDEN_FIELDS: Final = attrgetter(*Golden.__slots__)


def _check_signals(signals: Any, at: At, key: Key) -> None:
    """Completion signals: prose (a string, for the judge) or a command ``{name, run}`` whose
    exit status 0 means the signal holds."""
    if not isinstance(signals, list):
        at.fail("completion_signals must be a list", key)
    inner = at.sub(key)
    for i, signal in enumerate(signals):
        if isinstance(signal, str):
            continue
        if not isinstance(signal, Mapping) or set(signal) != {"name", "run"}:
            inner.fail("a completion signal is prose (a string) or a command {name, run}", i)
        for name in ("name", "run"):
            if not isinstance(signal[name], str) or not signal[name].strip():
                inner.sub(i).fail("must be a non-empty string", name)


def _no_date(value: Any, at: At, key: Key) -> None:
    dated = None if isinstance(value, str) else find_date(value)
    if dated is not None:
        at.fail(f"YAML read {dated} as a date, which is not JSON: quote it", key)


_STRING, _STRINGS = Str(message="{field} must be a string"), "{field} must be a list of strings"
_AMOUNT = Num(at_least=0, message="{field} must be a number >= 0")
# Every frontmatter field of a golden, declared once. Those with no rule here are _build's to
# read (id, tier, asserts, threshold, defaults, vars) or any value; the rest are checked when
# not null, in the file's order.
FIELDS: Final[dict[str, Spec | None]] = {
    **dict.fromkeys(("id", "tier", "asserts", "threshold", "defaults", "vars", "transform")),
    "expected_test_outcomes": None,
    "input": Check(_no_date),
    "expected": Check(_no_date),
    "gate": Str(
        choices=GATE_RULES, message=f"unknown gate rule {{value}} (use {', '.join(GATE_RULES)})"
    ),
    "completion_signals": Check(_check_signals),
    **dict.fromkeys(("title", "role", "rubric", "origin", "verify", "image"), _STRING),
    **dict.fromkeys(
        ("expected_files_modified", "owned_files", "reference_files"),
        List(Str(message=_STRINGS), message=_STRINGS),
    ),
    **dict.fromkeys(("max_cost_usd", "max_duration_s", "max_memory_mb"), _AMOUNT),
}
KNOWN_FIELDS: Final = frozenset(FIELDS)
_RULES: Final = {name: spec for name, spec in FIELDS.items() if spec is not None}


def unknown_fields(golden: Golden) -> list[str]:
    """The golden's frontmatter keys that are no field of assay's (kept as metadata)."""
    return [str(k) for k in golden.fields if k not in KNOWN_FIELDS]


def _json_problem(value: Any) -> str | None:
    """Why ``value`` is no JSON value (a YAML date, a set, a non-string key), or None.

    Vars end up in prompts, cache keys and fingerprints, all of which are JSON: a value that
    only YAML can hold would render or hash differently from what the author wrote.
    """
    stack = [value]
    while stack:
        item = stack.pop()
        if item is None or isinstance(item, str | bool | int | float):
            continue
        if isinstance(item, datetime.date):
            return f"YAML read {item.isoformat()} as a date, which is not JSON: quote it"
        if isinstance(item, Mapping):
            for key in item:
                if not isinstance(key, str):
                    return f"the key {key!r} is not a string, which JSON needs: quote it"
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        else:
            return f"a {type(item).__name__} is not a JSON value"
    return None


def _kind(value: Any) -> str:
    return "null" if value is None else f"a {type(value).__name__}"


def check_var_mapping(value: Any, at: At, key: Key, owner: str) -> dict[str, Any]:
    """One mapping of vars (at ``key``: ``vars``, ``vars[2]``; ``owner`` says whose they are:
    ``golden 'g1'``): string names, none of :data:`RESERVED_VARS`, to JSON values (an error
    names ``key`` or ``key.name``)."""
    if not isinstance(value, Mapping):
        at.fail(f"vars must be a mapping of names to values, not {_kind(value)}", key)
    for name, item in value.items():
        if not isinstance(name, str):
            at.fail(f"a var name must be a string, not {name!r}: quote it", key)
        if name in RESERVED_VARS:
            # The wording of the same check at prompt time (assay.models._live.prompt_context).
            at.sub(key).fail(
                f"{owner} has a var named {name!r}, a name the golden itself gives a "
                f"template ({', '.join(RESERVED_VARS)}): rename the var",
                name,
            )
        problem = _json_problem(item)
        if problem is not None:
            at.sub(key).fail(problem, name)
    return dict(value)


def _read_vars(
    value: Any, at: At, golden_id: str
) -> tuple[dict[str, Any] | None, list[dict[str, Any]] | None]:
    """A golden's ``vars``: (one mapping, None) or (None, a list of mappings to expand)."""
    owner = f"golden {golden_id!r}"
    if not isinstance(value, list):
        if not isinstance(value, Mapping):
            at.fail(
                "vars must be a mapping of names to values or a non-empty list of them, "
                f"not {_kind(value)}",
                "vars",
            )
        return check_var_mapping(value, at, "vars", owner), None
    if not value:
        # An empty list would make no golden at all: a suite must not shrink unseen.
        at.fail("vars is an empty list, which makes no golden: give at least one mapping", "vars")
    return None, [check_var_mapping(item, at.sub("vars"), i, owner) for i, item in enumerate(value)]


def parse_golden_asserts(raw_asserts: Any, *, source: str) -> tuple[AssertSpec, ...]:
    """A golden's (or a defaults file's) ``asserts`` list, parsed and checked (a text argument
    YAML typed, ``contains: 2024-01-01``, is an error naming ``asserts[i]``)."""
    if raw_asserts is None:
        raw_asserts = []
    if not isinstance(raw_asserts, list):
        raise GoldenError("asserts must be a list", source=source, field="asserts")
    asserts, mapped = parse_asserts(raw_asserts, source=source)
    if mapped:
        _check_typed(asserts, source)
    # A templated assert is checked once rendered, with each golden's vars.
    check_asserts([a for a in asserts if not a.templated], At(source, "", GoldenError))
    return asserts


def _check_typed(asserts: tuple[AssertSpec, ...], source: str) -> None:
    """Fail on a text argument YAML typed (only a mapping assert's arguments can be typed)."""
    for i, spec in enumerate(asserts):
        typed = typed_text_argument(spec) if spec.op in TEXT_OPS else None
        if typed is not None:
            name, what = typed
            raise GoldenError(
                quote_it(f"the {name} of '{spec.full_op}'", what, f'{name}: "..."'),
                source=source,
                field=f"asserts[{i}].{name}",
            )


# The fields whose YAML 1.1 words (yes, no, on, off) are refused: values that are compared
# with an answer or shown to a model. Elsewhere a word is the boolean it means (defaults: no).
_WORD_FIELDS: Final = ("input", "expected", "vars")
# The string fields: a boolean YAML made there (rubric: No) was text, so it says to quote it
# (a number keeps the plain "must be a string").
_TEXT_FIELDS: Final = ("title", "role", "rubric", "origin", "verify", "image")
_TEXT_FIELD_SET: Final = frozenset(_TEXT_FIELDS)


def refuse_yaml11_words(
    data: Mapping[str, Any],
    raw_asserts: list[Any],
    text: str,
    at: At,
    item: int | None = None,
    *,
    mapped: bool = True,
) -> None:
    """Fail on an unquoted ``yes``/``no``/``on``/``off`` that YAML made a boolean in a value
    that is compared (``expected: No``, ``{op: equals, value: yes}``, a var), and on a boolean
    in a string field (``rubric: No``): the author wrote text. ``text`` is the YAML document
    (``item``: the record's index in a YAML list); ``true`` and ``false`` stay booleans.
    ``mapped``: whether any assert is a mapping (only a mapping's value can be a boolean).

    On the hot path of a large suite: a golden of text values costs a few lookups."""
    if not _TEXT_FIELD_SET.isdisjoint(data):
        for key in _TEXT_FIELDS:
            value = data.get(key)
            if isinstance(value, bool):
                at.fail(quote_it(key, str(yaml_typed(value)), f'{key}: "..."'), key)
    found: list[tuple[str, bool]] = []
    for key in _WORD_FIELDS:
        value = data.get(key)
        if value is not None and type(value) is not str:
            _booleans(value, key, found)
    if mapped:
        for index, raw in enumerate(raw_asserts):
            if type(raw) is not str:
                _assert_booleans(raw, f"asserts[{index}]", found)
    if not found:
        return
    words = plain_scalars(text, [path for path, _ in found], item=item)
    for (path, value), word in zip(found, words, strict=True):
        if word is not None and word.lower() in YAML11_BOOLEANS:
            written_key = None if path.endswith("]") else path.rpartition(".")[2]
            at.fail(yaml11_word_message(path, word, value, written_key), path)


def _booleans(value: Any, path: str, found: list[tuple[str, bool]]) -> None:
    """Append the path of every boolean inside ``value`` (``expected.ok``, ``vars[1].flag``)."""
    if isinstance(value, bool):
        found.append((path, value))
    elif isinstance(value, Mapping):
        for key, item in value.items():
            if not isinstance(item, str):
                _booleans(item, f"{path}.{key}", found)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            if not isinstance(item, str):
                _booleans(item, f"{path}[{index}]", found)


def _assert_booleans(raw: Any, path: str, found: list[tuple[str, bool]]) -> None:
    """The booleans in a mapping assert's ``value`` (and in its group's asserts)."""
    if not isinstance(raw, Mapping):
        return
    if "value" in raw:
        _booleans(raw["value"], f"{path}.value", found)
    children = raw.get("asserts")
    if isinstance(children, list):
        for index, child in enumerate(children):
            _assert_booleans(child, f"{path}.asserts[{index}]", found)


def with_line(
    exc: GoldenError, text: str, *, item: int | None = None, line_offset: int = 0
) -> GoldenError:
    """``exc`` with the line of its field in ``text`` added to its source (``file:12``), when
    the field can be found there; only the error path pays for finding it."""
    if exc.line is not None:  # located already (in the folder's defaults file)
        return exc
    line = None
    if exc.field is not None:
        line = field_line(text, exc.field, item=item, line_offset=line_offset)
    if line is None or exc.source is None:
        return exc
    source = exc.source if item is None else exc.source.rpartition("[")[0]
    return GoldenError(exc.message, source=f"{source}:{line}", field=exc.field)


def build_goldens(
    data: Any,
    *,
    source: str,
    default_id: str | None,
    folder_tier: Tier | None,
    has_origin: bool = False,
    strict: bool = False,
    defaults: Defaults | None = None,
    yaml_text: str | None = None,
    yaml_item: int | None = None,
) -> list[Golden]:
    """The goldens one record makes: itself, or with a ``vars`` list one golden per item, ids
    ``<id>#1``, ``<id>#2``... in list order, each with its own ``vars`` mapping. They share the
    record's parsed asserts and its ``source`` (errors name where they were written), but for
    asserts holding a template (``contains: '{{ city }}'``), rendered with each golden's vars.
    Every assert is checked (:func:`assay.asserts.check_asserts`).

    ``yaml_text``: the YAML the record was read from (``yaml_item``: its index in a YAML list),
    where an unquoted ``No`` must not pass for False (:func:`refuse_yaml11_words`); None for
    JSON, whose booleans are written as such.

    Raises:
        GoldenError: naming ``source`` and the field at fault.
    """
    golden, items = _build(
        data, source, default_id, folder_tier, has_origin, strict, defaults, yaml_text, yaml_item
    )
    goldens = [golden]
    if items is not None:
        base = golden.fields
        goldens = [
            replace(golden, id=f"{golden.id}#{n}", fields={**base, "vars": item})
            for n, item in enumerate(items, 1)
        ]
    if any([spec.templated for spec in golden.asserts]):
        goldens = [_rendered(g) for g in goldens]
    for one in goldens:
        if not all([spec.checked for spec in one.asserts]):
            _check_loaded(one)
    return goldens


def _own_start(golden: Golden) -> int:
    """Where the golden's own asserts start in ``golden.asserts`` (its defaults' come first)."""
    return len(golden.defaults.asserts) if golden.defaults is not None else 0


def _check_loaded(golden: Golden) -> None:
    """:func:`check_asserts` of the golden's asserts; a problem in one of its defaults' (a
    templated one, checked once rendered) names the defaults file."""
    start = _own_start(golden)
    try:
        check_asserts(golden.asserts[start:], At(golden.source, "", GoldenError))
        check_asserts(golden.asserts[:start], At(_defaults_source(golden), "", GoldenError))
    except GoldenError as exc:
        raise _in_defaults(exc, golden) from None


def _defaults_source(golden: Golden) -> str:
    return golden.defaults.source if golden.defaults is not None else golden.source


def _in_defaults(exc: GoldenError, golden: Golden) -> GoldenError:
    """``exc`` as it is, unless it names the defaults file: then with the line of its field
    there and the golden it was rendered for."""
    if golden.defaults is None or exc.source != golden.defaults.source or exc.field is None:
        return exc
    from assay.io import read_text  # the error path only

    line = field_line(read_text(golden.defaults.source, GoldenError), exc.field)
    message = f"{exc.message} (rendered with the vars of {golden.source})"
    return GoldenError(message, source=exc.source, field=exc.field, line=line)


def _rendered(golden: Golden) -> Golden:
    """The golden with every template in its asserts rendered with its vars, ``input``,
    ``id``, ``tier``, ``title`` and ``role``, as its prompt is (and as promptfoo renders an
    assert's value). Undefined names are errors naming the assert's field."""
    context: dict[str, Any] = {"id": golden.id, "tier": golden.tier, "input": golden.input}
    for name in ("title", "role"):
        if golden.fields.get(name) is not None:
            context[name] = golden.fields[name]
    if golden.fields.get("vars"):
        context["vars"] = golden.fields["vars"]
    start = _own_start(golden)
    rendered = []
    for index, spec in enumerate(golden.asserts):
        own = index >= start
        where = f"asserts[{index - start if own else index}]"
        source = golden.source if own else _defaults_source(golden)
        try:
            rendered.append(render_spec(spec, _renderer(context, source, where)))
        except GoldenError as exc:
            raise _in_defaults(exc, golden) from None
    return replace(golden, asserts=tuple(rendered))


def _renderer(context: dict[str, Any], source: str, where: str) -> Renderer:
    """A :data:`assay.asserts.Renderer` for one assert (at ``where``): a prompt template's
    rules (:mod:`assay.goldens._render`), errors naming ``source`` and the argument."""
    from assay.goldens._render import render_value, template_names

    names = template_names(context)

    def render_text(text: str, field: str) -> str:
        name = field.rpartition(".")[2].partition("[")[0]
        return render_value(text, names, source=source, field=f"{where}.{field}", name=name)

    return render_text


def _build(
    data: Any,
    source: str,
    default_id: str | None,
    folder_tier: Tier | None,
    has_origin: bool,
    strict: bool,
    defaults: Defaults | None,
    yaml_text: str | None = None,
    yaml_item: int | None = None,
) -> tuple[Golden, list[dict[str, Any]] | None]:
    """The golden ``data`` describes, and its expanded vars list (None when not a list)."""
    if type(data) is not dict and not isinstance(data, Mapping):
        kind = "empty" if data is None else _kind(data)
        raise GoldenError(f"the frontmatter must be a YAML mapping, not {kind}", source=source)
    data = dict(data)
    at = At(source, "", GoldenError)
    if not KNOWN_FIELDS.issuperset(data):
        _refuse_unknown(data, at, strict)
    golden_id = _golden_id(data.pop("id", default_id), at)
    raw_tier = data.pop("tier", None)
    if raw_tier is not None:
        _TIER.check(raw_tier, at, "tier")
    tier: Tier = folder_tier or raw_tier or "standard"
    # parse_golden_asserts, inline: this is the hot path of a 100,000-golden suite.
    raw_asserts = data.pop("asserts", None)
    if raw_asserts is None:
        raw_asserts = []
    if not isinstance(raw_asserts, list):
        at.fail("asserts must be a list", "asserts")
    asserts, mapped = parse_asserts(raw_asserts, source=source)
    if mapped:
        _check_typed(asserts, source)
    threshold_given = "threshold" in data
    threshold = data.pop("threshold", DEFAULT_THRESHOLD)
    if threshold is not DEFAULT_THRESHOLD:
        threshold = THRESHOLD_RULE.check(threshold, at, "threshold")
    applied = _applied(data, defaults, at)
    transform = read_transform(data.pop("transform"), at) if "transform" in data else None
    items: list[dict[str, Any]] | None = None
    if "vars" in data:
        own, items = _read_vars(data["vars"], at, golden_id)
        if own is not None:
            data["vars"] = own
    if yaml_text is not None:
        refuse_yaml11_words(data, raw_asserts, yaml_text, at, yaml_item, mapped=mapped)
    if applied is not None:
        # Defaults first, then the golden's own: promptfoo's defaultTest order, so a golden's
        # checks read as refinements of the suite's.
        asserts = applied.asserts + asserts if applied.asserts else asserts
        if not threshold_given and applied.threshold is not None:
            threshold, threshold_given = applied.threshold, True
        if transform is None:  # promptfoo: {...defaultTest.options, ...test.options}
            transform = applied.transform
        items = _shared_vars(data, items, applied.vars)
    rules = _RULES
    for key, value in data.items():
        spec = rules.get(key)
        if spec is not None and value is not None:
            spec.check(value, at, key)
    has_expected = "expected" in data
    rubric = data.pop("rubric", None)
    # Positional: the Golden's field order (a keyword call costs a third more on 100,000).
    return Golden(
        golden_id,
        tier,
        source,
        data.pop("input", None),
        data.pop("expected", None),
        has_expected,
        rubric,
        asserts,
        float(threshold),
        has_origin or bool(data.get("origin")),
        data,
        threshold_given,
        applied,
        transform,
    ), items


def read_transform(raw: Any, at: At) -> Transform | None:
    """The ``transform`` of a golden or a defaults file (null: none), checked as far as it can
    be without the project root: one key, ``javascript`` or ``python``, whose code compiles
    (and the JavaScript engine installed). Its file is checked by ``check_python_files``."""
    if raw is None:
        return None
    transform = parse_transform(raw, at)
    problem = transform_code_problem(transform, None, files=False)
    if problem is not None:
        at.fail(problem, f"transform.{transform.language}")
    return transform


def _golden_id(raw: Any, at: At) -> str:
    if isinstance(raw, int) and not isinstance(raw, bool):
        raw = str(raw)
    if not isinstance(raw, str) or not raw.strip():
        at.fail("a golden needs a non-empty string id", "id")
    return raw.strip()


def _refuse_unknown(data: Mapping[Any, Any], at: At, strict: bool) -> None:
    """A key near a known field (``assert``) is always an error; any other unknown key is kept
    in ``fields`` as metadata, or with ``strict`` is an error too (the first in the file first).
    Keys from other tools (WikiEval's ``type``) are near no field."""
    for key in data:
        if key in KNOWN_FIELDS:
            continue
        meant = near_miss(key, KNOWN_FIELDS, cutoff=0.8)
        if meant is not None:
            at.fail(f"unknown field {key!r}: did you mean {meant!r}?", str(key))
        if strict:
            at.fail(
                f"unknown field {key!r} (strict = true in the config: every field must be known)",
                str(key),
            )


_USE_DEFAULTS: Final = Bool(
    message="defaults must be true or false (false: this golden skips the folder's _defaults.yaml)"
)


def _applied(data: dict[str, Any], defaults: Defaults | None, at: At) -> Defaults | None:
    """The folder defaults the golden gets: none with ``defaults: false``."""
    if "defaults" not in data:
        return defaults
    return defaults if _USE_DEFAULTS.check(data.pop("defaults"), at, "defaults") else None


def _shared_vars(
    data: dict[str, Any], items: list[dict[str, Any]] | None, shared: Mapping[str, Any] | None
) -> list[dict[str, Any]] | None:
    """The defaults' vars under the golden's own (its mapping, or each item of its list)."""
    if not shared:
        return items
    if items is not None:
        return [{**shared, **item} for item in items]
    if "vars" in data:
        data["vars"] = {**shared, **data["vars"]}
    else:
        data["vars"] = shared  # one mapping for every golden: nothing mutates it
    return None
