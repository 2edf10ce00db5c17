"""What a golden's asserts must be when it is loaded: what needs no output to be found wrong.

An unknown op, an unknown argument, a regex that does not compile or a ``python`` assert that
names no function fails every output alike. Found only when a check runs, such a golden fails
with no expected answer to show it (``--self-test`` skips it), and once a baseline records it as
failing it can never regress. So a golden's asserts are checked when it is loaded, each problem
an error naming the file, line and field. What needs the project (a ``python`` assert's file,
found from the project root) is :func:`python_file_problems`'s, for whoever knows the root.

Namespaced ops (``pkg/name``) are left to the run: they come from plugins and ``register_op``,
which may be registered after the goldens are loaded.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Final

from assay.asserts._python import code_form, inline_problem, missing_file, reference_problem
from assay.asserts._registry import _BUILTIN, _IGNORED_ARGS
from assay.asserts._result import ArgumentProblem
from assay.asserts._spec import GROUP_OPS, JUDGE_OP, NOT_PREFIX, AssertSpec
from assay.asserts._text import compile_regex
from assay.plugins import is_plugin_name
from assay.validate import At, near_miss

# The ops a golden may name without a namespace: the built-in ones, the groups and judge.
_UNNAMESPACED: Final = frozenset([*_BUILTIN, *GROUP_OPS, JUDGE_OP])
# The names a typo is compared with (a negated op is compared with the negated names).
_NAMES: Final = tuple(sorted(_UNNAMESPACED))


def check_asserts(specs: Sequence[AssertSpec], at: At, start: int = 0) -> None:
    """Fail on the first of ``specs`` with a problem (see the module), at ``asserts[i]`` (i
    counted from ``start``: where the first of ``specs`` is in the golden's list). A spec
    that passed once is not checked again: string asserts are shared by many goldens."""
    for index, spec in enumerate(specs, start):
        if not spec.checked:
            _check(spec, at.sub("asserts").sub(index))
            spec.checked = True


def _check(spec: AssertSpec, at: At) -> None:
    if spec.children is not None:
        inner = at.sub("asserts")
        for index, child in enumerate(spec.children):
            _check(child, inner.sub(index))
        return
    if spec.op == JUDGE_OP or is_plugin_name(spec.op):
        return  # a judge's arguments are checked when it is parsed; a plugin's at the run
    entry = _BUILTIN.get(spec.op)
    if entry is None:
        message = f"unknown op {spec.full_op!r}"
        meant = near_miss(spec.op, _NAMES, cutoff=0.75)
        if meant is not None:
            shown = f"{NOT_PREFIX}{meant}" if spec.negate else meant
            message += f": did you mean {shown!r}?"
        at.fail(message)
    accepted = entry[1]
    for name in spec.args:
        if name not in accepted and name != "path" and name not in _IGNORED_ARGS:
            message = f"unknown argument {name!r} for {spec.op}"
            meant = near_miss(name, [*accepted, "path"], cutoff=0.75)
            at.fail(message if meant is None else f"{message}: did you mean {meant!r}?", name)
    if spec.op == "regex":
        _check_regex(spec, at)
    elif spec.op == "python":
        value = spec.args.get("value")
        problem = reference_problem(value)
        if problem is None and isinstance(value, str) and code_form(value) == "inline":
            problem = inline_problem(value)
        if problem is not None:
            at.fail(problem, "value")
    elif spec.op == "javascript":
        _check_javascript(spec.args.get("value"), at)
    elif spec.op == "equals" and not isinstance(spec.args.get("exact", False), bool):
        at.fail("exact must be true or false", "exact")
    if "transform" in spec.args:
        _check_transform(spec.args["transform"], at)


def _check_javascript(code: object, at: At) -> None:
    """The engine is installed and inline code compiles (a file is checked with the project
    root, by :func:`python_file_problems`)."""
    from assay.asserts import _javascript

    if not isinstance(code, str) or not code.strip():
        at.fail("a javascript assert's value is code or a file://path.js reference", "value")
    missing = _javascript.engine_missing()
    if missing is not None:
        at.fail(missing, "value")
    if not code.startswith(_javascript.FILE_PREFIX):
        problem = _javascript.syntax_problem("assert", code, None)
        if problem is not None:
            at.fail(problem, "value")


def _check_transform(raw: object, at: At) -> None:
    """An assert's own transform: its shape, the engine, inline code that compiles."""
    from assay.asserts._transform import parse_transform, transform_code_problem

    transform = parse_transform(raw, at)
    problem = transform_code_problem(transform, None, files=False)
    if problem is not None:
        at.fail(problem, f"transform.{transform.language}")


def _check_regex(spec: AssertSpec, at: At) -> None:
    """The regex compiles, with its flags (compiled once: the check reuses it)."""
    name = "pattern" if "pattern" in spec.args else "value"
    pattern, flags = spec.args.get(name), spec.args.get("flags")
    if flags is not None and not isinstance(flags, str):
        at.fail("argument 'flags' must be a string of i, m, s", "flags")
    if not isinstance(pattern, str) or not pattern:
        return  # a missing or non-text pattern: the parser or the check says so
    try:
        compile_regex(pattern, flags or "")
    except ArgumentProblem as problem:
        bad_flag = problem.reason.startswith("unknown regex flag")
        at.fail(problem.reason, "flags" if bad_flag else name)


def python_file_problems(
    specs: Sequence[AssertSpec], root: Path | None
) -> Iterator[tuple[int, str, str]]:
    """``(index, field, problem)`` of each ``python`` assert among ``specs`` (in groups too)
    whose file is not there under the project ``root`` (None: the working directory); the
    field is the assert's ``value`` (``asserts[2].asserts[0].value`` in a group, with
    ``index`` 2)."""
    for index, spec in enumerate(specs):
        for field, problem in _python_files(spec, root, f"asserts[{index}]"):
            yield index, field, problem


def _python_files(spec: AssertSpec, root: Path | None, field: str) -> Iterator[tuple[str, str]]:
    if spec.children is not None:
        for index, child in enumerate(spec.children):
            yield from _python_files(child, root, f"{field}.asserts[{index}]")
        return
    value = spec.args.get("value")
    if spec.op == "python":
        if isinstance(value, str) and reference_problem(value) is None:
            problem = missing_file(value, root)
            if problem is not None:
                yield f"{field}.value", problem
    elif spec.op == "javascript" and isinstance(value, str):
        from assay.asserts._javascript import FILE_PREFIX, file_problem

        if value.startswith(FILE_PREFIX) and (problem := file_problem(value, root)) is not None:
            yield f"{field}.value", problem
    raw = spec.args.get("transform")
    if raw is not None:
        from assay.asserts._transform import parse_transform, transform_code_problem
        from assay.errors import GoldenError

        try:
            transform = parse_transform(raw, At(None, "", GoldenError))
        except GoldenError:
            return  # its shape is the loader's to refuse
        problem = transform_code_problem(transform, root, files=True)
        if problem is not None:
            yield f"{field}.transform.{transform.language}", problem


def has_code_files(spec: AssertSpec) -> bool:
    """Whether ``spec`` (or a child) may name a file of the project: a python or javascript
    assert, or an assert with a transform."""
    if spec.children is not None:
        return any([has_code_files(child) for child in spec.children])
    return spec.op in ("python", "javascript") or "transform" in spec.args
