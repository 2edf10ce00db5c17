"""Honest call counts: a call that failed after its retries was made all the same, so ``made``
counts it and ``errors`` says how many of those failed; the text report says the same."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.cli import run_cli
from tests.helpers.fake_openai import FakeOpenAI, fake_openai


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with fake_openai() as s:
        yield s


def _project(root: Path, server: FakeOpenAI) -> list[str]:
    goldens = [
        {"id": "fine", "input": "hello", "asserts": ["contains:hello"]},
        {"id": "rejected", "input": "REJECT this", "asserts": ["contains:this"]},
    ]
    (root / "g.jsonl").write_text("".join(json.dumps(g) + "\n" for g in goldens))
    provider = {"type": "openai", "base_url": server.url, "model": "picky", "max_tokens": 8}
    provider["api_key_env"] = "K"
    candidates = {"provider": provider, "candidates": [{"id": "c", "prompt": "{{ input }}"}]}
    (root / "c.yaml").write_text(json.dumps(candidates))
    return ["eval", "g.jsonl", "--candidates", "c.yaml"]


def test_a_failed_call_counts_as_made_and_as_failed(
    server: FakeOpenAI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("K", "key")
    args = _project(tmp_path, server)
    code, out, err = run_cli([*args, "--json"], tmp_path)
    assert code == 1, err  # an error result, with max_error_rate 0: the run cannot decide
    calls = json.loads(out)["summary"]["model_calls"]
    # Two calls were sent (the 400 is not retried): both made, one of them failed.
    assert (calls["made"], calls["errors"], calls["cache_hits"]) == (2, 1, 0)
    assert server.total == 2
    # Again: the good answer comes from the cache, the failed call is made again.
    code, out, err = run_cli(args, tmp_path)
    assert code == 1, err
    assert "calls: 1 made (1 failed), 1 from the cache;" in out
    assert server.total == 3
