"""The python provider: ``module:function`` called with the prompt (sync or async).

The function returns the output text, or a mapping ``{text, input_tokens?, output_tokens?}``.
A sync function runs in a worker thread so it cannot stall the other calls.

promptfoo's form is accepted too: ``file://provider.py`` (function ``call_api``) or
``file://provider.py:fn``, the path relative to the project root, called as promptfoo calls it
(its src/providers/pythonCompletion.ts and its python provider docs): ``fn(prompt, options,
context)`` with ``options = {id, config}`` (``config`` the provider's ``config`` mapping plus
``basePath``, the project root) and ``context = {vars, test: {vars}}`` (the golden's vars; assay
adds its ``input``, ``id`` and ``tier``), returning ``{output, error?, tokenUsage?: {prompt,
completion, total}, finishReason?}``; a non-empty ``error`` is the call's error, an ``output``
that is not a string is sent on as its JSON text.

The module is imported with the project root first on ``sys.path`` (the rule of the ``python``
assert op, :mod:`assay._project_modules`): a module of the project needs no ``PYTHONPATH``.
:func:`source_digest` is the sha256 of the module's file and :func:`project_module_digests`
those of the other modules of the project it loaded (a helper it imports): both are part of the
cache identity of a python provider, so editing the function's file, or a helper's, is a cache
miss.

Whatever the function does is the result of that one call, never assay's fate: an exception,
``sys.exit()`` or any other ``BaseException`` (but Ctrl-C) becomes an error result naming it,
and so does a return value of the wrong shape.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import sys
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any, Final

from assay.models.providers._base import Completion, ProviderConfig, ProviderError, ProviderTimeout
from assay.plugins import import_project_module, module_digest, project_on_path

# Far above any real call, and low enough that cost arithmetic stays finite.
MAX_TOKENS: Final = 10**12
# An exception's message is the provider's own text: kept, but one short line.
_MESSAGE_LIMIT: Final = 200
# promptfoo's way of naming a provider's file, and the function it calls by default.
FILE_PREFIX: Final = "file://"
PROMPTFOO_FUNCTION: Final = "call_api"


class FunctionError(ValueError):
    """The ``function`` setting names nothing that can be called: the provider cannot start.
    ``setting`` lets the runner name the field without importing this module."""

    setting: Final = "function"


def describe(exc: BaseException) -> str:
    """``Type: message`` on one line, the message cut to a sane length."""
    name = type(exc).__name__
    if isinstance(exc, SystemExit):
        return f"SystemExit (exit code {exc.code!r})"
    message = " ".join(str(exc).split())
    if len(message) > _MESSAGE_LIMIT:
        message = message[: _MESSAGE_LIMIT - 1] + "…"
    return f"{name}: {message}" if message else name


def _module_name(spec: str) -> tuple[str, str]:
    """``module:function`` as (module, function); anything else is a FunctionError."""
    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise FunctionError(
            f"function must look like 'module:function' or 'file://provider.py', not {spec!r}"
        )
    return module_name, attr


def is_file_reference(spec: str) -> bool:
    """Whether ``spec`` is promptfoo's ``file://provider.py[:function]`` form."""
    return spec.startswith(FILE_PREFIX)


def file_reference(spec: str, default: str = PROMPTFOO_FUNCTION) -> tuple[str, str]:
    """``file://provider.py[:function]`` (the prefix optional) as (path, function), the
    function ``default`` when none is named; a path that is not a ``.py`` file is a
    FunctionError."""
    rest = spec[len(FILE_PREFIX) :] if is_file_reference(spec) else spec
    path, sep, attr = rest.rpartition(":")
    if not sep or not path.endswith(".py"):
        path, attr = rest, default
    if not path.endswith(".py") or not attr.isidentifier():
        raise FunctionError(f"{spec!r} must name a .py file: 'file://provider.py[:function]'")
    return path, attr


def _cannot_import(spec: str, module_name: str, exc: BaseException) -> FunctionError:
    return FunctionError(f"cannot import {module_name!r} for {spec!r}: {describe(exc)}")


# Module name -> sha256 of the file it was executed from, for the modules loaded by path.
_FILE_MODULES: dict[str, str] = {}


