"""The ``python`` op: a check written as a Python function in the project.

``{op: python, value: "checks.py:function"}`` names a file relative to the project root;
``"package.module:function"`` a module imported with the project root on ``sys.path``. The
function is called as ``function(output, context)`` and returns a bool, a number (a score) or
a mapping ``{pass, score?, reason?}``, with promptfoo's semantics: a number passes when it is
at least the assert's ``threshold``, or above 0 when there is none; a mapping with a score
below the threshold fails.

Whatever the function does (raises, hangs, returns nonsense, cannot be found) is a failed
check naming it, never a crash of the run and never a pass, negated or not.

promptfoo's forms are read too (its ``src/assertions/python.ts`` and ``src/util/transform.ts``),
with its reading of the result (:func:`assay.asserts._scripts.python_outcome`):
``file://checks.py`` (the function ``get_assert``; ``get_transform`` for a transform) or
``file://checks.py:fn``, and inline code: one line is an expression (``return`` is put before
it), several lines a function body, run as ``def main(output, context):`` with ``json``
imported. Which a value is, by one rule (:func:`code_form`): ``file://...`` is a file; one line
that is ``path.py:name`` or ``dotted.module:name`` (no spaces, no keyword) is a reference;
anything else is inline code.
"""

from __future__ import annotations

import keyword
import re
import sys
import threading
import zlib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Final, Literal

from assay.asserts._context import CheckContext, OutputView
from assay.asserts._result import ArgumentProblem, Outcome, clip
from assay.validate import is_number

DEFAULT_TIMEOUT_S: Final = 10.0

# (reference, root) -> the function, or the reason it cannot be had: resolved and imported
# once per process (a forked worker inherits what its parent resolved before the fork).
_RESOLVED: dict[tuple[str, str], Callable[..., Any] | str] = {}
# Module imports touch sys.path and sys.modules, which are process-wide.
_IMPORT_LOCK = threading.Lock()


FILE_PREFIX: Final = "file://"
# promptfoo's default function of a python file: an assert's, a transform's.
ASSERT_FUNCTION: Final = "get_assert"
TRANSFORM_FUNCTION: Final = "get_transform"
_REFERENCE: Final = re.compile(r"(?:[\w./\\-]+\.py|[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*):[A-Za-z_]\w*")
# A file named without its function: a mistake, not code (``checks.py`` is no expression).
_BARE_FILE: Final = re.compile(r"[\w./\\-]+\.py")

CodeForm = Literal["reference", "file", "inline"]


def code_form(value: str) -> CodeForm:
    """Which of the three forms a ``python`` value (or a python transform) is: the rule of the
    module's docstring."""
    if value.startswith(FILE_PREFIX):
        return "file"
    text = value.strip()
    if "\n" not in text and _REFERENCE.fullmatch(text):
        module = text.rpartition(":")[0]
        if module.endswith(".py") or not any(keyword.iskeyword(p) for p in module.split(".")):
            return "reference"
    return "inline"


def reference_problem(reference: Any) -> str | None:
    """Why a ``python`` assert's ``value`` names no function and is no code (None: it is one
    of the forms), without reading any file."""
    if not isinstance(reference, str) or not reference.strip():
        return "argument 'value' must name a function ('checks.py:function') or hold code"
    if code_form(reference) == "file":
        path = reference[len(FILE_PREFIX) :].rpartition(":")
        target = path[0] if path[1] and path[0].endswith(".py") else path[2]
        if not target.endswith(".py"):
            return f"{reference!r}: a python file must end in .py"
        return None
    if _BARE_FILE.fullmatch(reference.strip()):
        return (
            f"{reference!r} is not a function reference: write 'checks.py:function' or "
            "'package.module:function' (or 'file://checks.py' for its get_assert)"
        )
    return None


