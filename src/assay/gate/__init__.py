"""The goldens gate: load the suite, score it, compare with the baseline, conclude.

Names resolve on first use (PEP 562), so importing the package costs nothing until a name is
used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from assay._lazy import exports_by_module, lazy_exports

if TYPE_CHECKING:
    from assay.gate._baseline import (
        BASELINE,
        FingerprintMemo,
        check_kind,
        fingerprint,
        load_baseline,
    )
    from assay.gate._merge import MergedParts, merge_gate, merged_parts
    from assay.gate._options import GateOptions
    from assay.gate._partial import (
        PARTIAL_VERSION,
        ShardDocument,
        file_digest,
        read_shards,
        shards_config,
        suite_digest,
    )
    from assay.gate._record import expand_rows, gate_record, git_state
    from assay.gate._regressions import Diff, Regression, Rules, Trials
    from assay.gate._run import GateRun, example_paths, load_selected, run_gate
    from assay.gate._selection import IdFilter, id_filter
    from assay.gate._shards import Shard, parse_shard
    from assay.gate._store import (
        RUN_RECORD,
        list_runs,
        prune_runs,
        run_order,
        runs_dir,
        save_run,
    )
    from assay.gate._verdict import ErrorTally, Evidence, GateStep, Verdict, conclude, is_mode

_EXPORTS: Final = exports_by_module(
    {
        "_baseline": "BASELINE FingerprintMemo check_kind fingerprint load_baseline",
        "_merge": "MergedParts merge_gate merged_parts",
        "_options": "GateOptions",
        "_partial": (
            "PARTIAL_VERSION ShardDocument file_digest read_shards shards_config suite_digest"
        ),
        "_record": "expand_rows gate_record git_state",
        "_regressions": "Diff Regression Rules Trials",
        "_run": "GateRun example_paths load_selected run_gate",
        "_selection": "IdFilter id_filter",
        "_shards": "Shard parse_shard",
        "_store": "RUN_RECORD list_runs prune_runs run_order runs_dir save_run",
        "_verdict": "ErrorTally Evidence GateStep Verdict conclude is_mode",
    }
)

__all__ = [
    "BASELINE",
    "PARTIAL_VERSION",
    "RUN_RECORD",
    "Diff",
    "ErrorTally",
    "Evidence",
    "FingerprintMemo",
    "GateOptions",
    "GateRun",
    "GateStep",
    "IdFilter",
    "MergedParts",
    "Regression",
    "Rules",
    "Shard",
    "ShardDocument",
    "Trials",
    "Verdict",
    "check_kind",
    "conclude",
    "example_paths",
    "expand_rows",
    "file_digest",
    "fingerprint",
    "gate_record",
    "git_state",
    "id_filter",
    "is_mode",
    "list_runs",
    "load_baseline",
    "load_selected",
    "merge_gate",
    "merged_parts",
    "parse_shard",
    "prune_runs",
    "read_shards",
    "run_gate",
    "run_order",
    "runs_dir",
    "save_run",
    "shards_config",
    "suite_digest",
]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)