def _file_path(spec: str, root: Path, default: str) -> tuple[Path, str]:
    relative, attr = file_reference(spec, default)
    path = (root / relative).resolve()  # an absolute path stays absolute
    if not path.is_file():
        raise FunctionError(f"{spec!r}: no file {path}")
    return path, attr


def _file_module_name(path: Path) -> str:
    # A name of its own per file: two provider.py files in different folders never share one.
    import zlib

    return f"_assay_provider_{zlib.crc32(str(path).encode()):08x}_{path.stem}"


def load_file_module(path: Path, root: Path) -> ModuleType:
    """The module of the file ``path``, executed with the project root and the file's folder
    first on ``sys.path`` (again once its file has changed, compiled from its source, never a
    stale ``.pyc``)."""
    import hashlib
    import importlib.util

    from assay.plugins import SourceOnlyLoader

    name = _file_module_name(path)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    module = sys.modules.get(name)
    if module is not None and _FILE_MODULES.get(name) == digest:
        return module
    loader = SourceOnlyLoader(name, str(path))
    spec = importlib.util.spec_from_file_location(name, path, loader=loader)
    if spec is None:
        raise ImportError(f"{path} cannot be imported")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        # The project root first, then the file's own folder (promptfoo runs a script with it
        # on the path): a module beside the file is found either way.
        with project_on_path(path.parent), project_on_path(root):
            loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    _FILE_MODULES[name] = digest
    return module


def _loaded(spec: str, root: Path, default: str) -> tuple[ModuleType, str]:
    """(module, the function's name) of either form of ``spec``."""
    if is_file_reference(spec):
        path, attr = _file_path(spec, root, default)
        try:
            return load_file_module(path, root), attr
        except (Exception, SystemExit) as exc:  # whatever the module does at import
            raise _cannot_import(spec, path.name, exc) from None
    module_name, attr = _module_name(spec)
    try:
        return import_project_module(module_name, root), attr
    except (Exception, SystemExit) as exc:  # whatever the module does at import
        raise _cannot_import(spec, module_name, exc) from None


def load_function(
    spec: str, root: Path | None = None, default: str = PROMPTFOO_FUNCTION
) -> Callable[..., Any]:
    """Import ``module:function`` (or load ``file://provider.py[:function]``, ``default`` the
    function when none is named), the project root ``root`` (default: the working directory)
    first on ``sys.path`` for the import; a module that is missing, does not compile, raises or
    exits at import is a FunctionError, as is a bad spec or attribute."""
    module, attr = _loaded(spec, Path.cwd() if root is None else root, default)
    function = getattr(module, attr, None)
    if function is None:
        holder = spec.partition(":")[0] if not is_file_reference(spec) else file_reference(spec)[0]
        raise FunctionError(f"{spec!r}: module {holder!r} has no {attr!r}")
    if not callable(function):
        raise FunctionError(f"{spec!r} is not a callable")
    return function  # type: ignore[no-any-return]


def source_digest(spec: str, root: Path | None = None) -> str | None:
    """The sha256 of the file ``module:function``'s module is imported from (found as
    :func:`load_function` finds it, the module itself not run), or of the file a
    ``file://`` spec names; None for a module with no file. Only the digest: the cache never
    holds the code. A module that cannot be found is a FunctionError: a cache hit must not hide
    a provider that cannot start."""
    base = Path.cwd() if root is None else root
    if is_file_reference(spec):
        import hashlib

        path, _attr = _file_path(spec, base, PROMPTFOO_FUNCTION)
        try:
            return hashlib.sha256(path.read_bytes()).hexdigest()
        except OSError as exc:
            raise _cannot_import(spec, path.name, exc) from None
    module_name, _attr = _module_name(spec)
    try:
        return module_digest(module_name, base)
    except (Exception, SystemExit) as exc:  # a parent package runs when the module is found
        raise _cannot_import(spec, module_name, exc) from None