def file_reference(value: str, default: str) -> str:
    """``file://checks.py[:fn]`` as the reference ``checks.py:fn`` (``default`` without one)."""
    path = value[len(FILE_PREFIX) :]
    target, sep, name = path.rpartition(":")
    if sep and target.endswith(".py") and name:
        return f"{target}:{name}"
    return f"{path}:{default}"


def inline_source(code: str) -> str:
    """promptfoo's ``buildPythonScript``: the code as the body of ``main(output, context)``."""
    if "\n" in code:
        found = re.search(r"^(?!\s*$)\s+", code, re.MULTILINE)
        indent = found.group(0) if found else "    "
        body = "\n".join(indent + line for line in code.split("\n"))
    else:
        body = f"    return {code}"
    return f"import json\n\ndef main(output, context):\n{body}\n"


def inline_problem(code: str) -> str | None:
    """Why inline python code does not compile (None: it does)."""
    try:
        compile(inline_source(code), "<inline python>", "exec")
    except (SyntaxError, ValueError) as exc:
        return f"{_label(code)} does not compile: {type(exc).__name__}: {exc}"
    return None


def _label(code: str) -> str:
    from assay.asserts._scripts import label

    return label(code)


def _inline_function(code: str) -> Callable[..., Any] | str:
    problem = inline_problem(code)
    if problem is not None:
        return problem
    namespace: dict[str, Any] = {"__name__": "_assay_inline_python"}
    try:
        exec(compile(inline_source(code), "<inline python>", "exec"), namespace)
    except Exception as exc:
        return f"{_label(code)} raised {type(exc).__name__}: {exc}"
    return namespace["main"]  # type: ignore[no-any-return]


def _file_target(reference: str) -> str | None:
    """The file a reference names (``checks.py`` of ``checks.py:fn``), None for a module."""
    target = reference.rpartition(":")[0]
    return target if target.endswith(".py") or "/" in target or "\\" in target else None


def missing_file(reference: str, root: Path | None) -> str | None:
    """Why the file a well-formed reference names cannot be found from the project ``root``
    (None: it is there, the reference names a module, which only importing would find, or
    the value is inline code)."""
    form = code_form(reference)
    if form == "inline":
        return None
    named = reference.strip() if form == "reference" else file_reference(reference, "f")
    target = _file_target(named)
    if target is None:
        return None
    path = ((root if root is not None else Path.cwd()) / target).resolve()
    return None if path.is_file() else f"{reference.strip()}: no file {path}"


def _load(reference: str, root: Path) -> Callable[..., Any] | str:
    import importlib.util  # only a run with a python assert imports anything this way

    problem = reference_problem(reference)
    if problem is not None:
        return problem
    target, _, name = reference.rpartition(":")
    if not target:
        return f"{reference!r} is not a function reference"
    if _file_target(reference) is not None:
        path = (root / target).resolve()
        if not path.is_file():
            return f"{reference}: no file {path}"
        # A name of its own per file, so two checks.py files in different folders never
        # share a module.
        module_name = f"_assay_check_{zlib.crc32(str(path).encode()):08x}_{path.stem}"
        from assay.plugins import SourceOnlyLoader  # a cached .pyc may be of older source

        try:
            loader = SourceOnlyLoader(module_name, str(path))
            spec = importlib.util.spec_from_file_location(module_name, path, loader=loader)
            if spec is None or spec.loader is None:
                return f"{reference}: {path} cannot be imported"
            module = importlib.util.module_from_spec(spec)
            sys.modules[module_name] = module
            spec.loader.exec_module(module)
        except Exception as exc:
            sys.modules.pop(module_name, None)
            return f"{reference}: importing {target} raised {type(exc).__name__}: {exc}"
    else:
        # The one rule for a module of the project, shared with the python provider.
        from assay.plugins import import_project_module

        try:
            module = import_project_module(target, root)
        except Exception as exc:
            return f"{reference}: importing {target} raised {type(exc).__name__}: {exc}"
    fn = getattr(module, name, None)
    if fn is None:
        return f"{reference}: {target} has no function {name!r}"
    if not callable(fn):
        return f"{reference}: {name!r} in {target} is a {type(fn).__name__}, not a function"
    return fn  # type: ignore[no-any-return]


