"""Progress people can watch, on standard error.

On a terminal, one line redrawn by time (at most every 0.1 s, and at once for the last call):
done of total, the rate, the time left and the failures so far. Anywhere else (a CI log, a
pipe) a plain line every few seconds, so a long run is never silent and a log never fills with
redraws (a run shorter than that prints none: its report follows at once). Redrawing by time,
not every N calls: a run of 12 slow calls shows its first one as soon as it is done.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Final, TextIO

REDRAW_S: Final = 0.1  # a terminal line: often enough to look alive, cheap for 100,000 calls
PLAIN_S: Final = 5.0  # a log line: every few seconds


def _duration(seconds: float) -> str:
    if seconds < 10:
        return f"{seconds:.1f} s"
    if seconds < 60:
        return f"{seconds:.0f} s"
    minutes, rest = divmod(int(seconds + 0.5), 60)
    if minutes < 60:
        return f"{minutes} min {rest:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


class Progress:
    """Progress of ``total`` model calls, on ``stream`` (default: standard error); silent when
    not ``enabled``. Tests give their own ``clock`` (monotonic seconds) and ``tty`` (default:
    whether ``stream`` is a terminal)."""

    def __init__(
        self,
        total: int,
        enabled: bool,
        *,
        stream: TextIO | None = None,
        clock: Callable[[], float] = time.monotonic,
        tty: bool | None = None,
    ) -> None:
        self.total = total
        self.done = 0
        self.failed = 0
        self._stream = stream if stream is not None else sys.stderr
        self._clock = clock
        self._tty = self._stream.isatty() if tty is None else tty
        self.enabled = enabled and total > 0
        self._started = clock()
        self._shown_at = self._started
        self._width = 0

    def step(self, *, failed: bool = False) -> None:
        self.done += 1
        self.failed += failed
        if not self.enabled:
            return
        now = self._clock()
        last = self.done >= self.total
        if last and not self._tty:
            return  # a log needs no last line: the report that follows counts every call
        if not last and now - self._shown_at < (REDRAW_S if self._tty else PLAIN_S):
            return
        self._shown_at = now
        self._show(now, last)

    def line(self, now: float | None = None) -> str:
        """The progress as one line: ``12/40 calls, 3.1/s, 2 failed, about 9 s left``."""
        elapsed = (self._clock() if now is None else now) - self._started
        parts = [f"{self.done}/{self.total} calls"]
        if elapsed > 0 and self.done:
            parts.append(f"{self.done / elapsed:.1f}/s")
        parts.append(f"{self.failed} failed")
        if self.done >= self.total:
            parts.append(f"done in {_duration(elapsed)}")
        elif self.done and elapsed > 0:
            left = (self.total - self.done) * elapsed / self.done
            parts.append(f"about {_duration(left)} left")
        return ", ".join(parts)

    def _show(self, now: float, last: bool) -> None:
        text = self.line(now)
        if self._tty:
            filled = int(20 * self.done / max(1, self.total))
            shown = f"[{'#' * filled}{'.' * (20 - filled)}] {text}"
            pad = " " * max(0, self._width - len(shown))  # a shorter line covers the last
            self._width = len(shown)
            self._stream.write(f"\r{shown}{pad}" + ("\n" if last else ""))
        else:
            self._stream.write(f"assay: {text}\n")
        self._stream.flush()