def project_module_digests(spec: str, root: Path | None = None) -> dict[str, str]:
    """``{path: sha256}`` of the modules of the project that ``module:function``'s module
    (or the ``file://`` spec's) loaded, besides itself (see
    :mod:`assay.models.providers._project_modules`): paths relative to the project root
    ``root`` (default: the working directory), POSIX style. The module is imported to find
    them. Only digests: the cache never holds the code.

    In a process that lives on (a library user, the pytest plugin), a helper edited since this
    process keyed it is imported again, with the module, before it is keyed: the code that runs
    is the code keyed.

    Raises:
        FunctionError: the module cannot be imported (a cache hit must not hide a provider that
            cannot start).
    """
    from assay.models.providers._project_modules import project_modules

    base = (Path.cwd() if root is None else root).resolve()
    load_function(spec, root)
    if is_file_reference(spec):
        module_name = _file_module_name(_file_path(spec, base, PROMPTFOO_FUNCTION)[0])
    else:
        module_name = _module_name(spec)[0]
    digests = _digests(project_modules(sys.modules[module_name], base), base)
    where = str(base)
    stale = [n for n, (path, sha) in digests.items() if _KEYED.get((where, path), sha) != sha]
    if stale:
        with project_on_path(base):
            for name in (*stale, module_name):
                sys.modules.pop(name, None)
        load_function(spec, root)
        digests = _digests(project_modules(sys.modules[module_name], base), base)
    _KEYED.update({(where, path): digest for path, digest in digests.values()})
    return dict(sorted(digests.values()))


# (project root, file path) -> the digest a python provider's cache identity had for that file
# in this process: a later digest that differs means the module in memory is out of date.
_KEYED: dict[tuple[str, str], str] = {}


def _digests(modules: Mapping[str, Path], root: Path) -> dict[str, tuple[str, str]]:
    """Module name -> (path relative to the root, sha256 of its file) for the files that can
    be read (a file gone since its import keys nothing)."""
    import hashlib

    out = {}
    for name, path in modules.items():
        try:
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
        except OSError:
            continue
        out[name] = (path.relative_to(root).as_posix(), digest)
    return out


# A call's outcome as a value: (True, result) or (False, the exception it raised). Raising a
# SystemExit through an asyncio task would stop the event loop and the whole run with it.
Outcome = tuple[bool, Any]


async def _await_guarded(function: Callable[..., Any], *args: Any) -> Outcome:
    try:
        return True, await function(*args)
    except (KeyboardInterrupt, asyncio.CancelledError):
        raise
    except BaseException as exc:
        return False, exc


