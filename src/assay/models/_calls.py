"""One model call, its outcome, and who watches calls end besides the progress line.

A module of its own, light on purpose: every gate and eval registers a call watcher (``assay
view``'s live progress file) before it knows whether it will make a call at all, and a plain gate
must not import the runner (asyncio, the sqlite cache) just to say so.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from assay.models.providers import Completion, ProviderConfig


@dataclass(frozen=True, slots=True)
class Call:
    """One model call to make.

    Attributes:
        prompt: the prompt; for a chat call, its messages flattened into one text (what a
            provider without ``complete_messages`` receives).
        messages: a chat call's (role, content) pairs, None for a plain prompt.
        context: the golden, for a provider that is called with it (``takes_context``: the
            http provider, a promptfoo-style python provider), None for the others.
    """

    candidate: str
    golden: str
    repeat: int
    prompt: str
    config: ProviderConfig
    purpose: str = "output"
    messages: tuple[tuple[str, str], ...] | None = None
    context: Mapping[str, Any] | None = None

    def cache_prompt(self) -> str:
        """What the cache key reads as the prompt: the prompt itself for a plain call (so its
        entries are those of a prompt-only candidate), the canonical JSON of the messages for
        a chat call (so a different system prompt or turn is a different entry), and with the
        golden's context for a provider called with it (its request depends on the vars)."""
        if self.messages is None and self.context is None:
            return self.prompt
        material: dict[str, Any] = {"prompt": self.prompt}
        if self.messages is not None:
            material = {"messages": [[role, content] for role, content in self.messages]}
        if self.context is not None:
            material["context"] = self.context
        return json.dumps(
            material, ensure_ascii=False, separators=(",", ":"), sort_keys=True, default=str
        )


@dataclass(slots=True)
class Outcome:
    """One call's completion (None when it failed) and how it went: ``latency_ms`` is the
    successful attempt's wall time, ``cost_usd`` its tokens at the config's prices. A cache hit
    keeps both as the answer had them when it was made (the latency is stored with it; None
    for an entry written before latencies were kept), so a latency or cost assert gives a
    cached answer the verdict it gave the first time. Nothing spent on a hit counts in
    :class:`RunStats`."""

    completion: Completion | None
    error: str | None = None
    cached: bool = False
    attempts: int = 0
    latency_ms: float | None = None
    cost_usd: float | None = None


@dataclass(frozen=True, slots=True)
class CallEnded:
    """One call of a run has its outcome: ``done`` of the run's ``total`` calls so far."""

    done: int
    total: int
    call: Call
    outcome: Outcome


# Each is told of every call's end. The CLI adds one for a run's length.
CALL_WATCHERS: Final[list[Callable[[CallEnded], None]]] = []
