"""Tier 1 asserts: one module per family, one registry table, negation applied once.

The registry is open: :func:`register_op` adds a namespaced op in-process, and installed
packages add ops through the ``assay.ops`` entry point group (see :mod:`assay.plugins`).
"""

from assay.asserts._context import (
    DEFAULT_CONTEXT,
    CheckContext,
    OutputView,
    as_text,
    json_equal,
    strict_json_loads,
)
from assay.asserts._groups import aggregate, check_score
from assay.asserts._registry import (
    KNOWN_OPS,
    OPS,
    PluginOp,
    find_op,
    known_ops,
    register_op,
    run_assert,
    runs_project_code,
)
from assay.asserts._result import CheckResult
from assay.asserts._schema import offline_registry
from assay.asserts._similarity import (
    SimilarityFn,
    get_backend,
    is_known_backend,
    known_backends_text,
)
from assay.asserts._spec import (
    JUDGE_OP,
    TEXT_OPS,
    AssertSpec,
    find_date,
    parse_assert,
    parse_asserts,
    typed_text_argument,
)
from assay.asserts._stop import TRUNCATED

__all__ = [
    "DEFAULT_CONTEXT",
    "JUDGE_OP",
    "KNOWN_OPS",
    "OPS",
    "TEXT_OPS",
    "TRUNCATED",
    "AssertSpec",
    "CheckContext",
    "CheckResult",
    "OutputView",
    "PluginOp",
    "SimilarityFn",
    "aggregate",
    "as_text",
    "check_score",
    "find_date",
    "find_op",
    "get_backend",
    "is_known_backend",
    "json_equal",
    "known_backends_text",
    "known_ops",
    "offline_registry",
    "parse_assert",
    "parse_asserts",
    "register_op",
    "run_assert",
    "runs_project_code",
    "strict_json_loads",
    "typed_text_argument",
]
