"""The partial an agent run with ``--shard`` carries (see :mod:`assay.agent._merge`).

The composite score is a formula over every selected task (sums of cost and duration, crashes,
orphans, judge verdicts), so the partial keeps each task's inputs to it: a merge recomputes the
formula over the tasks in the whole suite's order, with the unsharded run's sums to the last bit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from assay._version import __version__
from assay.agent._scoring import AgentRun
from assay.agent._telemetry import Telemetry
from assay.gate import PARTIAL_VERSION, file_digest, suite_digest

if TYPE_CHECKING:
    from assay.config import Config
    from assay.goldens import Golden

# A task's telemetry the composite reads: each row of a partial's ``records`` is the task id,
# then these fields' values.
COMPOSITE_INPUTS: Final = ("cost_usd", "duration_s", "crashes", "orphans", "tests_failed", "judge")


def agent_partial(
    run: AgentRun,
    every: Sequence[Golden],
    telemetry: Mapping[str, Telemetry],
    *,
    shard: str,
    suite: str,
    mode: str,
    baseline: Path,
    alpha: float | None,
    config: Config,
    selection: Mapping[str, Any],
) -> dict[str, Any]:
    """The partial of one shard of an agent run (``every``: the whole suite, every tier)."""
    from assay.gate import FingerprintMemo, fingerprint

    tiers = set(run.tiers)
    suite_ids = [t.id for t in every if t.tier in tiers]
    position = {task_id: i for i, task_id in enumerate(suite_ids)}
    by_id = {t.id: t for t in every}
    memo: FingerprintMemo = {}
    records = [
        [result.id, *(getattr(telemetry[result.id], name) for name in COMPOSITE_INPUTS)]
        for result in run.tasks
        if result.id in telemetry and result.status != "error"  # what the composite read
    ]
    settings = {
        "assay_version": __version__,
        "mode": mode,
        "tiers": list(run.tiers),
        "alpha": config.gate.alpha if alpha is None else alpha,
        "score_tolerance": config.gate.score_tolerance,
        "min_pass_rate": config.min_pass_rate,
        "min_score": config.gate.min_score,
        "bench": dict(config.bench),
        "config": None if config.source is None else file_digest(Path(config.source)),
        "baseline": None
        if mode != "check"
        else {"path": str(baseline), "sha256": file_digest(baseline)},
    }
    return {
        "version": PARTIAL_VERSION,
        "kind": "agent",
        "shard": shard,
        "suite": suite,
        "suite_goldens": len(suite_ids),
        "suite_digest": suite_digest(suite_ids),
        "settings": settings,
        "selection": {k: v for k, v in selection.items() if k != "shard"},
        "goldens": [
            [r.id, position[r.id], fingerprint(by_id[r.id], memo), False] for r in run.tasks
        ],
        "records": records,
    }
