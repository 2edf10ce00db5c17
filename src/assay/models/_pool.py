"""Bounded worker pools: the one way assay runs many awaitables at once."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence


async def gather_or_cancel(tasks: Sequence[asyncio.Future[None]]) -> None:
    """Wait for every task; on the first failure (or cancellation) cancel the rest, let them
    finish unwinding, and re-raise: no worker outlives the pool."""
    try:
        await asyncio.gather(*tasks)
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
