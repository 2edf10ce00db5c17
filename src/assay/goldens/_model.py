"""The Golden model and the validation of its fields (one place for every source format)."""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Final

from assay.asserts import AssertSpec
from assay.asserts._spec import TEXT_OPS, find_date, parse_asserts, typed_text_argument
from assay.errors import GoldenError
from assay.validate import is_number
from assay.vocabulary import TIERS, Tier

DEFAULT_THRESHOLD: Final[float] = 0.8
# gate: strict keeps the exact rule (any pass -> not pass is a regression) for a golden whose
# outcome is random; "statistical" is the default for random outcomes, said explicitly.
GATE_RULES: Final = ("strict", "statistical")

_LIST_OF_STR_FIELDS = (
    "expected_files_modified",
    "owned_files",
    "reference_files",
)
_STR_FIELDS = ("title", "role", "rubric", "origin", "verify", "image")
_NON_NEGATIVE_FIELDS = ("max_cost_usd", "max_duration_s", "max_memory_mb")
# The same fields as sets: a golden that has none of a group skips that group's checks (each
# would find nothing), which keeps the order of the checks and so which error comes first.
_STR_SET = frozenset(_STR_FIELDS)
_LIST_OF_STR_SET = frozenset(_LIST_OF_STR_FIELDS)
_NON_NEGATIVE_SET = frozenset(_NON_NEGATIVE_FIELDS)
KNOWN_FIELDS: Final = frozenset(
    {
        "id",
        "tier",
        "input",
        "expected",
        "rubric",
        "asserts",
        "threshold",
        "gate",
        "completion_signals",
        "expected_test_outcomes",
        "vars",
        "defaults",
        *_LIST_OF_STR_FIELDS,
        *_STR_FIELDS,
        *_NON_NEGATIVE_FIELDS,
    }
)

# The golden's own names a prompt template sees (assay.models._template.RESERVED_NAMES, which
# this module does not import: loading goldens never loads the model code). A var of one of
# these names would hide the golden's own value, so it is refused when the golden is loaded,
# not first when a paid model is about to be called.
RESERVED_VARS: Final = ("input", "id", "tier", "title", "role")
# What a goldens folder's defaults file (see assay.goldens._defaults) may set.
DEFAULTS_KEYS: Final = ("vars", "asserts", "threshold")


@dataclass(frozen=True, slots=True)
class Defaults:
    """What a goldens folder's ``_defaults.yaml`` adds to each of its goldens.

    Attributes:
        source: the defaults file, for error messages and ``--self-test``.
        asserts: checks run before each golden's own (promptfoo's ``defaultTest`` order).
        vars: vars under each golden's own (a golden's var of the same name wins).
        threshold: the threshold of a golden that sets none (None: the built-in default).
    """

    source: str
    asserts: tuple[AssertSpec, ...] = ()
    vars: Mapping[str, Any] | None = None
    threshold: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """What ``--self-test --json`` lists: the file, assert texts, var names, threshold."""
        return {
            "source": self.source,
            "asserts": [spec.text for spec in self.asserts],
            "vars": list(self.vars or ()),
            "threshold": self.threshold,
        }


def _near_miss(key: Any) -> str | None:
    """The known field a key is a typo of (``assert``, ``expect``, ``inputt``, ``Asserts``), if
    any. Such a key would silently do nothing (a golden whose ``assert:`` is ignored has no
    checks), so it is an error; keys from other tools (WikiEval's ``type``) are not near one."""
    if not isinstance(key, str) or key in KNOWN_FIELDS:
        return None
    folded = key.strip().lower().replace("-", "_")
    if folded in KNOWN_FIELDS:
        return folded
    import difflib  # only for a key that is not a field: a plain suite never loads it

    close = difflib.get_close_matches(folded, sorted(KNOWN_FIELDS), n=1, cutoff=0.8)
    return close[0] if close else None


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
    # Last, so the positional construction (build_golden, the parallel decoder) stays cheap.
    threshold_given: bool = False
    defaults: Defaults | None = None


