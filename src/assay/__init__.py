"""assay: a fast, strict evaluation harness and CI regression gate for LLM prompts and agents.

The public API is re-exported here. Names are resolved on first use (PEP 562) so that
``import assay`` and the CLI's start-up do not pay for subsystems a run does not touch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from assay._lazy import lazy_exports
from assay._version import __version__

if TYPE_CHECKING:
    from assay.agent import (
        AgentOptions,
        AgentOutcome,
        MergedRun,
        Sandbox,
        execute_agent,
        merge_run,
        run_agent,
    )
    from assay.asserts import (
        AssertSpec,
        CheckContext,
        CheckResult,
        OutputView,
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

_EXPORTS: dict[str, str] = {
    "AbortController": "comparison",
    "AbortError": "comparison",
    "AbortSignal": "comparison",
    "AgentOptions": "agent",
    "AgentOutcome": "agent",
    "AgentSettings": "config",
    "AssayError": "errors",
    "AssertSpec": "asserts",
    "BaselineError": "errors",
    "CandidateSummary": "results",
    "CheckContext": "asserts",
    "CheckResult": "asserts",
    "Config": "config",
    "ConfigError": "errors",
    "Defaults": "goldens",
    "Diff": "gate",
    "EvaluationItem": "comparison",
    "GateOptions": "gate",
    "GateRun": "gate",
    "GateSettings": "config",
    "Golden": "goldens",
    "GoldenError": "errors",
    "IdFilter": "gate",
    "Inconsistency": "goldens",
    "JudgeSettings": "config",
    "MergeError": "errors",
    "MergedRun": "agent",
    "OutputView": "asserts",
    "OutputsError": "errors",
    "PluginError": "errors",
    "PromptCandidate": "comparison",
    "ProviderConfig": "models",
    "Regression": "gate",
    "ReportContent": "results",
    "Result": "results",
    "Rules": "gate",
    "RunStoreError": "errors",
    "Sandbox": "agent",
    "SelfTestReport": "goldens",
    "Shard": "gate",
    "ShardDocument": "gate",
    "TelemetryError": "errors",
    "Trials": "gate",
    "ValidationError": "errors",
    "Verdict": "gate",
    "evaluate": "cascade",
    "evaluate_deterministic_scorer": "comparison",
    "evaluate_prompt_candidates": "comparison",
    "evaluate_prompt_candidates_sync": "comparison",
    "execute_agent": "agent",
    "iter_goldens": "goldens",
    "load_config": "config",
    "load_outputs": "models",
    "load_suite": "goldens",
    "merge_run": "agent",
    "parse_assert": "asserts",
    "parse_shard": "gate",
    "read_shards": "gate",
    "register_op": "asserts",
    "run_agent": "agent",
    "run_assert": "asserts",
    "run_gate": "gate",
    "self_test": "goldens",
}

__all__ = sorted([*_EXPORTS, "__version__"])


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)
