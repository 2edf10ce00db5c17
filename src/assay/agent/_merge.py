"""Agent run shards merged back into the whole run (the partials: :mod:`assay.agent._partial`).

The composite score is recomputed over every task in the whole suite's order (the same
floating-point sums as the unsharded run), then scored, saved and gated as that run would be.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay.agent._partial import COMPOSITE_INPUTS
from assay.agent._scoring import scored_run
from assay.agent._telemetry import Telemetry
from assay.errors import MergeError
from assay.results import ReportContent

if TYPE_CHECKING:
    from assay.agent._benchmark import AgentOutcome
    from assay.config import Config
    from assay.gate import ShardDocument


def merge_agent(
    parts: Sequence[ShardDocument],
    config: Config,
    *,
    baseline: Path | None = None,
    write_baseline: bool = False,
    force: bool = False,
) -> AgentOutcome:
    """The whole agent run the shards were cut from: scored, saved and gated as the unsharded
    run would be, with the shards' settings.

    Raises:
        MergeError: documents that are not the shards of one agent run, or a changed baseline.
        BaselineError: the baseline cannot be read or written.
    """
    from assay.agent._benchmark import AgentOutcome
    from assay.agent._gate import agent_gate
    from assay.agent._record import run_document
    from assay.gate import merged_parts, save_run, shards_config

    merged = merged_parts(
        parts,
        config,
        kind="agent",
        same=(),
        candidates=["agent"],
        write_baseline=write_baseline,
        baseline=baseline,
    )
    tasks = [result for _, result in merged.ordered]
    records = _records(parts, merged.index.position)
    settings = merged.settings
    run = scored_run(tasks, records, settings["tiers"], settings["bench"])
    # Each shard read its own telemetry (an --agent shard writes a folder of its own).
    sources = list(dict.fromkeys(str(p.partial["selection"].get("telemetry")) for p in parts))
    document = run_document(run, {**merged.head["selection"], "telemetry": ", ".join(sources)})
    run_id = save_run(config.root, document)
    document = {"run_id": run_id, **document}
    verdict = agent_gate(
        run,
        merged.index.fingerprints,
        mode=merged.mode,
        baseline=merged.baseline[1] if merged.baseline is not None else baseline,
        suite=merged.head["suite"],
        force=force,
        config=shards_config(config, settings),
        alpha=settings["alpha"],
    )
    return AgentOutcome(document, run_id, None, None, verdict)


def _records(parts: Sequence[ShardDocument], position: Mapping[str, int]) -> list[Telemetry]:
    """Every shard's telemetry records, in the whole suite's order (the composite's sums are
    then the unsharded run's, to the last bit)."""
    records: list[tuple[int, Telemetry]] = []
    for part in parts:
        held = {task_id for task_id, *_ in part.partial["goldens"]}
        for row_number, (task_id, *inputs) in enumerate(part.partial["records"]):
            if task_id not in held:
                raise MergeError(
                    "names a task this shard does not hold",
                    source=part.source,
                    field=f"partial.records[{row_number}]",
                )
            values = dict(zip(COMPOSITE_INPUTS, inputs, strict=True))
            records.append((position[task_id], Telemetry(task_id, part.source, **values)))
    return [record for _, record in sorted(records, key=lambda item: item[0])]


@dataclass(frozen=True, slots=True)
class MergedRun:
    """A merged run as the command shows it: its document, the content views may show, the
    reasons the gate could not decide, and the exit code."""

    document: dict[str, Any]
    content: ReportContent
    exit_code: int
    undecided: list[str]


def merge_run(
    parts: Sequence[ShardDocument],
    config: Config,
    *,
    baseline: Path | None = None,
    write_baseline: bool = False,
    force: bool = False,
) -> MergedRun:
    """Merge goldens gate shards or agent run shards (whichever the documents are).

    Raises:
        MergeError: see :func:`merge_gate`.
    """
    kinds = {part.partial.get("kind") for part in parts}
    if kinds == {"gate"}:
        from assay.gate import merge_gate

        run = merge_gate(
            parts, config, baseline=baseline, write_baseline=write_baseline, force=force
        )
        return MergedRun(run.to_dict(), run.content(), run.exit_code, list(run.undecided))
    if kinds == {"agent"}:
        outcome = merge_agent(
            parts, config, baseline=baseline, write_baseline=write_baseline, force=force
        )
        undecided = list(outcome.verdict.undecided)
        return MergedRun(outcome.view(), ReportContent(), outcome.exit_code, undecided)
    odd = next(p for p in parts if p.partial.get("kind") != parts[0].partial.get("kind"))
    raise MergeError(
        f"is a {odd.partial.get('kind')} shard, {parts[0].source} a "
        f"{parts[0].partial.get('kind')} one: not shards of the same run",
        source=odd.source,
        field="partial.kind",
    )
