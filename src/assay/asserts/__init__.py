"""Tier 1 asserts: one module per family, one registry table, negation applied once.

The registry is open: :func:`register_op` adds a namespaced op in-process, and installed
packages add ops through the ``assay.ops`` entry point group (see :mod:`assay.plugins`).
"""

from assay.asserts._context import DEFAULT_CONTEXT, CheckContext, OutputView, as_text, json_equal
from assay.asserts._registry import (
    KNOWN_OPS,
    OPS,
    PluginOp,
    find_op,
    known_ops,
    register_op,
    run_assert,
)
from assay.asserts._result import CheckResult
from assay.asserts._spec import AssertSpec, parse_assert
from assay.asserts._stop import TRUNCATED

__all__ = [
    "DEFAULT_CONTEXT",
    "KNOWN_OPS",
    "OPS",
    "TRUNCATED",
    "AssertSpec",
    "CheckContext",
    "CheckResult",
    "OutputView",
    "PluginOp",
    "as_text",
    "find_op",
    "json_equal",
    "known_ops",
    "parse_assert",
    "register_op",
    "run_assert",
]
