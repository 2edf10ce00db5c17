"""The goldens gate: load the suite, score it, compare with the baseline, conclude.

The stage's modules, in the order a run goes through them:

- :mod:`~assay.gate._load`: the suite loaded (on every core for a large one) and what the
  workers prescored;
- :mod:`~assay.gate._run`: :func:`run_gate`, options in, one :class:`GateRun` out;
- :mod:`~assay.gate._baseline`, :mod:`~assay.gate._regressions`, :mod:`~assay.gate._stats`: the
  committed baseline and the verdict on the evidence (exact rules for deterministic outcomes,
  statistics for random ones);
- :mod:`~assay.gate._selection`, :mod:`~assay.gate._shards`: ``-k`` and ``--shard I/N``;
- :mod:`~assay.gate._partial`, :mod:`~assay.gate._merge`: a shard's partial and merging shards;
- :mod:`~assay.gate._record`, :mod:`~assay.gate._store`: the saved run record and the runs folder.

Names resolve on first use (PEP 562), so importing the package costs nothing until a name is
used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from assay._lazy import lazy_exports

if TYPE_CHECKING:
    from assay.gate._baseline import fingerprint
    from assay.gate._merge import merge_gate
    from assay.gate._options import GateOptions
    from assay.gate._partial import ShardDocument, read_shards
    from assay.gate._regressions import Diff, Regression, Rules, Trials
    from assay.gate._run import GateRun, example_paths, run_gate
    from assay.gate._selection import IdFilter, id_filter
    from assay.gate._shards import Shard, parse_shard
    from assay.gate._store import list_runs, prune_runs, runs_dir, save_run
    from assay.gate._verdict import Evidence, GateStep, Verdict, conclude

_EXPORTS: dict[str, str] = {
    "Diff": "_regressions",
    "Evidence": "_verdict",
    "GateOptions": "_options",
    "GateStep": "_verdict",
    "GateRun": "_run",
    "IdFilter": "_selection",
    "Regression": "_regressions",
    "Rules": "_regressions",
    "Shard": "_shards",
    "ShardDocument": "_partial",
    "Trials": "_regressions",
    "Verdict": "_verdict",
    "conclude": "_verdict",
    "example_paths": "_run",
    "fingerprint": "_baseline",
    "id_filter": "_selection",
    "list_runs": "_store",
    "merge_gate": "_merge",
    "parse_shard": "_shards",
    "prune_runs": "_store",
    "read_shards": "_partial",
    "run_gate": "_run",
    "runs_dir": "_store",
    "save_run": "_store",
}

__all__ = [
    "Diff",
    "Evidence",
    "GateOptions",
    "GateRun",
    "GateStep",
    "IdFilter",
    "Regression",
    "Rules",
    "Shard",
    "ShardDocument",
    "Trials",
    "Verdict",
    "conclude",
    "example_paths",
    "fingerprint",
    "id_filter",
    "list_runs",
    "merge_gate",
    "parse_shard",
    "prune_runs",
    "read_shards",
    "run_gate",
    "runs_dir",
    "save_run",
]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)