async def _in_daemon_thread(function: Callable[..., Any], *args: Any) -> Outcome:
    """Run a sync function in a daemon thread: one that never returns after its timeout
    cannot keep the process alive (asyncio's own executor threads are joined at exit)."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Outcome] = loop.create_future()

    def settle(outcome: Outcome) -> None:
        if not future.done():
            future.set_result(outcome)

    def target() -> None:
        try:
            outcome: Outcome = True, function(*args)
        except BaseException as exc:  # handed to the awaiting task as a value
            outcome = False, exc
        # After a timeout the run may be over and its loop closed: nobody waits any more.
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(settle, outcome)

    threading.Thread(target=target, daemon=True, name="assay-python-provider").start()
    return await future


async def call_guarded(
    function: Callable[..., Any], args: tuple[Any, ...], timeout_s: float, what: str
) -> Any:
    """``function(*args)`` (a coroutine function awaited, a sync one in a daemon thread) within
    ``timeout_s``: what it returns, or a ProviderError naming ``what`` for a timeout, an
    exception or an exit (a ProviderError it raises says how to retry itself; Ctrl-C stops the
    run)."""
    if inspect.iscoroutinefunction(function):
        pending = _await_guarded(function, *args)
    else:
        pending = _in_daemon_thread(function, *args)
    try:
        ok, value = await asyncio.wait_for(pending, timeout_s)
    except TimeoutError:
        raise ProviderTimeout(f"{what} timed out after {timeout_s:g} s") from None
    if not ok:
        if isinstance(value, KeyboardInterrupt | ProviderError):
            raise value
        raise ProviderError(f"{what} raised {describe(value)}", retryable=False)
    return value


def _tokens(result: Mapping[Any, Any], name: str, shown: str | None = None) -> int:
    value = result.get(name)
    if value is None:
        return 0
    shown = shown or name
    rule = f"it must be a whole number from 0 to {MAX_TOKENS}"
    if isinstance(value, bool) or not isinstance(value, int):
        raise ProviderError(
            f"the function returned a {type(value).__name__} as {shown}: {rule}", retryable=False
        )
    if not 0 <= value <= MAX_TOKENS:
        number = str(value) if abs(value) < 10**20 else "a huge number"  # str(10**5000) fails
        raise ProviderError(f"the function returned {number} as {shown}: {rule}", retryable=False)
    return value


def completion_of(result: Any) -> Completion:
    """The completion a function returned: a string or ``{text, input_tokens?, output_tokens?}``
    (anything else is a ProviderError naming the field)."""
    if isinstance(result, str):
        return Completion(result)
    if isinstance(result, Mapping) and isinstance(result.get("text"), str):
        return Completion(
            result["text"], _tokens(result, "input_tokens"), _tokens(result, "output_tokens")
        )
    raise ProviderError("the function must return a string or {text: ...}", retryable=False)


def output_text(value: Any) -> str:
    """An answer as text: a string as it is, any other JSON value as its compact JSON text."""
    import json

    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError):
        raise ProviderError(
            f"the answer is a {type(value).__name__}, neither text nor JSON", retryable=False
        ) from None


def promptfoo_completion_of(result: Any, what: str = "the function") -> Completion:
    """The completion of a promptfoo ProviderResponse ``{output, error?, tokenUsage?,
    finishReason?}``: a non-empty ``error`` is a ProviderError with its text (one line), as is
    a result with neither ``output`` nor ``error``."""
    if not isinstance(result, Mapping) or ("output" not in result and "error" not in result):
        raise ProviderError(
            f"{what} must return a dict with an 'output' or an 'error' (promptfoo's "
            f"ProviderResponse), not a {type(result).__name__}",
            retryable=False,
        )
    error = result.get("error")
    if error not in (None, ""):
        words = " ".join(str(error).split())
        if len(words) > _MESSAGE_LIMIT:
            words = words[: _MESSAGE_LIMIT - 1] + "…"
        raise ProviderError(f"{what} returned the error: {words}", retryable=False)
    if result.get("output") is None:
        raise ProviderError(f"{what} returned no output", retryable=False)
    usage = result.get("tokenUsage")
    usage = usage if isinstance(usage, Mapping) else {}
    finish = result.get("finishReason")
    return Completion(
        output_text(result["output"]),
        _tokens(usage, "prompt", "tokenUsage.prompt"),
        _tokens(usage, "completion", "tokenUsage.completion"),
        finish if isinstance(finish, str) else None,
    )


def _json_copy(value: Any) -> Any:
    """``value`` as promptfoo hands it to Python (through JSON): a copy the function may change
    without touching the golden."""
    import json

    return json.loads(json.dumps(value, ensure_ascii=False, default=str))


class PythonProvider:
    def __init__(self, config: ProviderConfig, root: Path | None = None):
        self.config = config
        self.root = Path.cwd() if root is None else root
        spec = config.function or ""
        self.promptfoo = is_file_reference(spec)
        self.function = load_function(spec, self.root)
        if self.promptfoo:
            import json

            own = json.loads(config.config) if config.config else {}
            self.options = {"id": spec, "config": {**own, "basePath": str(self.root)}}

    async def complete(self, prompt: str) -> Completion:
        if self.promptfoo:
            return await self.complete_with_context(prompt, {})
        value = await call_guarded(self.function, (prompt,), self.config.timeout_s, "the function")
        return completion_of(value)

    async def complete_with_context(self, prompt: str, context: Mapping[str, Any]) -> Completion:
        """A promptfoo-style call: ``function(prompt, options, context)``; a ``module:function``
        provider is called with the prompt alone, as always."""
        if not self.promptfoo:
            return await self.complete(prompt)
        golden_vars = context.get("vars")
        found = dict(golden_vars) if isinstance(golden_vars, Mapping) else {}
        extra = {name: context[name] for name in ("input", "id", "tier") if name in context}
        call_context = _json_copy({"vars": found, "test": {"vars": found}, **extra})
        args = (prompt, _json_copy(self.options), call_context)
        value = await call_guarded(self.function, args, self.config.timeout_s, "the function")
        return promptfoo_completion_of(value)

    async def aclose(self) -> None:
        return None
