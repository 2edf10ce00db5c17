"""assay: a fast, strict evaluation harness and CI regression gate for LLM prompts and agents."""

from ._version import __version__
from .asserts import AssertSpec, CheckContext, CheckResult, parse_assert, run_assert
from .baseline import Regression
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

__all__ = [
    "AssayError",
    "AssertSpec",
    "BaselineError",
    "CandidateSummary",
    "CheckContext",
    "CheckResult",
    "Config",
    "ConfigError",
    "GateOptions",
    "GateRun",
    "Golden",
    "GoldenError",
    "OutputsError",
    "Regression",
    "Result",
    "RunStoreError",
    "SelfTestReport",
    "TelemetryError",
    "ValidationError",
    "__version__",
    "evaluate",
    "iter_goldens",
    "load_config",
    "load_outputs",
    "load_suite",
    "parse_assert",
    "run_assert",
    "run_gate",
    "self_test",
]
