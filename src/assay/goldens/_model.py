"""The Golden model and the validation of its fields (one place for every source format)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
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
_NON_NEGATIVE_FIELDS = ("max_cost_usd", "max_duration_s")
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
        *_LIST_OF_STR_FIELDS,
        *_STR_FIELDS,
        *_NON_NEGATIVE_FIELDS,
    }
)


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


def build_golden(
    data: Any,
    *,
    source: str,
    default_id: str | None,
    folder_tier: Tier | None,
    has_origin: bool = False,
    strict: bool = False,
) -> Golden:
    """Validate one golden's fields and build it.

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
    raw_asserts = data.pop("asserts", None)
    if raw_asserts is None:
        raw_asserts = []
    if not isinstance(raw_asserts, list):
        raise GoldenError("asserts must be a list", source=source, field="asserts")
    asserts, mapped = parse_asserts(raw_asserts, source=source)
    for i, spec in enumerate(asserts if mapped else ()):
        typed = typed_text_argument(spec) if spec.op in TEXT_OPS else None
        if typed is not None:
            name, what = typed
            raise GoldenError(
                f"YAML read the {name} of '{spec.full_op}' as {what}: quote it "
                f'({name}: "...") to test the text you wrote',
                source=source,
                field=f"asserts[{i}].{name}",
            )
    threshold = data.pop("threshold", DEFAULT_THRESHOLD)
    if threshold is not DEFAULT_THRESHOLD and (not is_number(threshold) or not 0 <= threshold <= 1):
        raise GoldenError(
            "threshold must be a number between 0 and 1", source=source, field="threshold"
        )
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
    )
