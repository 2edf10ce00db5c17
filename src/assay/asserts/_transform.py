"""Output transforms: code that rewrites an output before asserts read it.

Written ``transform: {javascript: CODE}`` or ``transform: {python: CODE}`` on a golden, in a
goldens folder's ``_defaults.yaml``, or on one assert. CODE is inline code or a file reference,
as for the ``javascript`` and ``python`` ops (a python file's default function is
``get_transform``). It is called as ``(output, context)``; what it returns replaces the output
for what follows: a string is text again, anything else a JSON value (text ops read it as
compact JSON, as promptfoo's ``JSON.stringify``).

promptfoo's rules (its ``src/util/transform.ts``, ``src/evaluator.ts`` and
``src/assertions/index.ts``):

- one line of inline JavaScript is an expression (``return`` put before it, nothing trimmed),
  several lines a function body;
- a transform that throws, or returns ``null`` / ``undefined`` (``None``), has failed: the
  golden's result is an error naming the transform (``Transform failed (...)``), never a
  verdict on the model;
- order: the golden's transform (the test's ``options.transform``) first, then an assert's own
  for that assert only; a golden's own transform replaces its defaults' (``test.options`` is
  ``{...defaultTest.options, ...test.options}``), it does not run after it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from assay.validate import At

LANGUAGES: Final = ("javascript", "python")
# The evidence reason of a check whose own transform failed: the cascade makes the golden's
# result an error (assay.cascade._cascade).
TRANSFORM_FAILED: Final = "transform_failed"


@dataclass(frozen=True, slots=True)
class Transform:
    """One transform: its language (``javascript`` or ``python``) and its code or file."""

    language: str
    code: str

    @property
    def label(self) -> str:
        from assay.asserts._scripts import label

        return f"{self.language}: {label(self.code)}"

    def to_dict(self) -> dict[str, str]:
        return {self.language: self.code}


class TransformFailed(Exception):
    """A transform that gave no output: ``message`` names it and says why."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def shape_problem(raw: Any) -> tuple[str, str | None] | None:
    """Why ``raw`` is no transform mapping, and the key at fault (None: it is one)."""
    if not isinstance(raw, Mapping):
        return (
            f"a transform is a mapping {{javascript: CODE}} or {{python: CODE}}, not {_kind(raw)}",
            None,
        )
    keys = [str(k) for k in raw]
    unknown = [k for k in keys if k not in LANGUAGES]
    if unknown:
        return f"unknown transform key {unknown[0]!r} (use javascript or python)", unknown[0]
    if len(keys) != 1:
        return "a transform has exactly one key, javascript or python, not both", None
    code = raw[keys[0]]
    if not isinstance(code, str) or not code.strip():
        return f"the {keys[0]} transform must be code or a file:// reference (a string)", keys[0]
    return None


def _kind(value: Any) -> str:
    return "null" if value is None else f"a {type(value).__name__}"


def parse_transform(raw: Any, at: At, key: str = "transform") -> Transform:
    """The transform written at ``key`` (shape checked here; code when it is loaded)."""
    problem = shape_problem(raw)
    if problem is not None:
        message, inner = problem
        at.fail(message, key if inner is None else f"{key}.{inner}")
    language, code = next(iter(raw.items()))
    return Transform(str(language), code)


def transform_code_problem(transform: Transform, root: Path | None, *, files: bool) -> str | None:
    """Why the transform's code cannot run, found without an output: the engine missing,
    inline code that does not compile, and (``files``) a file that is not there."""
    from assay.asserts import _javascript, _python

    code = transform.code
    if transform.language == "javascript":
        missing = _javascript.engine_missing()
        if missing is not None:
            return missing
        if code.startswith(_javascript.FILE_PREFIX):
            return _javascript.file_problem(code, root) if files else None
        return _javascript.syntax_problem("transform", code, root)
    problem = _python.reference_problem(code)
    if problem is not None:
        return problem
    form = _python.code_form(code)
    if form == "inline":
        return _python.inline_problem(code)
    if files:
        named = code if form == "reference" else _python.file_reference(code, "get_transform")
        return _python.missing_file(named.strip(), root)
    return None


def apply_transform(
    transform: Transform, output: Any, context: dict[str, Any], root: Path | None
) -> Any:
    """What ``transform`` makes of ``output``; a TransformFailed naming it when it fails."""
    from assay.asserts._result import ArgumentProblem

    try:
        value = _run(transform, output, context, root)
    except ArgumentProblem as problem:
        raise TransformFailed(f"Transform failed ({transform.label}): {problem.reason}") from None
    if value is None:
        raise TransformFailed(f"Transform ({transform.label}) did not return a value")
    return value


def _run(transform: Transform, output: Any, context: dict[str, Any], root: Path | None) -> Any:
    from assay.asserts._result import ArgumentProblem

    if transform.language == "javascript":
        import json

        from assay.asserts._javascript import ScriptError, run_code

        try:
            described = run_code("transform", transform.code, output, context, root=root)
        except ScriptError as error:
            raise ArgumentProblem(error.message) from None
        kind = described["k"]
        if kind in ("boolean", "string"):
            return described["v"]
        if kind == "number":
            if described["v"] is None:
                raise ArgumentProblem(f"returned {described['s']}, which is not JSON")
            return described["v"]
        if kind == "object":
            return json.loads(described["j"])
        if kind in ("null", "undefined"):
            return None
        raise ArgumentProblem(f"returned a {kind}, which is not JSON")
    from assay.asserts._context import json_value_problem
    from assay.asserts._python import (
        DEFAULT_TIMEOUT_S,
        TRANSFORM_FUNCTION,
        call_bounded,
        code_form,
        resolve_function,
    )

    fn = resolve_function(transform.code, root, TRANSFORM_FUNCTION)
    name = transform.code.strip() if code_form(transform.code) == "reference" else transform.label
    value = call_bounded(fn, name, output, context, DEFAULT_TIMEOUT_S)
    if isinstance(value, tuple):
        value = list(value)
    if value is not None and (problem := json_value_problem(value)) is not None:
        raise ArgumentProblem(f"returned {type(value).__name__}: {problem}")
    if isinstance(value, float) and not math.isfinite(value):
        raise ArgumentProblem(f"returned {value!r}, which is not JSON")
    return value
