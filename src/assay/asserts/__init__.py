"""Tier 1 asserts: one module per family, one registry table, negation applied once.

The registry is open: :func:`register_op` adds a namespaced op in-process, and installed
packages add ops through the ``assay.ops`` entry point group (see :mod:`assay.plugins`).
"""

from assay.asserts._check import check_asserts, has_code_files, python_file_problems
from assay.asserts._context import (
    DEFAULT_CONTEXT,
    CheckContext,
    OutputView,
    as_text,
    json_equal,
    strict_json_loads,
)
from assay.asserts._groups import aggregate, check_score
from assay.asserts._python import function_context
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
    YAML11_BOOLEANS,
    AssertSpec,
    Renderer,
    find_date,
    parse_assert,
    parse_asserts,
    quote_it,
    render_spec,
    typed_text_argument,
    yaml11_word_message,
    yaml_typed,
)
from assay.asserts._stop import TRUNCATED
from assay.asserts._transform import (
    TRANSFORM_FAILED,
    Transform,
    TransformFailed,
    apply_transform,
    parse_transform,
    transform_code_problem,
)

__all__ = [
    "DEFAULT_CONTEXT",
    "JUDGE_OP",
    "KNOWN_OPS",
    "OPS",
    "TEXT_OPS",
    "TRANSFORM_FAILED",
    "TRUNCATED",
    "YAML11_BOOLEANS",
    "AssertSpec",
    "CheckContext",
    "CheckResult",
    "OutputView",
    "PluginOp",
    "Renderer",
    "SimilarityFn",
    "Transform",
    "TransformFailed",
    "aggregate",
    "apply_transform",
    "as_text",
    "check_asserts",
    "check_score",
    "find_date",
    "find_op",
    "function_context",
    "get_backend",
    "has_code_files",
    "is_known_backend",
    "json_equal",
    "known_backends_text",
    "known_ops",
    "offline_registry",
    "parse_assert",
    "parse_asserts",
    "parse_transform",
    "python_file_problems",
    "quote_it",
    "register_op",
    "render_spec",
    "run_assert",
    "runs_project_code",
    "strict_json_loads",
    "transform_code_problem",
    "typed_text_argument",
    "yaml11_word_message",
    "yaml_typed",
]