def _check_signals(signals: Any, source: str) -> None:
    """Completion signals: prose (a string, for the judge) or a command ``{name, run}`` whose
    exit status 0 means the signal holds.

    Raises:
        GoldenError: naming the signal at fault.
    """
    if signals is None:
        return
    if not isinstance(signals, list):
        raise GoldenError(
            "completion_signals must be a list", source=source, field="completion_signals"
        )
    for i, signal in enumerate(signals):
        where = f"completion_signals[{i}]"
        if isinstance(signal, str):
            continue
        if not isinstance(signal, Mapping) or set(signal) != {"name", "run"}:
            raise GoldenError(
                "a completion signal is prose (a string) or a command {name, run}",
                source=source,
                field=where,
            )
        for key in ("name", "run"):
            if not isinstance(signal[key], str) or not signal[key].strip():
                raise GoldenError(
                    "must be a non-empty string", source=source, field=f"{where}.{key}"
                )


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


def check_var_mapping(value: Any, *, source: str, where: str, owner: str) -> dict[str, Any]:
    """One mapping of vars (``where`` names it in errors: ``vars``, ``vars[2]``; ``owner``
    says whose they are: ``golden 'g1'``), checked.

    Raises:
        GoldenError: not a mapping, a name that is no string or is one of
            :data:`RESERVED_VARS`, or a value that is no JSON value (naming ``where.name``).
    """
    if not isinstance(value, Mapping):
        kind = "null" if value is None else f"a {type(value).__name__}"
        raise GoldenError(
            f"vars must be a mapping of names to values, not {kind}", source=source, field=where
        )
    for name, item in value.items():
        if not isinstance(name, str):
            raise GoldenError(
                f"a var name must be a string, not {name!r}: quote it", source=source, field=where
            )
        if name in RESERVED_VARS:
            # The wording of the same check at prompt time (assay.models.prompt_context).
            raise GoldenError(
                f"{owner} has a var named {name!r}, a name the golden itself gives a "
                f"template ({', '.join(RESERVED_VARS)}): rename the var",
                source=source,
                field=f"{where}.{name}",
            )
        problem = _json_problem(item)
        if problem is not None:
            raise GoldenError(problem, source=source, field=f"{where}.{name}")
    return dict(value)


def _read_vars(
    value: Any, source: str, golden_id: str
) -> tuple[dict[str, Any] | None, list[dict[str, Any]] | None]:
    """A golden's ``vars``: (one mapping, None) or (None, a list of mappings to expand).

    Raises:
        GoldenError: naming ``vars`` or the list item at fault (``vars[2]``).
    """
    owner = f"golden {golden_id!r}"
    if not isinstance(value, list):
        if not isinstance(value, Mapping):
            kind = "null" if value is None else f"a {type(value).__name__}"
            raise GoldenError(
                f"vars must be a mapping of names to values or a non-empty list of them, "
                f"not {kind}",
                source=source,
                field="vars",
            )
        return check_var_mapping(value, source=source, where="vars", owner=owner), None
    if not value:
        # An empty list would make no golden at all: a suite must not shrink unseen.
        raise GoldenError(
            "vars is an empty list, which makes no golden: give at least one mapping",
            source=source,
            field="vars",
        )
    return None, [
        check_var_mapping(item, source=source, where=f"vars[{i}]", owner=owner)
        for i, item in enumerate(value)
    ]


def parse_golden_asserts(raw_asserts: Any, *, source: str) -> tuple[AssertSpec, ...]:
    """A golden's (or a defaults file's) ``asserts`` list, parsed and checked.

    Raises:
        GoldenError: not a list, an assert that does not parse, or a text argument YAML typed
            (``contains: 2024-01-01``), naming ``asserts[i]``.
    """
    if raw_asserts is None:
        raw_asserts = []
    if not isinstance(raw_asserts, list):
        raise GoldenError("asserts must be a list", source=source, field="asserts")
    asserts, mapped = parse_asserts(raw_asserts, source=source)
    if mapped:
        _check_typed(asserts, source)
    return asserts


