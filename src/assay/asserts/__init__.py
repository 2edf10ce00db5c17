"""Tier 1 asserts: one module per family, one registry table, negation applied once."""

from assay.asserts._context import DEFAULT_CONTEXT, CheckContext, OutputView, as_text, json_equal
from assay.asserts._registry import KNOWN_OPS, OPS, run_assert
from assay.asserts._result import CheckResult
from assay.asserts._spec import AssertSpec, parse_assert

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
