"""Tier 1 asserts: one module per family, one registry table, negation applied once."""

from ._context import DEFAULT_CONTEXT, CheckContext, OutputView, as_text, json_equal
from ._registry import KNOWN_OPS, OPS, run_assert
from ._result import CheckResult
from ._spec import AssertSpec, parse_assert

__all__ = [
    "DEFAULT_CONTEXT",
    "KNOWN_OPS",
    "OPS",
    "AssertSpec",
    "CheckContext",
    "CheckResult",
    "OutputView",
    "as_text",
    "json_equal",
    "parse_assert",
    "run_assert",
]
