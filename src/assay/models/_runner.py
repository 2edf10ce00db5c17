"""The runner: every (candidate, golden, repeat) call, bounded, retried, cached.

- Concurrency: at most ``max_concurrency`` calls in flight overall (workers pulling from one
  counter; no task per call) and at most each provider's own ``max_concurrency``.
- Retries: 429 (honouring Retry-After), 5xx and connection errors are retried with exponential
  backoff and full jitter, up to ``max_retries``; a timeout once at most; other 4xx never are.
- Cache: a hit makes no call; only successes are stored, as soon as they arrive, so an
  interrupted run keeps everything that finished and ``--resume`` continues from there. A hit
  keeps the latency measured when its answer was made, and its cost at the config's prices.
- Accounting: tokens and cost from the provider's usage fields.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.errors import ConfigError
from assay.models._cache import OutputCache, cache_key, provider_identity
from assay.models._calls import CALL_WATCHERS, Call, CallEnded, Outcome
from assay.models._pool import gather_or_cancel
from assay.models._progress import Progress
from assay.models.providers import (
    Provider,
    ProviderConfig,
    ProviderError,
    ProviderTimeout,
    make_provider,
)

BACKOFF_BASE_S = 0.5
BACKOFF_CAP_S = 30.0


@dataclass(slots=True)
class RunStats:
    made: int = 0
    cache_hits: int = 0
    attempts: int = 0
    errors: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    by_provider: dict[str, int] = field(default_factory=dict)

    def add(self, other: RunStats) -> None:
        for name in _COUNTS:
            setattr(self, name, getattr(self, name) + getattr(other, name))
        for name, count in other.by_provider.items():
            self.by_provider[name] = self.by_provider.get(name, 0) + count

    def to_dict(self) -> dict[str, object]:
        return {name: getattr(self, name) for name in _COUNTS}


# RunStats' counters, in the order to_dict writes them (by_provider is not one).
_COUNTS = ("made", "cache_hits", "attempts", "errors", "input_tokens", "output_tokens", "cost_usd")


def backoff_delay(attempt: int, retry_after: float | None, rng: random.Random) -> float:
    """Retry-After when the server gave one, else capped exponential backoff, full jitter."""
    if retry_after is not None:
        return min(retry_after, BACKOFF_CAP_S * 4)
    return rng.uniform(0, min(BACKOFF_CAP_S, BACKOFF_BASE_S * 2**attempt))


async def run_calls(
    calls: Sequence[Call],
    *,
    cache: OutputCache | None,
    max_concurrency: int,
    progress: bool = False,
    sleep: Callable[[float], object] | None = None,
    seed: int | None = None,
    accept: Callable[[str], bool] | None = None,
    root: Path | None = None,
) -> tuple[list[Outcome], RunStats]:
    """Make every call (or read it from the cache); outcomes are in ``calls`` order.

    ``accept`` says whether a completion is usable; unusable ones (e.g. a judge reply with no
    verdict) are returned but never cached, like errors. ``root`` is the project root, where
    a python provider's module is found (default: the working directory).
    """
    runner = _Runner(cache, accept, root, random.Random(seed), sleep or asyncio.sleep)
    outcomes: list[Outcome | None] = [None] * len(calls)
    bar = Progress(len(calls), progress)
    next_index = 0

    async def worker() -> None:
        nonlocal next_index
        while next_index < len(calls):
            index = next_index
            next_index += 1
            outcome = outcomes[index] = await runner.one(calls[index])
            bar.step(failed=outcome.completion is None)
            for watch in CALL_WATCHERS:
                watch(CallEnded(bar.done, len(calls), calls[index], outcome))

    try:
        workers = [asyncio.ensure_future(worker()) for _ in range(min(max_concurrency, len(calls)))]
        await gather_or_cancel(workers)
    finally:
        for provider in runner.providers.values():
            await provider.aclose()
    return [o if o is not None else Outcome(None, "not run") for o in outcomes], runner.stats


@dataclass
class _Runner:
    """One run's calls: its providers (each made once, with its own concurrency limit), the
    cache, the retries, and the counts."""

    cache: OutputCache | None
    accept: Callable[[str], bool] | None
    root: Path | None
    rng: random.Random
    pause: Callable[[float], object]
    stats: RunStats = field(default_factory=RunStats)
    providers: dict[ProviderConfig, Provider] = field(default_factory=dict)
    limits: dict[ProviderConfig, asyncio.Semaphore] = field(default_factory=dict)
    identities: dict[ProviderConfig, dict[str, Any]] = field(default_factory=dict)

    async def one(self, call: Call) -> Outcome:
        """One call's outcome: from the cache (a usable hit), else made, retried as it may be."""
        cache = self.cache
        if cache is None:
            return await self._made(call)
        identity = self._identity_of(call.config)
        key = cache_key(
            call.config, call.cache_prompt(), call.repeat, call.purpose, identity=identity
        )
        found = cache.lookup(key)
        if found is not None and self._usable(found[0].text):
            hit, latency_ms = found
            self.stats.cache_hits += 1
            cost_usd = hit.cost(call.config)
            return Outcome(hit, cached=True, latency_ms=latency_ms, cost_usd=cost_usd)
        outcome = await self._made(call)
        completion = outcome.completion
        if completion is not None and self._usable(completion.text):
            cache.put(key, completion, outcome.latency_ms)  # at once: an interrupted run keeps it
        return outcome

    def _usable(self, text: str) -> bool:
        return self.accept is None or self.accept(text)

    async def _made(self, call: Call) -> Outcome:
        """The call made, retried on what may pass (429, 5xx, a connection error: a timeout
        once at most), with backoff; its tokens and cost counted."""
        provider, limit = self._provider_for(call.config)
        # A chat call goes to a chat provider as messages, to any other as the flattened text.
        chat = getattr(provider, "complete_messages", None) if call.messages is not None else None
        # A provider called with the golden (its vars) gets it, a chat call's prompt flattened.
        with_context = (
            getattr(provider, "complete_with_context", None) if call.context is not None else None
        )
        stats = self.stats
        attempt = timeouts = 0
        while True:
            attempt += 1
            stats.attempts += 1
            stats.by_provider[call.config.type] = stats.by_provider.get(call.config.type, 0) + 1
            try:
                async with limit:
                    started = time.perf_counter()  # inside the limit: waiting is not latency
                    if with_context is not None:
                        completion = await with_context(call.prompt, call.context)
                    elif chat is not None:
                        completion = await chat(call.messages)
                    else:
                        completion = await provider.complete(call.prompt)
                    latency_ms = (time.perf_counter() - started) * 1000
            except ProviderError as exc:
                timeouts += isinstance(exc, ProviderTimeout)
                # A timeout is retried once at most: a model that generates until the timeout
                # (no max_tokens, a missed stop token) would use every retry the same way.
                out_of_time = isinstance(exc, ProviderTimeout) and timeouts > 1
                if not exc.retryable or out_of_time or attempt > call.config.max_retries:
                    # A call that failed was made all the same: made counts every call sent.
                    stats.made += 1
                    stats.errors += 1
                    return Outcome(None, f"{exc} after {attempt} attempt(s)", attempts=attempt)
                result = self.pause(backoff_delay(attempt - 1, exc.retry_after, self.rng))
                if asyncio.iscoroutine(result):
                    await result
                continue
            stats.made += 1
            stats.input_tokens += completion.input_tokens
            stats.output_tokens += completion.output_tokens
            cost_usd = completion.cost(call.config)
            stats.cost_usd += cost_usd
            return Outcome(completion, attempts=attempt, latency_ms=latency_ms, cost_usd=cost_usd)

    def _provider_for(self, config: ProviderConfig) -> tuple[Provider, asyncio.Semaphore]:
        if config not in self.providers:
            try:
                self.providers[config] = make_provider(config, root=self.root)
            except (ValueError, ImportError) as exc:
                raise _cannot_start(config, exc) from None
            self.limits[config] = asyncio.Semaphore(config.max_concurrency)
        return self.providers[config], self.limits[config]

    def _identity_of(self, config: ProviderConfig) -> dict[str, Any]:
        # Once per provider and run: a python provider's reads its module's file, and every
        # call of the run must be keyed by the same code.
        if config not in self.identities:
            try:
                self.identities[config] = provider_identity(config, self.root)
            except (ValueError, ImportError) as exc:
                raise _cannot_start(config, exc) from None
        return self.identities[config]


def _cannot_start(config: ProviderConfig, exc: Exception) -> ConfigError:
    # A provider that cannot start (missing API key variable, unimportable function) is a
    # configuration error for the whole run, not a failed call.
    setting = getattr(exc, "setting", None)  # the setting at fault, if named
    return ConfigError(
        f"the {config.type} provider cannot start: {exc}",
        field=f"provider.{setting}" if setting else "provider",
    )
