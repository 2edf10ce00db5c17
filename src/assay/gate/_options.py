"""What the user asked a gate run for (flags already parsed): :class:`GateOptions`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from assay.gate._verdict import Mode

if TYPE_CHECKING:
    from assay.gate._selection import IdFilter
    from assay.gate._shards import Shard
    from assay.goldens import Tier


@dataclass(frozen=True, slots=True)
class GateOptions:
    """What the user asked for (flags already parsed)."""

    path: Path | None = None
    outputs: Path | None = None
    example: bool = False
    tiers: tuple[Tier, ...] = ()
    similarity: str | None = None
    baseline: Path | None = None
    mode: Mode = "report"
    force: bool = False
    no_cache: bool = False
    candidates: Path | None = None
    judge: bool = False
    progress: bool = False
    alpha: float | None = None
    max_repeats: int | None = None
    shard: Shard | None = None
    # -k / --filter: only the goldens whose id matches (see assay.gate._selection).
    filter: IdFilter | None = None
    # --packaged: assay's packaged goldens join the project's (see assay.goldens.load_suite).
    packaged: bool = False
    # A live run's overrides of its candidates file's settings.
    repeats: int | None = None
    max_concurrency: int | None = None
    # --candidate: only these candidates of the candidates file (none given: all of them).
    candidate_ids: tuple[str, ...] = ()
