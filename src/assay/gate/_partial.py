"""A shard's partial: what ``assay merge`` needs to rebuild the whole run's verdict exactly.

A run with ``--shard I/N`` adds a ``partial`` section to its ``--json`` document. Besides the
results (already in the document) it carries what the verdict reads and the document lacks:
each golden's place in the whole suite's order, its fingerprint, the evidence of every random
result (unrounded), the errors, the stray outputs, and the settings that must agree across
shards. The readers below take them back (:mod:`assay.gate._merge` and the agent's merge use them).

Nothing here is ground truth: ids, fingerprints (digests), counts and scores only.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from assay import validate as v
from assay._version import __version__
from assay.asserts import CheckResult
from assay.errors import MergeError
from assay.gate._verdict import MODES
from assay.results import RecordType, Result
from assay.vocabulary import STATUSES

if TYPE_CHECKING:
    from assay.config import Config
    from assay.gate._options import GateOptions
    from assay.gate._regressions import Trials
    from assay.gate._verdict import Evidence, GateStep
    from assay.goldens import Golden

PARTIAL_VERSION: Final = 1


def suite_digest(ids: Sequence[str]) -> str:
    """A digest of the whole suite's ids in their order: shards of one suite agree on it."""
    material = "\n".join(ids).encode("utf-8", "surrogatepass")
    return "sha256:" + hashlib.sha256(material).hexdigest()


def file_digest(path: Path) -> str | None:
    """The SHA-256 of a file's bytes (None when it cannot be read: nothing to compare)."""
    try:
        return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def trials_to_list(trials: Mapping[tuple[str, str], Trials]) -> list[list[Any]]:
    """Every (candidate, id, evidence), scores unrounded: the merged statistics must be the
    whole run's to the last bit."""
    return [
        [candidate, golden_id, t.decided, t.passes, t.errors, list(t.scores), t.random]
        for (candidate, golden_id), t in trials.items()
    ]


def gate_partial(
    evidence: Evidence,
    step: GateStep,
    options: GateOptions,
    config: Config,
    *,
    suite_ids: Sequence[str],
    goldens: Sequence[Golden],
    candidates: Sequence[str],
    live: bool,
    strays: Mapping[str, tuple[int, list[str]]],
    spec_notes: Sequence[str],
    judging: bool,
    similarity: str,
    judge_saved: int | None,
) -> dict[str, Any]:
    """The partial of one shard of a goldens gate run."""
    from assay.gate._baseline import FingerprintMemo, fingerprint

    position = {golden_id: i for i, golden_id in enumerate(suite_ids)}
    strict = set(step.strict)
    memo: FingerprintMemo = {}
    rows = [[g.id, position[g.id], fingerprint(g, memo), g.id in strict] for g in goldens]
    baseline = None
    if step.mode == "check":
        baseline = {"path": str(step.baseline), "sha256": file_digest(step.baseline)}
    settings = {
        "assay_version": __version__,
        "mode": step.mode,
        "tiers": list(step.tiers),
        "similarity": similarity,
        "judge": judging,
        "alpha": step.alpha,
        "score_tolerance": config.gate.score_tolerance,
        "max_error_rate": config.gate.max_error_rate,
        "min_pass_rate": config.min_pass_rate,
        "max_repeats": options.max_repeats or config.gate.max_repeats,
        "repeats": options.repeats,  # --repeats: the candidates file's, unless overridden
        "strict": config.strict,
        "config": None if config.source is None else file_digest(Path(config.source)),
        "candidates": None if options.candidates is None else file_digest(options.candidates),
        "baseline": baseline,
    }
    return {
        "version": PARTIAL_VERSION,
        "kind": "gate",
        "shard": str(options.shard),
        "suite": step.suite,
        "suite_goldens": len(suite_ids),
        "suite_digest": suite_digest(suite_ids),
        "settings": settings,
        "candidates": list(candidates),
        "live": live,
        "notes": list(spec_notes),
        "goldens": rows,
        "trials": trials_to_list(evidence.trials),
        "looks": evidence.looks,
        "first_look": None if evidence.first_look is None else trials_to_list(evidence.first_look),
        "errors": {
            "total": evidence.tally.total,
            "errors": evidence.tally.errors,
            "pairs": evidence.tally.pairs,
            "samples": [[c, g, i, list(notes)] for c, g, i, notes in evidence.tally.samples],
        },
        "strays": {c: [count, list(examples)] for c, (count, examples) in strays.items()},
        "judge_saved": judge_saved,
    }


# --------------------------------------------------------------------------- reading partials

