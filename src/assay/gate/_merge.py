"""``assay merge``: the shards of one run back into the whole run, with the whole run's verdict.

Each shard's ``--json`` document carries a ``partial`` (see :mod:`assay.gate._partial`). Merging
checks that the documents are the N distinct shards of one suite run with one set of settings,
puts every result back in the whole suite's order, and ends the way an unsharded run ends
(:func:`assay.gate.conclude`): the same results, aggregates, regressions, exit code and baseline
bytes. Agent shards are merged by :func:`assay.agent.merge_run`, which uses this.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay.errors import MergeError
from assay.gate._partial import (
    ShardDocument,
    SuiteIndex,
    check_shards,
    checked_baseline,
    ordered_results,
    shards_config,
    suite_index,
    trials_from_list,
)

if TYPE_CHECKING:
    from assay.config import Config
    from assay.gate._regressions import Trials
    from assay.gate._run import GateRun
    from assay.gate._verdict import Evidence, Mode
    from assay.results import CandidateSummary, Result


@dataclass(frozen=True, slots=True)
class MergedParts:
    """What every merge reads from the shards, checked: they are the N shards of one run.

    Attributes:
        mode: the merged run's (the shards', or ``write-baseline`` when asked).
        head: the first shard's partial (the settings all shards agree on).
        index: each golden's (task's) place in the whole suite, its fingerprint.
        ordered: every shard's results, (the document's dict, the result), in suite order.
        baseline: for a check, the baseline the shards compared with, and its path.
    """

    mode: Mode
    head: Mapping[str, Any]
    settings: dict[str, Any]
    index: SuiteIndex
    ordered: list[tuple[dict[str, Any], Result]]
    baseline: tuple[dict[str, Any], Path] | None


def merged_parts(
    parts: Sequence[ShardDocument],
    config: Config,
    *,
    kind: str,
    same: Sequence[str],
    candidates: Sequence[str],
    write_baseline: bool,
    baseline: Path | None,
) -> MergedParts:
    """The shards of one run of ``kind``, checked and put back in suite order (the gate's and
    the agent job's merge both start here).

    Raises:
        MergeError: documents that are not the shards of one run, or a changed baseline.
    """
    from assay.gate._verdict import is_mode

    if not parts:
        raise MergeError("no shard documents to merge")
    mode = "write-baseline" if write_baseline else parts[0].partial.get("settings", {}).get("mode")
    if not is_mode(mode):
        raise MergeError(
            f"mode {mode!r} is not a gate mode", source=parts[0].source, field="settings.mode"
        )
    check_shards(parts, ("kind", "suite", "suite_goldens", "suite_digest", "settings", *same))
    head = parts[0].partial
    if head.get("kind") != kind:
        what = "a goldens gate" if kind == "gate" else "an agent run"
        raise MergeError(f"is not {what} shard", source=parts[0].source, field="kind")
    settings: dict[str, Any] = head["settings"]
    index = suite_index(parts)
    ordered = ordered_results(parts, index.position, candidates)
    found = checked_baseline(parts[0], settings, config, baseline) if mode == "check" else None
    return MergedParts(mode, head, settings, index, ordered, found)


def merge_gate(
    parts: Sequence[ShardDocument],
    config: Config,
    *,
    baseline: Path | None = None,
    write_baseline: bool = False,
    force: bool = False,
) -> GateRun:
    """The whole gate run the shards were cut from, with its verdict.

    ``baseline`` overrides where the checked baseline is read (default: where the shards read
    it, relative to the project root) or where ``write_baseline`` writes it (default: the
    config's). The gate settings are the shards' (recorded in each partial), not the config's.

    Raises:
        MergeError: documents that are not the shards of one run, or a baseline that is not
            the one the shards compared with.
        BaselineError: the baseline cannot be read or written.
    """
    from assay.gate._run import GateRun
    from assay.gate._verdict import GateStep, conclude, stray_notes
    from assay.results import summarize_by_candidate

    candidates: list[str] = parts[0].partial.get("candidates") or [] if parts else []
    merged = merged_parts(
        parts,
        config,
        kind="gate",
        same=("candidates", "live", "notes", "looks"),
        candidates=candidates,
        write_baseline=write_baseline,
        baseline=baseline,
    )
    results = [result for _, result in merged.ordered]
    summaries = summarize_by_candidate(results, candidates)
    evidence = _evidence(parts, merged, results, summaries, candidates)
    document, path = merged.baseline if merged.baseline is not None else (None, baseline)
    step = GateStep(
        mode=merged.mode,
        baseline=path or config.baseline,
        force=force,
        alpha=merged.settings["alpha"],
        tiers=tuple(merged.settings["tiers"]),
        suite=merged.head["suite"],
        sharded=False,
        goldens=merged.index.fingerprints,
        strict=merged.index.strict,
    )
    recorded = [p.partial.get("judge_saved") for p in parts]
    saved = [n for n in recorded if isinstance(n, int)]
    return GateRun(
        results,
        summaries,
        merged.head["suite_goldens"],
        conclude(evidence, step, shards_config(config, merged.settings), document),
        notes=[*merged.head["notes"], *stray_notes(_strays(parts, candidates))],
        stats=_merged_stats([p.document.get("summary", {}).get("model_calls") for p in parts]),
        outputs=_outputs(merged.ordered),
        trials=evidence.trials,
        failing=_failing(merged.ordered),
        live=bool(merged.head["live"]),
        judge_saved=sum(saved) if saved else None,  # as the whole run: when judge asserts ran
    )


def _strays(
    parts: Sequence[ShardDocument], candidates: Sequence[str]
) -> dict[str, tuple[int, list[str]]]:
    """The shards' stray outputs added up, per candidate: how many, the first three."""
    for part in parts:
        unknown = sorted(set(part.partial["strays"]) - set(candidates))
        if unknown:
            raise MergeError(
                f"names candidate {unknown[0]!r}, which the run does not have",
                source=part.source,
                field="partial.strays",
            )
    strays: dict[str, tuple[int, list[str]]] = {}
    for candidate in candidates:
        found = [p.partial["strays"][candidate] for p in parts if candidate in p.partial["strays"]]
        if found:
            examples = sorted(e for _, shown in found for e in shown)[:3]
            strays[candidate] = (sum(n for n, _ in found), examples)
    return strays


def _outputs(ordered: Sequence[tuple[dict[str, Any], Result]]) -> dict[str, dict[str, Any]]:
    """The outputs the shards' documents show (a live run's answers; static outputs that did
    not pass): the whole run's document shows the same."""
    outputs: dict[str, dict[str, Any]] = {}
    for data, result in ordered:
        if "output" in data:
            outputs.setdefault(result.candidate, {})[result.id] = data["output"]
    return outputs


def _failing(ordered: Sequence[tuple[dict[str, Any], Result]]) -> dict[Any, list[Any]]:
    """The failing answers of repeats the shards' documents show, as the whole run's shows them."""
    return {
        (result.candidate, result.id): [(f["output"], f["count"]) for f in data["failing_outputs"]]
        for data, result in ordered
        if data.get("failing_outputs")
    }


def _evidence(
    parts: Sequence[ShardDocument],
    merged: MergedParts,
    results: Sequence[Result],
    summaries: Sequence[CandidateSummary],
    candidates: Sequence[str],
) -> Evidence:
    """The shards' trials, first looks and errors, in the whole run's order."""
    from assay.gate._verdict import ErrorTally, Evidence

    trials: dict[tuple[str, str], Trials] = {}
    first_look: dict[tuple[str, str], Trials] | None = None
    tally = ErrorTally()
    rank = {c: i for i, c in enumerate(candidates)}
    position = merged.index.position
    for part in parts:
        partial = part.partial
        mine = {golden_id for golden_id, *_ in partial["goldens"]}
        trials.update(trials_from_list(_held(partial["trials"], "trials", part, rank, mine)))
        if partial.get("first_look") is not None:
            extra = trials_from_list(_held(partial["first_look"], "first_look", part, rank, mine))
            first_look = {**(first_look or {}), **extra}
        errors = partial["errors"]
        tally.total += errors["total"]
        tally.errors += errors["errors"]
        tally.pairs += errors["pairs"]
        samples = _held(errors["samples"], "errors.samples", part, rank, mine)
        tally.samples.extend((c, g, i, tuple(n)) for c, g, i, n in samples)
    tally.samples.sort(key=lambda s: (rank[s[0]], position[s[1]], s[2]))
    ordered = sorted(trials, key=lambda k: (rank[k[0]], position[k[1]]))
    in_order = {key: trials[key] for key in ordered}
    return Evidence(results, summaries, in_order, tally, int(merged.head["looks"]), first_look)


def _held(
    pairs: Any, field: str, part: ShardDocument, rank: Mapping[str, int], mine: set[str]
) -> Any:
    """``pairs`` (rows that start candidate, golden id), refused when one names a golden or
    candidate the shard does not hold: its evidence would land nowhere."""
    for index, (candidate, golden_id, *_) in enumerate(pairs):
        if candidate not in rank or golden_id not in mine:
            raise MergeError(
                "names a golden or candidate this shard does not hold",
                source=part.source,
                field=f"partial.{field}[{index}]",
            )
    return pairs


def _merged_stats(stats: Sequence[Any]) -> dict[str, Any]:
    """The shards' model-call counts added up (``repeats`` is one setting; the most repeats
    any golden got is the largest of the shards')."""
    out: dict[str, Any] = {}
    for one in stats:
        if not isinstance(one, dict):
            continue
        for name, value in one.items():
            if name == "repeats":
                out[name] = value
            elif name == "repeats_max":
                out[name] = max(out.get(name, 0), value)
            elif isinstance(value, dict):
                out[name] = _merged_stats([out.get(name, {}), value])
            else:
                out[name] = out.get(name, 0) + value
    return out