def _check_typed(asserts: tuple[AssertSpec, ...], source: str) -> None:
    """Fail on a text argument YAML typed (only a mapping assert's arguments can be typed).

    Raises:
        GoldenError: naming ``asserts[i].<argument>``.
    """
    for i, spec in enumerate(asserts):
        typed = typed_text_argument(spec) if spec.op in TEXT_OPS else None
        if typed is not None:
            name, what = typed
            raise GoldenError(
                f"YAML read the {name} of '{spec.full_op}' as {what}: quote it "
                f'({name}: "...") to test the text you wrote',
                source=source,
                field=f"asserts[{i}].{name}",
            )


def check_threshold(value: Any, *, source: str) -> float:
    """A ``threshold`` value, checked.

    Raises:
        GoldenError: not a number between 0 and 1, naming ``threshold``.
    """
    if not is_number(value) or not 0 <= value <= 1:
        raise GoldenError(
            "threshold must be a number between 0 and 1", source=source, field="threshold"
        )
    return float(value)


def build_golden(
    data: Any,
    *,
    source: str,
    default_id: str | None,
    folder_tier: Tier | None,
    has_origin: bool = False,
    strict: bool = False,
    defaults: Defaults | None = None,
) -> Golden:
    """Validate one golden's fields and build it (with ``defaults``, its folder's defaults).

    A golden whose ``vars`` is a list is several goldens: :func:`build_goldens` builds them.

    Raises:
        GoldenError: naming ``source`` and the field at fault, or ``vars`` when it is a list.
    """
    golden, items = _build(data, source, default_id, folder_tier, has_origin, strict, defaults)
    if items is not None:
        raise GoldenError(
            "vars is a list, which makes one golden per item: load it with build_goldens",
            source=source,
            field="vars",
        )
    return golden


def build_goldens(
    data: Any,
    *,
    source: str,
    default_id: str | None,
    folder_tier: Tier | None,
    has_origin: bool = False,
    strict: bool = False,
    defaults: Defaults | None = None,
) -> list[Golden]:
    """The goldens one record makes: itself, or with a ``vars`` list one golden per item, ids
    ``<id>#1``, ``<id>#2``... in list order, each with its own ``vars`` mapping. They share the
    record's parsed asserts and its ``source`` (errors name where they were written).

    Raises:
        GoldenError: naming ``source`` and the field at fault.
    """
    golden, items = _build(data, source, default_id, folder_tier, has_origin, strict, defaults)
    if items is None:
        return [golden]
    base = golden.fields
    return [
        replace(golden, id=f"{golden.id}#{n}", fields={**base, "vars": item})
        for n, item in enumerate(items, 1)
    ]