def resolve_function(
    reference: str, root: Path | None, default: str = ASSERT_FUNCTION
) -> Callable[..., Any]:
    """The function a ``python`` value names or holds (any of the three forms), had once per
    (value, root); an ArgumentProblem saying why when it cannot be had. ``default``: a
    ``file://`` reference's function when it names none."""
    base = root if root is not None else Path.cwd()
    key = (reference if default == ASSERT_FUNCTION else f"{default}|{reference}", str(base))
    found = _RESOLVED.get(key)
    if found is None:
        with _IMPORT_LOCK:
            found = _RESOLVED.get(key)
            if found is None:
                form = code_form(reference)
                if form == "inline":
                    found = _inline_function(reference)
                else:
                    target = (
                        reference if form == "reference" else file_reference(reference, default)
                    )
                    found = _load(target.strip(), base)
                _RESOLVED[key] = found
    if isinstance(found, str):
        raise ArgumentProblem(
            found, {"reason": "python_unavailable", "function": _label(reference)}
        )
    return found


def function_context(golden: Any) -> dict[str, Any]:
    """What a code check or transform is given besides the output: the golden's ``vars``,
    ``input``, ``id`` and ``tier``, as a prompt template sees them, plus ``expected`` when the
    golden has one (a check may compare with the reference, as promptfoo's checks get their
    ``value``), and promptfoo's names for the same: ``prompt`` (the input) and ``test``
    (``{vars, description}``, with ``metadata`` when the golden has a mapping of that name).
    Never the rubric or the other asserts."""
    if golden is None:
        return {"vars": {}, "input": None, "id": None, "tier": None, "prompt": None, "test": {}}
    found = golden.fields.get("vars")
    variables = dict(found) if isinstance(found, Mapping) else {}
    fields = golden.fields
    test: dict[str, Any] = {
        "vars": variables,
        "description": fields.get("description") or fields.get("title") or golden.id,
    }
    if isinstance(fields.get("metadata"), Mapping):
        test["metadata"] = dict(fields["metadata"])
    context: dict[str, Any] = {
        "vars": variables,
        "input": golden.input,
        "id": golden.id,
        "tier": golden.tier,
        "prompt": golden.input,
        "test": test,
    }
    if golden.has_expected:
        context["expected"] = golden.expected
    return context


def _call(fn: Callable[..., Any], output: Any, context: dict[str, Any], timeout: float) -> Any:
    """``fn(output, context)`` in a daemon thread, bounded by ``timeout`` seconds (else a
    TimeoutError); what the function raises is raised here.

    A thread, for a coroutine function too (run there with asyncio.run): the caller may be
    inside an event loop, where asyncio.run cannot be called, and a hung function must not
    hold the run (the daemon thread is abandoned).
    """
    # Imported here: a suite without python asserts never loads asyncio (import discipline).
    import asyncio
    import inspect

    box: dict[str, Any] = {}

    def target() -> None:
        try:
            value = fn(output, context)
            if inspect.isawaitable(value):  # a coroutine function's result among them
                value = asyncio.run(_awaited(value))
            box["value"] = value
        except BaseException as exc:  # reported as a failed check by the caller
            box["error"] = exc

    worker = threading.Thread(target=target, name="assay-python-assert", daemon=True)
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        raise TimeoutError
    if "error" in box:
        raise box["error"]
    return box.get("value")


async def _awaited(value: Any) -> Any:
    return await value


def _number_arg(args: Mapping[str, Any], name: str, default: float | None) -> float | None:
    value = args.get(name, default)
    if value is None:
        return None
    if not is_number(value) or (name == "timeout_s" and value <= 0):
        wanted = "a number > 0" if name == "timeout_s" else "a finite number"
        raise ArgumentProblem(
            f"argument '{name}' must be {wanted}", {"reason": "invalid_argument", "argument": name}
        )
    return float(value)


