"""The python provider: ``module:function`` called with the prompt (sync or async).

The function returns the output text, or a mapping ``{text, input_tokens?, output_tokens?}``.
A sync function runs in a worker thread so it cannot stall the other calls.

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
from typing import Any, Final

from assay.models.providers._base import Completion, ProviderConfig, ProviderError, ProviderTimeout
from assay.plugins import import_project_module, module_digest, project_on_path

# Far above any real call, and low enough that cost arithmetic stays finite.
MAX_TOKENS: Final = 10**12
# An exception's message is the provider's own text: kept, but one short line.
_MESSAGE_LIMIT: Final = 200


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
        raise FunctionError(f"function must look like 'module:function', not {spec!r}")
    return module_name, attr


def _cannot_import(spec: str, module_name: str, exc: BaseException) -> FunctionError:
    return FunctionError(f"cannot import {module_name!r} for {spec!r}: {describe(exc)}")


def load_function(spec: str, root: Path | None = None) -> Callable[..., Any]:
    """Import ``module:function``, the project root ``root`` (default: the working directory)
    first on ``sys.path`` for the import; a module that is missing, does not compile, raises or
    exits at import is a FunctionError, as is a bad spec or attribute."""
    module_name, attr = _module_name(spec)
    try:
        module = import_project_module(module_name, Path.cwd() if root is None else root)
    except (Exception, SystemExit) as exc:  # whatever the module does at import
        raise _cannot_import(spec, module_name, exc) from None
    function = getattr(module, attr, None)
    if function is None:
        raise FunctionError(f"{spec!r}: module {module_name!r} has no {attr!r}")
    if not callable(function):
        raise FunctionError(f"{spec!r} is not a callable")
    return function  # type: ignore[no-any-return]


def source_digest(spec: str, root: Path | None = None) -> str | None:
    """The sha256 of the file ``module:function``'s module is imported from (found as
    :func:`load_function` finds it, the module itself not run); None for a module with no
    file. Only the digest: the cache never holds the code. A module that cannot be found is a
    FunctionError: a cache hit must not hide a provider that cannot start."""
    module_name, _attr = _module_name(spec)
    try:
        return module_digest(module_name, Path.cwd() if root is None else root)
    except (Exception, SystemExit) as exc:  # a parent package runs when the module is found
        raise _cannot_import(spec, module_name, exc) from None


def project_module_digests(spec: str, root: Path | None = None) -> dict[str, str]:
    """``{path: sha256}`` of the modules of the project that ``module:function``'s module
    loaded, besides itself (see :mod:`assay.models.providers._project_modules`): paths relative
    to the project root ``root`` (default: the working directory), POSIX style. The module is
    imported to find them. Only digests: the cache never holds the code.

    In a process that lives on (a library user, the pytest plugin), a helper edited since this
    process keyed it is imported again, with the module, before it is keyed: the code that runs
    is the code keyed.

    Raises:
        FunctionError: the module cannot be imported (a cache hit must not hide a provider that
            cannot start).
    """
    from assay.models.providers._project_modules import project_modules

    base = (Path.cwd() if root is None else root).resolve()
    module_name, _attr = _module_name(spec)
    load_function(spec, root)
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


async def _await_guarded(function: Callable[..., Any], prompt: str) -> Outcome:
    try:
        return True, await function(prompt)
    except (KeyboardInterrupt, asyncio.CancelledError):
        raise
    except BaseException as exc:
        return False, exc


async def _in_daemon_thread(function: Callable[..., Any], prompt: str) -> Outcome:
    """Run a sync function in a daemon thread: one that never returns after its timeout
    cannot keep the process alive (asyncio's own executor threads are joined at exit)."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Outcome] = loop.create_future()

    def settle(outcome: Outcome) -> None:
        if not future.done():
            future.set_result(outcome)

    def target() -> None:
        try:
            outcome: Outcome = True, function(prompt)
        except BaseException as exc:  # handed to the awaiting task as a value
            outcome = False, exc
        # After a timeout the run may be over and its loop closed: nobody waits any more.
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(settle, outcome)

    threading.Thread(target=target, daemon=True, name="assay-python-provider").start()
    return await future


def _tokens(result: Mapping[Any, Any], name: str) -> int:
    value = result.get(name)
    if value is None:
        return 0
    rule = f"it must be a whole number from 0 to {MAX_TOKENS}"
    if isinstance(value, bool) or not isinstance(value, int):
        raise ProviderError(
            f"the function returned a {type(value).__name__} as {name}: {rule}", retryable=False
        )
    if not 0 <= value <= MAX_TOKENS:
        shown = str(value) if abs(value) < 10**20 else "a huge number"  # str() of 10**5000 fails
        raise ProviderError(f"the function returned {shown} as {name}: {rule}", retryable=False)
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


class PythonProvider:
    def __init__(self, config: ProviderConfig, root: Path | None = None):
        self.config = config
        self.function = load_function(config.function or "", root)

    async def complete(self, prompt: str) -> Completion:
        if inspect.iscoroutinefunction(self.function):
            pending = _await_guarded(self.function, prompt)
        else:
            pending = _in_daemon_thread(self.function, prompt)
        try:
            ok, value = await asyncio.wait_for(pending, self.config.timeout_s)
        except TimeoutError:
            raise ProviderTimeout(
                f"the function timed out after {self.config.timeout_s:g} s"
            ) from None
        if not ok:
            if isinstance(value, KeyboardInterrupt | ProviderError):
                raise value  # Ctrl-C stops the run; a ProviderError says how to retry itself
            raise ProviderError(f"the function raised {describe(value)}", retryable=False)
        return completion_of(value)

    async def aclose(self) -> None:
        return None
