"""The committed baseline: build it from a run, write it, read and validate it.

Schema 2 records the suite the baseline was written from and, for a golden whose outcome is
random, the evidence of its repeats (trials, passes, errors, score samples) that the gate's
statistics compare with (:mod:`assay.gate._regressions`). A schema 1 baseline (assay 0.1) is
refused with the fix: write it again with ``--write-baseline``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from assay import validate as v
from assay._version import __version__
from assay.asserts import AssertSpec
from assay.errors import BaselineError
from assay.goldens import Golden
from assay.results import SCHEMA_VERSION, CandidateSummary, RecordType, Result
from assay.vocabulary import STATUSES, TIERS

if TYPE_CHECKING:
    from assay.gate._regressions import Trials

# One encoder for every fingerprint: json.dumps with options builds a new one per call, which
# was a third of a 10,000-golden --check's fingerprinting.
_ENCODER: Final = json.JSONEncoder(sort_keys=True, ensure_ascii=False, default=str)
_encode_text: Final = json.encoder.encode_basestring  # what the encoder does to a str


def _canonical(value: Any) -> str:
    if value is None:  # most goldens' expected or rubric: the encoder's exact text
        return "null"
    if type(value) is str:
        return _encode_text(value)
    return _ENCODER.encode(value)


# What :func:`fingerprint` remembers between goldens: by object id, the canonical text of an
# assert, and of a tuple of asserts (suites share assert objects among goldens, and a worker's
# goldens share one tuple). Each object is kept with its text, so its id names no other one.
FingerprintMemo = dict[int, tuple[object, str]]


def _asserts_text(asserts: tuple[AssertSpec, ...], memo: FingerprintMemo) -> str:
    known = memo.get(id(asserts))
    if known is not None and known[0] is asserts:
        return known[1]
    parts = []
    for spec in asserts:
        found = memo.get(id(spec))
        if found is None or found[0] is not spec:
            found = memo[id(spec)] = (spec, _canonical([spec.full_op, dict(spec.args)]) + "\x1f")
        parts.append(found[1])
    text = "".join(parts)
    memo[id(asserts)] = (asserts, text)
    return text


def fingerprint(golden: Golden, memo: FingerprintMemo | None = None) -> str:
    """A digest of what decides the golden (its checks, expected, threshold, rubric, and its
    transform and vars when it has them).

    ``memo`` caches the canonical text of asserts: suites repeat the same ones many times.
    """
    head = _asserts_text(golden.asserts, {} if memo is None else memo)
    material = (
        f"{head}{_canonical(golden.expected)}\x1f{golden.threshold!r}\x1f"
        f"{_canonical(golden.rubric)}"
    )
    if golden.transform is not None:
        # What rewrites the output decides the verdict; hashed only when set, as vars are.
        material += "\x1f" + _canonical(golden.transform.to_dict())
    variables = golden.fields.get("vars")
    if variables is not None:
        # Vars change what the prompt says, so they decide the golden too; only a golden that
        # has them hashes them, which keeps every older baseline's fingerprints as they were.
        material += "\x1f" + _canonical(variables)
    return "sha256:" + hashlib.sha256(material.encode("utf-8")).hexdigest()[:32]


def fingerprint_of(golden: Golden | str, memo: FingerprintMemo) -> str:
    """A golden's fingerprint, or the one already computed (a shard's partial carries them)."""
    return golden if isinstance(golden, str) else fingerprint(golden, memo)


def build(
    results: Iterable[Result],
    goldens: Mapping[str, Golden] | Mapping[str, str],
    summaries: Sequence[CandidateSummary],
    *,
    trials: Mapping[tuple[str, str], Trials] | None = None,
    suite: str | None = None,
    kind: str = "gate",
) -> dict[str, Any]:
    """The baseline document for a run (schema_version first; field order is the format).

    Args:
        goldens: id -> golden, or id -> its fingerprint (a merge of shards has no goldens).
        trials: the repeats behind each random result; their evidence is kept in the entry.
        suite: the suite the run loaded (see :func:`assay.gate._run.suite_of`).
        kind: ``gate`` or ``agent``: which run wrote it (a check refuses the other kind).
    """
    per: dict[str, dict[str, Any]] = {}
    memo: FingerprintMemo = {}
    evidence = trials or {}
    for r in results:
        golden = goldens.get(r.id)
        entry = {
            "tier": r.tier,
            "status": r.status,
            "passed": r.passed,
            "score": r.score,
            "decided_by": r.decided_by,
            "fingerprint": fingerprint_of(golden, memo) if golden is not None else None,
        }
        found = evidence.get((r.candidate, r.id))
        if found is not None:
            entry.update(found.to_dict())
        per.setdefault(r.candidate, {})[r.id] = entry
    document: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "kind": kind,
        "assay_version": __version__,
    }
    if suite is not None:
        document["suite"] = suite
    document["summary"] = {s.candidate: s.to_dict() for s in summaries}
    document["goldens"] = per
    return document


def changed_goldens(
    document: Mapping[str, Any], goldens: Mapping[str, Golden] | Mapping[str, str]
) -> list[str]:
    """``candidate/id`` of every baseline golden whose checks changed since it was written
    (``goldens``: id -> golden, or id -> its fingerprint)."""
    memo: FingerprintMemo = {}
    out: list[str] = []
    for candidate, entries in document["goldens"].items():
        for golden_id, entry in entries.items():
            golden = goldens.get(golden_id)
            recorded = entry.get("fingerprint")
            if golden is not None and recorded and recorded != fingerprint_of(golden, memo):
                out.append(f"{candidate}/{golden_id}")
    return out


def decided_count(document: Mapping[str, Any]) -> int:
    """How many entries of a baseline were decided (pass or fail, not needs-judge/no-output)."""
    return sum(
        1
        for entries in document.get("goldens", {}).values()
        for entry in entries.values()
        if isinstance(entry, dict) and entry.get("status") in ("pass", "fail")
    )


def _found(rule: str) -> str:
    """A rule's message naming the value by its JSON type only: an entry holds no golden text,
    but a hand edit could have put anything there."""
    return rule + " (found {found})"


# What each field of an entry must hold. A hand edit of the wrong type would otherwise be
# silently misread ("passed": "yes" is not true, so a regression of that golden would go
# unreported; a score "0.9" is never compared) or crash the diff.
_MISSING: Final = "is missing"
_TEXT: Final = v.Maybe(v.Str(message=_found("must be a string or null")))
_ENTRY_FIELDS: Final = {
    "tier": v.Str(
        choices=TIERS, message=_found(f"must be one of {', '.join(TIERS)}"), required=_MISSING
    ),
    "status": v.Str(
        choices=STATUSES, message=_found(f"must be one of {', '.join(STATUSES)}"), required=_MISSING
    ),
    # null: undecided (needs-judge, no-output)
    "passed": v.Maybe(v.Bool(message=_found("must be true, false or null")), required=_MISSING),
    "score": v.Maybe(v.Num(message=_found("must be a finite number or null"))),
    "decided_by": _TEXT,
    "fingerprint": _TEXT,
}
# Schema 2: the evidence of a random golden's repeats (all of it or none).
_COUNT: Final = v.Int(at_least=0, message=_found("must be an integer >= 0"), required=_MISSING)
_SAMPLES: Final = "must be a list of finite numbers"
_TRIAL_FIELDS: Final = {
    "trials": _COUNT,
    "passes": _COUNT,
    "errors": _COUNT,
    "scores": v.List(
        v.Num(message=_SAMPLES + " (found a list)"), message=_found(_SAMPLES), required=_MISSING
    ),
    "random": v.Bool(message=_found("must be true or false"), required=_MISSING),
}
_UNKNOWN: Final = "unknown field"
_ENTRY: Final = v.Table(_ENTRY_FIELDS, unknown=_UNKNOWN)
_RANDOM_ENTRY: Final = v.Table({**_ENTRY_FIELDS, **_TRIAL_FIELDS}, unknown=_UNKNOWN)
_NOT_ENTRIES: Final = "must map candidate -> golden id -> entry"


def _check_goldens(goldens: Any, at: v.At, key: v.Key) -> Any:
    """Every entry checked by its table. Most entries of a suite are equal but for their
    fingerprint (the same tier, status, passed, score, decided_by): one equal to an entry
    already checked, types included (``"passed": 1`` is no ``true``), is not checked again."""
    at = at.sub(key)
    if not isinstance(goldens, dict):
        at.fail(_NOT_ENTRIES)
    checked: set[tuple[Any, ...]] = set()
    for candidate, entries in goldens.items():
        if not isinstance(entries, dict) or not all(isinstance(e, dict) for e in entries.values()):
            at.fail(_NOT_ENTRIES)
        where = at.sub(candidate)
        for golden_id, entry in entries.items():
            same: tuple[Any, ...] | None
            same = tuple([(n, type(x), x) for n, x in entry.items() if n != "fingerprint"])
            try:
                if same in checked and type(entry.get("fingerprint")) in (str, type(None)):
                    continue
            except TypeError:  # a list or an object in it (a random golden's scores)
                same = None
            if _TRIAL_FIELDS.keys().isdisjoint(entry):
                _ENTRY.check(entry, where, golden_id)
            else:
                _RANDOM_ENTRY.check(entry, where, golden_id)
                if entry["passes"] > entry["trials"]:
                    where.sub(golden_id).fail("must not exceed trials", "passes")
            if same is not None:
                checked.add(same)
    return goldens


# The baseline, declared: the family's version first (a schema 1 baseline is told the fix),
# then its fields. Committed and reviewed, so it is written indented.
BASELINE: Final = RecordType(
    "baseline",
    BaselineError,
    fields=v.Table(
        {
            "schema_version": v.Spec(),
            "kind": v.Str(choices=("gate", "agent"), message=_found("must be gate or agent")),
            "assay_version": v.Spec(),
            "suite": v.Str(message=_found("must be a string")),
            "summary": v.Spec(),
            "goldens": v.Check(_check_goldens, required=_NOT_ENTRIES),
            "composite": v.Spec(),  # an agent baseline's: read by assay.agent._gate
        },
        unknown=_UNKNOWN,
    ),
    retired={
        1: "a schema 1 baseline (assay 0.1) records no suite and one trial per golden: "
        "write it again with --write-baseline"
    },
)


def load_baseline(path: Path) -> dict[str, Any]:
    """Read and validate a baseline.

    Raises:
        BaselineError: missing, unreadable, not JSON, of an unknown schema version, or a field
            of the wrong type or value, or unknown (naming the file and the field).
    """
    return BASELINE.read(path, missing="no baseline file; write one first with --write-baseline")


def check_kind(document: Mapping[str, Any], kind: str, source: str) -> None:
    """A check compares with a baseline its own kind of run wrote (a BaselineError if not)."""
    written = document.get("kind", "gate")
    if written != kind:
        name = {"gate": "a goldens gate run", "agent": "an agent run"}
        raise BaselineError(
            f"this baseline was written by {name[written]}, not {name[kind]}",
            source=source,
            field="kind",
        )


def write(path: Path, document: Mapping[str, Any], *, force: bool = False) -> None:
    """Write the baseline atomically (a BaselineError when it cannot be: the old one is kept).

    Refuses (unless ``force``) to replace a baseline that decided goldens with one that decides
    none: an empty or wrong outputs file would otherwise silently disarm the gate.
    """
    if not force and decided_count(document) == 0 and path.exists():
        try:
            old = BASELINE.read(path)
        except BaselineError:  # unreadable: nothing decided in it is lost by replacing it
            old = None
        if old is not None and decided_count(old) > 0:
            raise BaselineError(
                f"refusing to replace a baseline that decided {decided_count(old)} goldens with "
                "one that decides none (check the outputs file; --force overrides)",
                source=str(path),
            )
    BASELINE.write(path, document)
