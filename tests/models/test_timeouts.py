"""A call that times out is retried once at most (a model generating until the timeout would
spend every retry the same way: one golden took 40 s at timeout 20 s, five minutes at the
defaults); other retryable failures keep their full budget."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from assay.models import ProviderConfig
from assay.models._runner import Call, run_calls

MODULE = """
import asyncio

CALLS = []


async def slow(prompt):
    CALLS.append(prompt)
    await asyncio.sleep(5)
    return "late"
"""


def test_a_timeout_is_retried_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "slowprov.py").write_text(MODULE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "slowprov", raising=False)
    config = ProviderConfig(type="python", function="slowprov:slow", timeout_s=0.05, max_retries=4)
    calls = [Call("a", "g", 0, "q", config)]
    outcomes, stats = asyncio.run(
        run_calls(calls, cache=None, max_concurrency=1, sleep=lambda _: None)
    )
    import slowprov  # type: ignore[import-not-found]

    assert len(slowprov.CALLS) == 2
    assert stats.attempts == 2
    assert outcomes[0].error == "the function timed out after 0.05 s after 2 attempt(s)"
