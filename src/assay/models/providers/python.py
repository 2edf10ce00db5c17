"""The python provider: ``module:function`` called with the prompt (sync or async).

The function returns the output text, or a mapping ``{text, input_tokens?, output_tokens?}``.
A sync function runs in a worker thread so it cannot stall the other calls.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import inspect
import threading
from collections.abc import Callable, Mapping
from typing import Any

from assay.models.providers._base import Completion, ProviderConfig, ProviderError


def load_function(spec: str) -> Callable[..., Any]:
    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise ValueError(f"function must look like 'module:function', not {spec!r}")
    module = importlib.import_module(module_name)
    function = getattr(module, attr, None)
    if not callable(function):
        raise ValueError(f"{spec!r} is not a callable")
    return function  # type: ignore[no-any-return]


async def _in_daemon_thread(function: Callable[..., Any], prompt: str) -> Any:
    """Run a sync function in a daemon thread: one that never returns after its timeout
    cannot keep the process alive (asyncio's own executor threads are joined at exit)."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()

    def settle(ok: bool, value: Any) -> None:
        if future.done():
            return
        if ok:
            future.set_result(value)
        else:
            future.set_exception(value)

    def target() -> None:
        try:
            ok, value = True, function(prompt)
        except BaseException as exc:  # handed to the awaiting task
            ok, value = False, exc
        # After a timeout the run may be over and its loop closed: nobody waits any more.
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(settle, ok, value)

    threading.Thread(target=target, daemon=True, name="assay-python-provider").start()
    return await future


class PythonProvider:
    def __init__(self, config: ProviderConfig):
        self.config = config
        self.function = load_function(config.function or "")

    async def complete(self, prompt: str) -> Completion:
        try:
            if inspect.iscoroutinefunction(self.function):
                result = await asyncio.wait_for(self.function(prompt), self.config.timeout_s)
            else:
                result = await asyncio.wait_for(
                    _in_daemon_thread(self.function, prompt), self.config.timeout_s
                )
        except TimeoutError:
            raise ProviderError(
                f"the function timed out after {self.config.timeout_s:g} s", retryable=True
            ) from None
        except ProviderError:
            raise
        except Exception as exc:
            raise ProviderError(
                f"the function raised {type(exc).__name__}", retryable=False
            ) from None
        if isinstance(result, str):
            return Completion(result)
        if isinstance(result, Mapping) and isinstance(result.get("text"), str):
            return Completion(
                result["text"],
                int(result.get("input_tokens", 0) or 0),
                int(result.get("output_tokens", 0) or 0),
            )
        raise ProviderError("the function must return a string or {text: ...}", retryable=False)

    async def aclose(self) -> None:
        return None