def op_python(view: OutputView, args: Mapping[str, Any], ctx: CheckContext) -> Outcome:
    value = args.get("value")
    if not isinstance(value, str) or not value.strip():
        raise ArgumentProblem(
            str(reference_problem(value)), {"reason": "invalid_argument", "argument": "value"}
        )
    form = code_form(value)
    reference = value.strip() if form == "reference" else value
    timeout = _number_arg(args, "timeout_s", DEFAULT_TIMEOUT_S)
    threshold = _number_arg(args, "threshold", None)
    problem = reference_problem(value)
    if problem is not None:
        raise ArgumentProblem(problem, {"reason": "invalid_argument", "argument": "value"})
    fn = resolve_function(reference, ctx.root)
    context = function_context(view.golden)
    if "config" in args:
        context["config"] = args["config"]
    name = reference if form == "reference" else _label(reference)
    verdict = call_bounded(fn, name, view.raw, context, timeout or DEFAULT_TIMEOUT_S)
    if form == "reference":
        return _outcome(reference, verdict, threshold)
    from assay.asserts._scripts import python_outcome

    return python_outcome(name, verdict, threshold)


def call_bounded(
    fn: Callable[..., Any], name: str, output: Any, context: dict[str, Any], timeout: float
) -> Any:
    """``fn(output, context)`` within ``timeout`` seconds; an ArgumentProblem naming ``name``
    when it raises or does not return in time."""
    reference = name
    try:
        return _call(fn, output, context, timeout)
    except TimeoutError:
        raise ArgumentProblem(
            f"{reference} did not return within {timeout:g} s",
            {"reason": "python_timeout", "function": reference},
        ) from None
    except BaseException as exc:
        raise ArgumentProblem(
            f"{reference} raised {type(exc).__name__}: {exc}",
            {"reason": "python_raised", "function": reference},
        ) from None


def _outcome(reference: str, verdict: Any, threshold: float | None) -> Outcome:
    """promptfoo's reading of a script assert's result (bool, number or mapping)."""
    reason: str | None = None
    if isinstance(verdict, bool):
        passed, score = verdict, 1.0 if verdict else 0.0
        if not passed:
            reason = f"{reference} returned False"
    elif is_number(verdict):
        score = float(verdict)
        passed = score >= threshold if threshold is not None else score > 0
        if not passed:
            reason = (
                f"{reference} scored {score:g}, below the threshold {threshold:g}"
                if threshold is not None
                else f"{reference} scored {score:g} (a score passes when above 0)"
            )
    elif isinstance(verdict, Mapping) and isinstance(verdict.get("pass"), bool):
        passed = verdict["pass"]
        raw_score = verdict.get("score")
        raw_reason = verdict.get("reason")
        if (raw_score is not None and not is_number(raw_score)) or not (
            raw_reason is None or isinstance(raw_reason, str)
        ):
            raise _bad_result(reference, verdict)
        score = float(raw_score) if raw_score is not None else 1.0 if passed else 0.0
        reason = raw_reason
        if threshold is not None and score < threshold:
            passed = False
            below = f"{reference} scored {score:g}, below the threshold {threshold:g}"
            reason = f"{below}: {reason}" if reason else below
        elif not passed and not reason:
            reason = f"{reference} returned pass: false"
    else:
        raise _bad_result(reference, verdict)
    evidence: dict[str, Any] = {"score": score, "function": reference}
    if passed:
        return True, None, evidence
    evidence["reason"] = "python_failed"
    return False, reason, evidence


def _bad_result(reference: str, verdict: Any) -> ArgumentProblem:
    return ArgumentProblem(
        f"{reference} returned {clip(repr(verdict))}, not a bool, a number or a mapping "
        "{pass, score?, reason?}",
        {"reason": "python_bad_result", "function": reference},
    )