# The shard document, declared: a hand-edited or truncated shard is one line naming the first
# bad field, never a crash inside the merge. Settings the merge only compares across shards
# may hold anything; every key must be one a shard writes.
_ANY: Final = v.Spec()
_COUNT: Final = v.Int(at_least=0, integral=True, required=True)
_NAME: Final = v.Str(required=True)
_NAMES: Final = v.List(v.Str(), required=True)
_TEXT: Final = v.Maybe(v.Str(), required=True)
_TRIAL: Final = v.Row(v.Str(), v.Str(), _COUNT, _COUNT, _COUNT, v.List(v.Num()), v.Bool())


def _table(fields: Mapping[str, v.Spec], **options: Any) -> v.Table:
    return v.Table(fields, unknown="unknown field", **options)


_CHECK: Final = _table(
    {
        "text": _NAME,
        "op": _NAME,
        "passed": v.Bool(required=True),
        "reason": _TEXT,
        "evidence": v.Spec(required=True),
    }
)
_RESULT: Final = _table(
    {
        "id": _NAME,
        "tier": _TEXT,
        "candidate": _NAME,
        "status": v.Str(choices=STATUSES, required=True),
        "passed": v.Maybe(v.Bool(), required=True),
        "score": v.Maybe(v.Num(), required=True),
        "decided_by": _TEXT,
        "checks": v.List(_CHECK, indexed=True, required=True),
        "notes": v.List(v.Str()),
        "repeats": _table(
            {"k": v.Int(at_least=1, integral=True, required=True), "passed": _COUNT}
            | dict.fromkeys(("pass_fraction", "pass_at_k", "pass_hat_k", "flaky"), _ANY)
        ),
        "title": v.Str(),
        "telemetry": v.Dict(),
        "failure": _table({"category": _NAME, "details": _NAME}),
        "safety": v.Str(),
        "finish_reason": v.Str(),
        "output": _ANY,  # a gate's answer (or failed output), which the reports show
        # With repeats: the distinct answers that did not pass, with their counts.
        "failing_outputs": v.List(_table({"output": _ANY, "count": _COUNT}), indexed=True),
    }
)
_DOCUMENT: Final = v.Table(
    {"results": v.List(_RESULT, indexed=True, required=True), "partial": _ANY},
    keep=lambda key: True,  # the rest is the run's --json document, rebuilt by the merge
)
_SETTINGS: Final = {
    "assay_version": _ANY,
    "mode": v.Str(choices=MODES, required=True),
    "tiers": _NAMES,
    "alpha": v.Num(above=0, at_most=1, required=True),  # as the config allows it
    "score_tolerance": v.Num(at_least=0, required=True),
    "min_pass_rate": v.Maybe(v.Num(), required=True),
    "config": _ANY,
    "baseline": v.Maybe(_table({"path": _NAME, "sha256": _TEXT}), required=True),
}
_HEAD: Final = {
    "version": _ANY,  # read first: another version's shards are told so
    "kind": v.Str(choices=("gate", "agent"), required=True),
    "shard": v.Str(pattern="[0-9]+/[0-9]+", message="must be I/N (found {found})", required=True),
    "suite": _NAME,
    "suite_goldens": _COUNT,
    "suite_digest": _NAME,
    "goldens": v.List(v.Row(v.Str(), _COUNT, v.Str(), v.Bool()), indexed=True, required=True),
}
_GATE_SETTINGS: Final = _SETTINGS | {
    "max_error_rate": v.Num(at_least=0, at_most=1, required=True),
    **dict.fromkeys("similarity judge max_repeats repeats strict candidates".split(), _ANY),
}
_ERRORS: Final = {
    "total": _COUNT,
    "errors": _COUNT,
    "pairs": _COUNT,
    "samples": v.List(
        v.Row(v.Str(), v.Str(), _COUNT, v.List(v.Str())), indexed=True, required=True
    ),
}
_GATE: Final = _table(
    _HEAD
    | {
        "settings": _table(_GATE_SETTINGS, required=True),
        "candidates": _NAMES,
        "live": v.Bool(required=True),
        "notes": _NAMES,
        "trials": v.List(_TRIAL, indexed=True, required=True),
        "looks": v.Int(at_least=1, integral=True, required=True),
        "first_look": v.Maybe(v.List(_TRIAL, indexed=True), required=True),
        "errors": _table(_ERRORS, required=True),
        "strays": v.Dict(v.Row(_COUNT, v.List(v.Str())), required=True),
        "judge_saved": _ANY,  # summed when it is an integer
    }
)
_AGENT_SETTINGS: Final = _SETTINGS | {
    "min_score": v.Maybe(v.Num(), required=True),
    "bench": v.Dict(v.Num(), required=True),
}
_RECORD: Final = v.Row(v.Str(), v.Num(), v.Num(), _COUNT, _COUNT, _COUNT, v.Maybe(v.Dict(v.Num())))
_AGENT: Final = _table(
    _HEAD
    | {
        "settings": _table(_AGENT_SETTINGS, required=True),
        "selection": v.Dict(required=True),
        "records": v.List(_RECORD, indexed=True, required=True),
    }
)


