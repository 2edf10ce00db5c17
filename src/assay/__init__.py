"""assay: a fast, strict evaluation harness and CI regression gate for LLM prompts and agents.

The public API is re-exported here. Names are resolved on first use (PEP 562) so that
``import assay`` and the CLI's start-up do not pay for subsystems a run does not touch.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from ._version import __version__

if TYPE_CHECKING:
    from .asserts import AssertSpec, CheckContext, CheckResult, parse_assert, run_assert
    from .baseline import Regression
    from .candidates import (
        AbortController,
        AbortError,
        AbortSignal,
        CandidateScore,
        EvaluationItem,
        ItemScore,
        PromptCandidate,
        evaluate_deterministic_scorer,
        evaluate_prompt_candidates,
        evaluate_prompt_candidates_sync,
    )
    from .cascade import evaluate
    from .config import Config, load_config
    from .errors import (
        AssayError,
        BaselineError,
        ConfigError,
        GoldenError,
        OutputsError,
        RunStoreError,
        TelemetryError,
        ValidationError,
    )
    from .gate import GateOptions, GateRun, run_gate
    from .goldens import Golden, iter_goldens, load_suite
    from .outputs import load_outputs
    from .results import CandidateSummary, Result
    from .selftest import SelfTestReport, self_test

_EXPORTS: dict[str, str] = {
    "AbortController": "candidates",
    "AbortError": "candidates",
    "AbortSignal": "candidates",
    "AssayError": "errors",
    "AssertSpec": "asserts",
    "BaselineError": "errors",
    "CandidateScore": "candidates",
    "CandidateSummary": "results",
    "CheckContext": "asserts",
    "CheckResult": "asserts",
    "Config": "config",
    "ConfigError": "errors",
    "EvaluationItem": "candidates",
    "GateOptions": "gate",
    "GateRun": "gate",
    "Golden": "goldens",
    "GoldenError": "errors",
    "ItemScore": "candidates",
    "OutputsError": "errors",
    "PromptCandidate": "candidates",
    "Regression": "baseline",
    "Result": "results",
    "RunStoreError": "errors",
    "SelfTestReport": "selftest",
    "TelemetryError": "errors",
    "ValidationError": "errors",
    "evaluate": "cascade",
    "evaluate_deterministic_scorer": "candidates",
    "evaluate_prompt_candidates": "candidates",
    "evaluate_prompt_candidates_sync": "candidates",
    "iter_goldens": "goldens",
    "load_config": "config",
    "load_outputs": "outputs",
    "load_suite": "goldens",
    "parse_assert": "asserts",
    "run_assert": "asserts",
    "run_gate": "gate",
    "self_test": "selftest",
}

__all__ = sorted([*_EXPORTS, "__version__"])


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'assay' has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
