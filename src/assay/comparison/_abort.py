"""AbortController / AbortSignal: cooperative cancellation shaped like the web platform's."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class AbortError(Exception):
    """Raised when an operation is aborted without a reason of its own."""

    def __init__(self, message: str = "This operation was aborted"):
        super().__init__(message)


class AbortSignal:
    """Read side of an :class:`AbortController`: pass it to work that should stop on abort."""

    __slots__ = ("_aborted", "_listeners", "_reason")

    def __init__(self) -> None:
        self._aborted = False
        self._reason: Any = None
        self._listeners: list[Callable[[], None]] = []

    @property
    def aborted(self) -> bool:
        return self._aborted

    @property
    def reason(self) -> Any:
        return self._reason

    def throw_if_aborted(self) -> None:
        """Raise the abort reason (when it is an exception) or an :class:`AbortError`."""
        if not self._aborted:
            return
        if isinstance(self._reason, BaseException):
            raise self._reason
        raise AbortError() if self._reason is None else AbortError(str(self._reason))

    def add_listener(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Call ``callback`` once on abort (at once if already aborted); returns a remover."""
        if self._aborted:
            callback()
            return lambda: None
        self._listeners.append(callback)

        def remove() -> None:
            if callback in self._listeners:
                self._listeners.remove(callback)

        return remove

    def _abort(self, reason: Any) -> None:
        if self._aborted:
            return
        self._aborted = True
        self._reason = AbortError() if reason is None else reason
        listeners, self._listeners = self._listeners, []
        for callback in listeners:
            callback()


class AbortController:
    """Owns an :class:`AbortSignal` and can abort it (once; later calls do nothing)."""

    __slots__ = ("signal",)

    def __init__(self) -> None:
        self.signal = AbortSignal()

    def abort(self, reason: Any = None) -> None:
        self.signal._abort(reason)