@dataclass(frozen=True, slots=True)
class ShardDocument:
    """One shard's document, and the file it came from (every message names it)."""

    source: str
    document: dict[str, Any]

    @property
    def partial(self) -> dict[str, Any]:
        value = self.document["partial"]
        assert isinstance(value, dict)
        return value


def _check_part(document: dict[str, Any], at: v.At, key: v.Key) -> dict[str, Any]:
    """A shard's document: its partial first (another assay version's shards are told so, not
    a field that version wrote otherwise), then its results and the partial's fields."""
    partial = document.get("partial")
    if not isinstance(partial, dict):
        at.fail(
            "not the --json document of a shard (run each shard with --shard I/N --json)",
            "partial",
        )
    if partial.get("version") != PARTIAL_VERSION:
        at.fail(
            f"partial version {partial.get('version')!r} is not {PARTIAL_VERSION} "
            "(the shards were run by another assay version)",
            "partial.version",
        )
    _DOCUMENT.check(document, at)
    (_AGENT if partial.get("kind") == "agent" else _GATE).check(partial, at, "partial")
    return document


SHARD_PART: Final = RecordType("shard part", MergeError, fields=v.Check(_check_part))


def read_shards(paths: Sequence[Path]) -> list[ShardDocument]:
    """Read each shard document.

    Raises:
        MergeError: a file that cannot be read, is not JSON, or is not a shard's document
            (naming the first bad field).
    """
    parts = [ShardDocument(str(path), SHARD_PART.read(path)) for path in paths]
    if not parts:
        raise MergeError("no shard documents to merge")
    return parts


def check_shards(parts: Sequence[ShardDocument], same: Sequence[str]) -> None:
    """That the parts are shards 1..N of one run: the same ``same`` fields, each shard once (a
    MergeError names the files that disagree, a duplicate shard, or the missing ones)."""
    first = parts[0]
    for part in parts[1:]:
        for name in same:
            if part.partial.get(name) != first.partial.get(name):
                where, here, there = _difference(
                    name, first.partial.get(name), part.partial.get(name)
                )
                raise MergeError(
                    f"{where} is {here} here but {there} in {first.source}: not shards of the "
                    "same run",
                    source=part.source,
                    field=f"partial.{name}",
                )
    seen: dict[int, str] = {}
    count = _shard_of(first)[1]
    for part in parts:
        index, n = _shard_of(part)
        if n != count:
            raise MergeError(
                f"is shard {index}/{n}, but {first.source} is one of {count}",
                source=part.source,
                field="partial.shard",
            )
        if index in seen:
            raise MergeError(
                f"is shard {index}/{n} again (also {seen[index]})",
                source=part.source,
                field="partial.shard",
            )
        seen[index] = part.source
    missing = [str(i) for i in range(1, count + 1) if i not in seen]
    if missing:
        raise MergeError(
            f"shard(s) {', '.join(missing)} of {count} missing: a merge needs every shard",
        )


def _difference(name: str, expected: Any, found: Any) -> tuple[str, str, str]:
    """Where two partials differ (the first differing setting), and the two values."""
    if isinstance(expected, dict) and isinstance(found, dict):
        keys = [k for k in {**expected, **found} if expected.get(k) != found.get(k)]
        if keys:
            return f"{name}.{keys[0]}", _short(found.get(keys[0])), _short(expected.get(keys[0]))
    return name, _short(found), _short(expected)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _shard_of(part: ShardDocument) -> tuple[int, int]:
    from assay.gate._shards import parse_shard

    try:
        shard = parse_shard(str(part.partial.get("shard")))
    except ValueError as exc:
        raise MergeError(str(exc), source=part.source, field="partial.shard") from None
    return shard.index, shard.count