def _build(
    data: Any,
    source: str,
    default_id: str | None,
    folder_tier: Tier | None,
    has_origin: bool,
    strict: bool,
    defaults: Defaults | None,
) -> tuple[Golden, list[dict[str, Any]] | None]:
    """The golden ``data`` describes, and its expanded vars list (None when not a list).

    A key near a known field (``assert``) is always an error; any other unknown key is kept in
    ``fields`` as metadata, or with ``strict`` is an error too.

    Raises:
        GoldenError: naming ``source`` and the field at fault.
    """
    if type(data) is not dict and not isinstance(data, Mapping):
        kind = "empty" if data is None else f"a {type(data).__name__}"
        raise GoldenError(f"the frontmatter must be a YAML mapping, not {kind}", source=source)
    data = dict(data)
    unknown = () if KNOWN_FIELDS.issuperset(data) else [k for k in data if k not in KNOWN_FIELDS]
    for key in unknown:  # the first in the file first
        meant = _near_miss(key)
        if meant is not None:
            raise GoldenError(
                f"unknown field {key!r}: did you mean {meant!r}?", source=source, field=str(key)
            )
        if strict:
            raise GoldenError(
                f"unknown field {key!r} (strict = true in the config: every field must be known)",
                source=source,
                field=str(key),
            )
    raw_id = data.pop("id", default_id)
    if isinstance(raw_id, int) and not isinstance(raw_id, bool):
        raw_id = str(raw_id)
    if not isinstance(raw_id, str) or not raw_id.strip():
        raise GoldenError("a golden needs a non-empty string id", source=source, field="id")
    raw_tier = data.pop("tier", None)
    if raw_tier is not None and raw_tier not in TIERS:
        raise GoldenError(
            f"unknown tier {raw_tier!r} (use one of {', '.join(TIERS)})",
            source=source,
            field="tier",
        )
    tier: Tier = folder_tier or raw_tier or "standard"
    # parse_golden_asserts, inline: this is the hot path of a 100,000-golden suite.
    raw_asserts = data.pop("asserts", None)
    if raw_asserts is None:
        raw_asserts = []
    if not isinstance(raw_asserts, list):
        raise GoldenError("asserts must be a list", source=source, field="asserts")
    asserts, mapped = parse_asserts(raw_asserts, source=source)
    if mapped:
        _check_typed(asserts, source)
    threshold_given = "threshold" in data
    threshold = data.pop("threshold", DEFAULT_THRESHOLD)
    if threshold is not DEFAULT_THRESHOLD:
        threshold = check_threshold(threshold, source=source)
    applied = defaults
    if "defaults" in data:
        opted = data.pop("defaults")
        if type(opted) is not bool:
            raise GoldenError(
                "defaults must be true or false (false: this golden skips the folder's "
                "_defaults.yaml)",
                source=source,
                field="defaults",
            )
        if not opted:
            applied = None
    items: list[dict[str, Any]] | None = None
    if "vars" in data:
        own, items = _read_vars(data["vars"], source, raw_id.strip())
        if own is not None:
            data["vars"] = own
    if applied is not None:
        # Defaults first, then the golden's own: promptfoo's defaultTest order, so a golden's
        # checks read as refinements of the suite's.
        if applied.asserts:
            asserts = applied.asserts + asserts
        if not threshold_given and applied.threshold is not None:
            threshold, threshold_given = applied.threshold, True
        shared = applied.vars
        if shared:
            if items is not None:
                items = [{**shared, **item} for item in items]
            elif "vars" in data:
                data["vars"] = {**shared, **data["vars"]}
            else:
                data["vars"] = shared  # one mapping for every golden: nothing mutates it
    gate = data.get("gate")
    if gate is not None and gate not in GATE_RULES:
        raise GoldenError(
            f"unknown gate rule {gate!r} (use {', '.join(GATE_RULES)})", source=source, field="gate"
        )
    if not _STR_SET.isdisjoint(data):
        for name in _STR_FIELDS:
            if data.get(name) is not None and not isinstance(data[name], str):
                raise GoldenError(f"{name} must be a string", source=source, field=name)
    if "completion_signals" in data:
        _check_signals(data["completion_signals"], source)
    if not _LIST_OF_STR_SET.isdisjoint(data):
        for name in _LIST_OF_STR_FIELDS:
            value = data.get(name)
            if value is not None and (
                not isinstance(value, list) or not all(isinstance(v, str) for v in value)
            ):
                raise GoldenError(f"{name} must be a list of strings", source=source, field=name)
    if not _NON_NEGATIVE_SET.isdisjoint(data):
        for name in _NON_NEGATIVE_FIELDS:
            value = data.get(name)
            if value is not None and (not is_number(value) or value < 0):
                raise GoldenError(f"{name} must be a number >= 0", source=source, field=name)
    for name in ("input", "expected"):
        value = data.get(name)
        if value is None or isinstance(value, str):  # the usual case: no date can hide here
            continue
        dated = find_date(value)
        if dated is not None:
            raise GoldenError(
                f"YAML read {dated} as a date, which is not JSON: quote it",
                source=source,
                field=name,
            )
    has_expected = "expected" in data
    rubric = data.pop("rubric", None)
    # Positional: the Golden's field order (a keyword call costs a third more on 100,000).
    return Golden(
        raw_id.strip(),
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
    ), items
