"""The ollama provider (native /api/chat) against a loopback server that speaks Ollama's chat
API as Ollama does (tests.helpers.fake_ollama: NDJSON streaming unless ``stream: false``): the
request (messages, ``stream: false``, ``options``), the answer with its counts and
done_reason, 5xx retried, a model not pulled reported in Ollama's words."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import httpx
import pytest

from assay.errors import ConfigError
from assay.models._candidates_file import load_candidates_file
from assay.models._runner import Call, Outcome, RunStats, run_calls
from assay.models.providers import PROVIDER_TYPES, ProviderConfig
from tests.helpers.fake_ollama import FakeOllama


@pytest.fixture
def server() -> Iterator[FakeOllama]:
    with FakeOllama() as s:
        yield s


def run(calls: Sequence[Call]) -> tuple[list[Outcome], RunStats]:
    return asyncio.run(run_calls(calls, cache=None, max_concurrency=4, sleep=[].append, seed=7))


def ollama(server: FakeOllama, model: str = "echo", **settings: Any) -> ProviderConfig:
    return ProviderConfig(type="ollama", base_url=server.url, model=model, **settings)


def call(config: ProviderConfig, prompt: str = "one two", messages: Any = None) -> Call:
    return Call("cand", "g1", 0, prompt, config, messages=messages)


def test_registered_as_a_built_in_type_with_the_local_default() -> None:
    from assay.models.providers.ollama import OLLAMA_URL

    assert "ollama" in PROVIDER_TYPES
    assert OLLAMA_URL == "http://localhost:11434"


def test_the_fake_streams_ndjson_unless_asked_not_to(server: FakeOllama) -> None:
    # The wire format the provider opts out of, as Ollama sends it by default.
    body = {"model": "echo", "messages": [{"role": "user", "content": "a b"}]}
    response = httpx.post(f"{server.url}/api/chat", json=body)
    assert response.headers["transfer-encoding"] == "chunked"
    lines = [json.loads(line) for line in response.text.splitlines()]
    assert "".join(line["message"]["content"] for line in lines) == "echo: a b"
    assert [line["done"] for line in lines] == [False, False, False, True]


def test_request_shape_answer_counts_and_cost(server: FakeOllama) -> None:
    config = ollama(
        server,
        temperature=0.4,
        max_tokens=30,
        top_p=0.5,
        seed=9,
        stop=("x",),
        cost_per_1k_output=1.0,
    )
    messages = (("system", "S."), ("user", "a b c"))
    [outcome], stats = run([call(config, messages=messages)])
    completion = outcome.completion
    assert completion is not None, outcome.error
    assert completion.text == "echo: a b c"
    assert (completion.input_tokens, completion.output_tokens) == (3, 4)
    assert completion.finish_reason == "stop"
    assert stats.cost_usd == pytest.approx(4 / 1000)
    [seen] = server.seen
    assert seen.path == "/api/chat"
    assert "authorization" not in seen.headers
    assert seen.json == {
        "model": "echo",
        "messages": [{"role": "system", "content": "S."}, {"role": "user", "content": "a b c"}],
        "stream": False,
        "options": {"temperature": 0.4, "num_predict": 30, "top_p": 0.5, "seed": 9, "stop": ["x"]},
    }


def test_done_reason_length_is_the_finish_reason(server: FakeOllama) -> None:
    [outcome], _ = run([call(ollama(server, "length"))])
    assert outcome.completion is not None and outcome.completion.finish_reason == "length"


def test_a_5xx_is_retried_and_a_missing_model_is_final(server: FakeOllama) -> None:
    [flaky], stats = run([call(ollama(server, "flaky-500"))])
    assert flaky.completion is not None and stats.attempts == 3
    [missing], stats = run([call(ollama(server, "missing"))])
    assert missing.error is not None
    assert (
        "request rejected (404): model 'missing' not found, try pulling it first" in missing.error
    )
    assert stats.attempts == 1


def test_an_api_key_env_is_sent_as_a_bearer(
    server: FakeOllama, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASSAY_TEST_OLLAMA_KEY", "proxy-key")
    run([call(ollama(server, api_key_env="ASSAY_TEST_OLLAMA_KEY"))])
    assert server.seen[0].headers["authorization"] == "Bearer proxy-key"


def test_a_missing_model_setting_names_the_field(tmp_path: Path) -> None:
    path = tmp_path / "cands.yaml"
    path.write_text(
        "provider: {type: ollama}\ncandidates:\n  - {id: a, prompt: p}\n", encoding="utf-8"
    )
    with pytest.raises(ConfigError) as info:
        load_candidates_file(path)
    assert (info.value.source, info.value.field) == (str(path), "provider.model")


def test_no_max_tokens_in_the_file_gets_the_default_and_a_note(tmp_path: Path) -> None:
    # As for openai and anthropic: a model that misses its stop token would otherwise
    # generate until the timeout.
    path = tmp_path / "cands.yaml"
    path.write_text(
        "provider: {type: ollama, model: m}\ncandidates:\n  - {id: a, prompt: p}\n",
        encoding="utf-8",
    )
    spec = load_candidates_file(path)
    assert spec.candidates[0].provider.max_tokens == 1024
    assert spec.defaulted == ("a",)