def result_from_dict(data: Mapping[str, Any]) -> Result:
    """A result back from its JSON form (``Result.to_dict``); it writes the same JSON again."""
    repeats = data.get("repeats")
    failure = data.get("failure")
    return Result(
        id=data["id"],
        tier=data["tier"],
        candidate=data["candidate"],
        status=data["status"],
        passed=data["passed"],
        score=data["score"],
        decided_by=data["decided_by"],
        checks=tuple(
            CheckResult(c["text"], c["op"], c["passed"], c["reason"], c["evidence"])
            for c in data.get("checks", [])
        ),
        notes=tuple(data.get("notes", ())),
        repeats=None if repeats is None else (repeats["passed"], repeats["k"]),
        title=data.get("title"),
        telemetry=data.get("telemetry"),
        failure=None if failure is None else (failure["category"], failure["details"]),
        safety=data.get("safety"),
        finish_reason=data.get("finish_reason"),
    )


def trials_from_list(rows: Sequence[Sequence[Any]]) -> dict[tuple[str, str], Trials]:
    from assay.gate._regressions import Trials

    return {
        (str(c), str(g)): Trials(int(d), int(p), int(e), tuple(float(s) for s in scores), bool(r))
        for c, g, d, p, e, scores, r in rows
    }


def ordered_results(
    parts: Sequence[ShardDocument], position: Mapping[str, int], candidates: Sequence[str]
) -> list[tuple[dict[str, Any], Result]]:
    """Every shard's results, in the whole run's order (candidate, then suite order); a
    MergeError for a result of a golden or candidate its shard's partial does not list."""
    rank = {c: i for i, c in enumerate(candidates)}
    rows: list[tuple[tuple[int, int], dict[str, Any], Result]] = []
    for part in parts:
        for index, data in enumerate(part.document["results"]):
            try:
                result = result_from_dict(data)
                key = (rank[result.candidate], position[result.id])
            except (KeyError, TypeError, ValueError):
                raise MergeError(
                    "is not a result of this shard's goldens and candidates",
                    source=part.source,
                    field=f"results[{index}]",
                ) from None
            rows.append((key, data, result))
    rows.sort(key=lambda row: row[0])
    return [(data, result) for _, data, result in rows]


def checked_baseline(
    part: ShardDocument, settings: Mapping[str, Any], config: Config, override: Path | None
) -> tuple[dict[str, Any], Path]:
    """The baseline the shards compared with, and its path; refused when its bytes changed."""
    from assay.gate._baseline import load_baseline

    recorded = settings.get("baseline") or {}
    # As the shards named it (relative to where they ran, as this merge runs): the merged
    # document names the baseline as the whole run would.
    path = override if override is not None else Path(str(recorded.get("path")))
    document = load_baseline(path)
    if file_digest(path) != recorded.get("sha256"):
        raise MergeError(
            "is not the baseline the shards compared with (its bytes differ from the ones "
            f"{part.source} recorded): merge against the same baseline",
            source=str(path),
        )
    return document, path


@dataclass(frozen=True, slots=True)
class SuiteIndex:
    """The whole suite as the shards hold it: each golden's place, fingerprint (in suite
    order) and the strict goldens (in suite order)."""

    position: dict[str, int]
    fingerprints: dict[str, str]
    strict: list[str]


def suite_index(parts: Sequence[ShardDocument]) -> SuiteIndex:
    """Where each golden of the shards sits in the whole suite; a MergeError for a golden in two
    shards, or shards that do not hold the whole suite."""
    position: dict[str, int] = {}
    fingerprints: dict[str, str] = {}
    strict: list[tuple[int, str]] = []
    for part in parts:
        for index, (golden_id, where, fingerprint, is_strict) in enumerate(part.partial["goldens"]):
            if golden_id in position:
                raise MergeError(
                    f"{golden_id!r} is in two shards",
                    source=part.source,
                    field=f"partial.goldens[{index}]",
                )
            position[golden_id] = where
            fingerprints[golden_id] = fingerprint
            if is_strict:
                strict.append((where, golden_id))
    expected = parts[0].partial["suite_goldens"]
    if len(position) != expected or sorted(position.values()) != list(range(expected)):
        raise MergeError(
            f"the {len(parts)} shards hold {len(position)} goldens (tasks), but the suite has "
            f"{expected}: not every one was run"
        )
    return SuiteIndex(
        position,
        dict(sorted(fingerprints.items(), key=lambda item: position[item[0]])),
        [golden_id for _, golden_id in sorted(strict)],
    )


def shards_config(config: Config, settings: Mapping[str, Any]) -> Config:
    """``config`` with the gate settings the shards ran with: the merge decides as they did,
    whatever the merging machine's config says."""
    gate = {
        name: settings[name]
        for name in ("score_tolerance", "max_error_rate", "min_pass_rate", "min_score")
        if name in settings
    }
    return replace(
        config, min_pass_rate=settings["min_pass_rate"], gate=replace(config.gate, **gate)
    )
