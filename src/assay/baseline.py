"""The committed baseline: write it, read it, and diff a run against it.

A regression is a golden that passed in the baseline and does not now (fail, no-output,
needs-judge, error, or missing from the suite), or a numeric score below its baseline score.
New goldens, fail→pass and changed checks are notes, never regressions.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from assay._version import __version__
from assay.asserts import AssertSpec
from assay.errors import BaselineError
from assay.goldens import Golden
from assay.io import atomic_write_text, dump_json, read_json
from assay.results import CandidateSummary, Result
from assay.vocabulary import STATUSES, TIERS

SCHEMA_VERSION: Final = 1
_SCORE_EPSILON: Final = 1e-9
_NUMBER = (int, float)


@dataclass(frozen=True, slots=True)
class Regression:
    """One regressed golden and why."""

    candidate: str
    id: str
    why: str

    def to_dict(self) -> dict[str, str]:
        return {"id": self.id, "candidate": self.candidate, "why": self.why}


@dataclass(frozen=True, slots=True)
class Diff:
    regressions: list[Regression]
    notes: list[str]


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


def fingerprint(golden: Golden, memo: dict[AssertSpec, str] | None = None) -> str:
    """A digest of what decides the golden (its checks, expected, threshold, rubric).

    ``memo`` caches each assert's canonical text: suites repeat the same asserts many times.
    """
    parts = []
    for spec in golden.asserts:
        text = memo.get(spec) if memo is not None else None
        if text is None:
            text = _canonical([spec.full_op, dict(spec.args)])
            if memo is not None:
                memo[spec] = text
        parts.append(text)
    material = "\x1f".join(
        [*parts, _canonical(golden.expected), repr(golden.threshold), _canonical(golden.rubric)]
    )
    return "sha256:" + hashlib.sha256(material.encode("utf-8")).hexdigest()[:32]


def build(
    results: Iterable[Result], goldens: Mapping[str, Golden], summaries: Sequence[CandidateSummary]
) -> dict[str, Any]:
    """The baseline document for a run (schema_version first; field order is the format)."""
    per: dict[str, dict[str, Any]] = {}
    memo: dict[AssertSpec, str] = {}
    for r in results:
        golden = goldens.get(r.id)
        per.setdefault(r.candidate, {})[r.id] = {
            "tier": r.tier,
            "status": r.status,
            "passed": r.passed,
            "score": r.score,
            "decided_by": r.decided_by,
            "fingerprint": fingerprint(golden, memo) if golden is not None else None,
        }
    return {
        "schema_version": SCHEMA_VERSION,
        "assay_version": __version__,
        "summary": {s.candidate: s.to_dict() for s in summaries},
        "goldens": per,
    }


def decided_count(document: Mapping[str, Any]) -> int:
    """How many entries of a baseline were decided (pass or fail, not needs-judge/no-output)."""
    count = 0
    for entries in document.get("goldens", {}).values():
        for entry in entries.values():
            if isinstance(entry, dict) and entry.get("status") in ("pass", "fail"):
                count += 1
    return count


def _is_tier(value: Any) -> bool:
    return isinstance(value, str) and value in TIERS


def _is_status(value: Any) -> bool:
    return isinstance(value, str) and value in STATUSES


def _is_passed(value: Any) -> bool:  # null: undecided (needs-judge, no-output)
    return value is None or isinstance(value, bool)


def _is_score(value: Any) -> bool:
    return value is None or (
        isinstance(value, _NUMBER) and not isinstance(value, bool) and math.isfinite(value)
    )


def _is_text(value: Any) -> bool:
    return value is None or isinstance(value, str)


# What each field of an entry must hold, and the message when it does not. A hand edit of the
# wrong type would otherwise be silently misread ("passed": "yes" is not true, so a regression of
# that golden would go unreported; a score "0.9" is never compared) or crash the diff.
_ENTRY_FIELDS: Final[tuple[tuple[str, Callable[[Any], bool], str], ...]] = (
    ("tier", _is_tier, f"must be one of {', '.join(TIERS)}"),
    ("status", _is_status, f"must be one of {', '.join(STATUSES)}"),
    ("passed", _is_passed, "must be true, false or null"),
    ("score", _is_score, "must be a finite number or null"),
    ("decided_by", _is_text, "must be a string or null"),
    ("fingerprint", _is_text, "must be a string or null"),
)
_REQUIRED: Final = frozenset({"tier", "status", "passed"})


def _check_entry(entry: Mapping[str, Any], source: str, where: str) -> None:
    for name, valid, rule in _ENTRY_FIELDS:
        if name not in entry:
            if name in _REQUIRED:
                raise BaselineError("is missing", source=source, field=f"{where}.{name}")
            continue
        if not valid(entry[name]):
            # The value is named by its JSON type only: an entry holds no golden text, but a
            # hand edit could have put anything there.
            raise BaselineError(
                f"{rule} (found {_json_type(entry[name])})", source=source, field=f"{where}.{name}"
            )


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, str):
        return f"the string {json.dumps(value)}" if len(value) <= 40 else "a long string"
    if isinstance(value, _NUMBER):
        return f"the number {value!r}" if math.isfinite(value) else "a non-finite number"
    return "a list" if isinstance(value, list) else "an object"


def load(path: Path) -> dict[str, Any]:
    """Read and validate a baseline.

    Raises:
        BaselineError: missing, unreadable, not JSON, of an unknown schema version, or an
            entry field of the wrong type or value (naming the file and the field).
    """
    source = str(path)
    document = read_json(
        path, BaselineError, missing="no baseline file; run `assay run ... --write-baseline` first"
    )
    if not isinstance(document, dict):
        raise BaselineError("the baseline must be a JSON object", source=source)
    version = document.get("schema_version")
    if version != SCHEMA_VERSION:
        raise BaselineError(
            f"unknown baseline schema version {version!r} (this assay reads {SCHEMA_VERSION})",
            source=source,
            field="schema_version",
        )
    goldens = document.get("goldens")
    if not isinstance(goldens, dict) or not all(
        isinstance(v, dict) and all(isinstance(e, dict) for e in v.values())
        for v in goldens.values()
    ):
        raise BaselineError(
            "must map candidate -> golden id -> entry", source=source, field="goldens"
        )
    for candidate, entries in goldens.items():
        for golden_id, entry in entries.items():
            _check_entry(entry, source, f"goldens.{candidate}.{golden_id}")
    return document


def write(path: Path, document: Mapping[str, Any], *, force: bool = False) -> None:
    """Write the baseline atomically.

    Refuses (unless ``force``) to replace a baseline that decided goldens with one that decides
    none: an empty or wrong outputs file would otherwise silently disarm the gate.

    Raises:
        BaselineError: on that refusal, or when the file cannot be written (the old one is kept).
    """
    if not force and decided_count(document) == 0 and path.exists():
        try:
            old = read_json(path, BaselineError)
        except BaselineError:  # unreadable: nothing decided in it is lost by replacing it
            old = None
        if isinstance(old, dict) and decided_count(old) > 0:
            raise BaselineError(
                f"refusing to replace a baseline that decided {decided_count(old)} goldens with "
                "one that decides none (check the outputs file; --force overrides)",
                source=str(path),
            )
    atomic_write_text(path, dump_json(document), BaselineError)


def _why_failed(result: Result) -> str:
    text = f"passed in the baseline, now {result.status}"
    failed = result.failed_checks()
    if failed:
        parts = [f"{c.text} ({c.reason})" if c.reason else c.text for c in failed[:3]]
        more = f" and {len(failed) - 3} more" if len(failed) > 3 else ""
        text += ": " + "; ".join(parts) + more
    return text


def _listed(label: str, keys: Sequence[str]) -> str:
    shown = ", ".join(keys[:5]) + (f" and {len(keys) - 5} more" if len(keys) > 5 else "")
    return f"{len(keys)} {label}: {shown}"


def _compare(entry: Mapping[str, Any], result: Result | None, known: bool) -> list[str]:
    """Why one baseline entry regressed (empty when it did not)."""
    why: list[str] = []
    if result is None:
        if entry.get("passed") is True:
            missing = "no output from this candidate" if known else "missing from the suite"
            why.append(f"passed in the baseline, now {missing}")
        return why
    if entry.get("passed") is True and result.status != "pass":
        why.append(_why_failed(result))
    old, new = entry.get("score"), result.score
    if (
        isinstance(old, _NUMBER)
        and not isinstance(old, bool)
        and new is not None
        and new < old - _SCORE_EPSILON
    ):
        why.append(f"score dropped {old:.3f} → {new:.3f}")
    return why


def diff(
    document: Mapping[str, Any],
    results: Sequence[Result],
    goldens: Mapping[str, Golden],
    tiers: Iterable[str] | None = None,
) -> Diff:
    """Compare a run with a baseline.

    Args:
        tiers: the tiers this run selected; baseline goldens of other tiers are not compared.
    """
    wanted = set(tiers) if tiers else None
    now = {(r.candidate, r.id): r for r in results}
    regressions: list[Regression] = []
    fixed: list[str] = []
    changed: list[str] = []
    memo: dict[AssertSpec, str] = {}
    base: Mapping[str, Mapping[str, Any]] = document["goldens"]
    for candidate in sorted(base):
        for golden_id in sorted(base[candidate]):
            entry = base[candidate][golden_id]
            if wanted is not None and entry.get("tier") not in wanted:
                continue
            result = now.get((candidate, golden_id))
            why = _compare(entry, result, golden_id in goldens)
            if why:
                regressions.append(Regression(candidate, golden_id, "; ".join(why)))
            if result is None:
                continue
            if entry.get("passed") is False and result.status == "pass":
                fixed.append(f"{candidate}/{golden_id}")
            golden = goldens.get(golden_id)
            recorded = entry.get("fingerprint")
            if golden is not None and recorded and recorded != fingerprint(golden, memo):
                changed.append(f"{candidate}/{golden_id}")
    new = sorted(f"{r.candidate}/{r.id}" for r in results if r.id not in base.get(r.candidate, {}))
    notes = []
    if fixed:
        notes.append(_listed("golden(s) went from fail to pass", fixed))
    if changed:
        notes.append(_listed("golden(s) changed their checks since the baseline", changed))
    if new:
        notes.append(_listed("golden(s) not in the baseline", new))
    return Diff(regressions, notes)
