"""``assay merge``: the shards of one run back into the whole run, with the whole run's verdict.

Each shard's ``--json`` document carries a ``partial`` (see :mod:`assay.gate._partial`). Merging
checks that the documents are the N distinct shards of one suite run with one set of settings,
puts every result back in the whole suite's order, and ends the way an unsharded run ends
(:func:`assay.gate.conclude`): the same results, aggregates, regressions, exit code and baseline
bytes. Agent shards are merged by :func:`assay.agent.merge_run`, which uses this.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay.errors import MergeError
from assay.gate._partial import (
    ShardDocument,
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
    from assay.gate._run import GateRun, Mode


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
    from assay.gate._run import ErrorTally, GateRun, GateStep, conclude, stray_notes
    from assay.results import summarize_by_candidate

    check_shards(
        parts,
        (
            "kind",
            "suite",
            "suite_goldens",
            "suite_digest",
            "settings",
            "candidates",
            "live",
            "notes",
            "looks",
        ),
    )
    head = parts[0].partial
    if head.get("kind") != "gate":
        raise MergeError("is not a goldens gate shard", source=parts[0].source, field="kind")
    settings: dict[str, Any] = head["settings"]
    index = suite_index(parts)
    position, fingerprints = index.position, index.fingerprints
    candidates: list[str] = head["candidates"]
    ordered = ordered_results(parts, position, candidates)
    results = [result for _, result in ordered]
    summaries = summarize_by_candidate(results, candidates)
    strays: dict[str, tuple[int, list[str]]] = {}
    for part in parts:
        unknown = sorted(set(part.partial["strays"]) - set(candidates))
        if unknown:
            raise MergeError(
                f"names candidate {unknown[0]!r}, which the run does not have",
                source=part.source,
                field="partial.strays",
            )
    for candidate in candidates:
        found = [p.partial["strays"][candidate] for p in parts if candidate in p.partial["strays"]]
        if found:
            examples = sorted(e for _, shown in found for e in shown)[:3]
            strays[candidate] = (sum(n for n, _ in found), examples)
    mode: Mode = "write-baseline" if write_baseline else settings["mode"]
    if mode not in ("report", "check", "write-baseline"):
        raise MergeError(
            f"mode {mode!r} is not a gate mode", source=parts[0].source, field="settings.mode"
        )
    run = GateRun(
        results,
        summaries,
        head["suite_goldens"],
        mode,
        notes=[*head["notes"], *stray_notes(strays)],
        stats=_merged_stats([p.document.get("summary", {}).get("model_calls") for p in parts]),
    )
    saved = [p.partial.get("judge_saved") for p in parts]
    if any(isinstance(n, int) for n in saved):  # as the whole run: only when judge asserts ran
        run.judge_saved = sum(n for n in saved if isinstance(n, int))
    run.live = bool(head["live"])
    # The outputs the shards' documents show (a live run's answers; static outputs that did
    # not pass): the whole run's document shows the same.
    outputs: dict[str, dict[str, Any]] = {}
    for data, result in ordered:
        if "output" in data:
            outputs.setdefault(result.candidate, {})[result.id] = data["output"]
    run.outputs = outputs
    run.trials = {}
    first_look: dict[tuple[str, str], Trials] | None = None
    tally = ErrorTally()
    rank = {c: i for i, c in enumerate(candidates)}
    for part in parts:
        partial = part.partial
        mine = {golden_id for golden_id, *_ in partial["goldens"]}

        def known(pairs: Any, field: str, part: ShardDocument = part, mine: set[str] = mine) -> Any:
            # Evidence of a golden or candidate the shard does not hold would land nowhere.
            for index, (candidate, golden_id, *_) in enumerate(pairs):
                if candidate not in rank or golden_id not in mine:
                    raise MergeError(
                        "names a golden or candidate this shard does not hold",
                        source=part.source,
                        field=f"partial.{field}[{index}]",
                    )
            return pairs

        run.trials.update(trials_from_list(known(partial["trials"], "trials")))
        if partial.get("first_look") is not None:
            extra = trials_from_list(known(partial["first_look"], "first_look"))
            first_look = {**(first_look or {}), **extra}
        errors = partial["errors"]
        tally.total += errors["total"]
        tally.errors += errors["errors"]
        tally.pairs += errors["pairs"]
        samples = known(errors["samples"], "errors.samples")
        tally.samples.extend((c, g, i, tuple(n)) for c, g, i, n in samples)
    tally.samples.sort(key=lambda s: (rank[s[0]], position[s[1]], s[2]))
    run.trials = {
        key: run.trials[key]
        for key in sorted(run.trials, key=lambda k: (rank[k[0]], position[k[1]]))
    }
    document = None
    baseline_path = baseline
    if mode == "check":
        document, baseline_path = checked_baseline(parts[0], settings, config, baseline)
    step = GateStep(
        mode=mode,
        baseline=baseline_path or config.baseline,
        force=force,
        alpha=settings["alpha"],
        tiers=tuple(settings["tiers"]),
        suite=head["suite"],
        path_given=settings["path_given"],
        sharded=False,
        goldens=fingerprints,
        strict=index.strict,
    )
    conclude(
        run,
        step,
        shards_config(config, settings),
        document,
        tally,
        looks=int(head["looks"]),
        first_look=first_look,
    )
    return run


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
