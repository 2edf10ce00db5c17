"""assay: a fast, strict evaluation harness and CI regression gate for LLM prompts and agents.

The public API is re-exported here. Names are resolved on first use (PEP 562) so that
``import assay`` and the CLI's start-up do not pay for subsystems a run does not touch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from assay._lazy import exports_by_module, lazy_exports
from assay._version import __version__

if TYPE_CHECKING:
    from assay.agent import (
        AgentOptions,
        AgentOutcome,
        MergedRun,
        Sandbox,
        TaskRun,
        TaskWatcher,
        execute_agent,
        merge_run,
        run_agent,
    )
    from assay.asserts import (
        AssertSpec,
        CheckContext,
        CheckResult,
        OutputView,
        Transform,
        parse_assert,
        register_op,
        run_assert,
    )
    from assay.cascade import evaluate
    from assay.comparison import (
        AbortController,
        AbortError,
        AbortSignal,
        EvaluationItem,
        PromptCandidate,
        evaluate_deterministic_scorer,
        evaluate_prompt_candidates,
        evaluate_prompt_candidates_sync,
    )
    from assay.config import AgentSettings, Config, GateSettings, JudgeSettings, load_config
    from assay.errors import (
        AssayError,
        BaselineError,
        ConfigError,
        GoldenError,
        MergeError,
        OutputsError,
        PluginError,
        RunStoreError,
        TelemetryError,
        ValidationError,
    )
    from assay.gate import (
        Diff,
        GateOptions,
        GateRun,
        IdFilter,
        Regression,
        Rules,
        Shard,
        ShardDocument,
        Trials,
        Verdict,
        parse_shard,
        read_shards,
        run_gate,
    )
    from assay.goldens import (
        Defaults,
        Golden,
        Inconsistency,
        SelfTestReport,
        iter_goldens,
        load_suite,
        self_test,
    )
    from assay.models import ProviderConfig, load_outputs
    from assay.results import CandidateSummary, ReportContent, Result

_EXPORTS: Final = exports_by_module(
    {
        "agent": (
            "AgentOptions AgentOutcome MergedRun Sandbox TaskRun TaskWatcher execute_agent "
            "merge_run run_agent"
        ),
        "asserts": (
            "AssertSpec CheckContext CheckResult OutputView Transform parse_assert register_op "
            "run_assert"
        ),
        "cascade": "evaluate",
        "comparison": (
            "AbortController AbortError AbortSignal EvaluationItem PromptCandidate "
            "evaluate_deterministic_scorer evaluate_prompt_candidates "
            "evaluate_prompt_candidates_sync"
        ),
        "config": "AgentSettings Config GateSettings JudgeSettings load_config",
        "errors": (
            "AssayError BaselineError ConfigError GoldenError MergeError OutputsError "
            "PluginError RunStoreError TelemetryError ValidationError"
        ),
        "gate": (
            "Diff GateOptions GateRun IdFilter Regression Rules Shard ShardDocument Trials "
            "Verdict parse_shard read_shards run_gate"
        ),
        "goldens": (
            "Defaults Golden Inconsistency SelfTestReport iter_goldens load_suite self_test"
        ),
        "models": "ProviderConfig load_outputs",
        "results": "CandidateSummary ReportContent Result",
    }
)

__all__ = sorted([*_EXPORTS, "__version__"])


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)
