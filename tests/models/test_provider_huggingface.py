"""The huggingface provider against a loopback server that speaks the text-generation
inference API (tests.helpers.fake_huggingface): the route, the bearer token, the
``{inputs, parameters}`` body (greedy decoding for temperature 0, which TGI requires; no
prompt echoed back), the loading 503 retried after ``estimated_time``, errors keeping the
API's ``error``, and the token read from HF_TOKEN only on Hugging Face's own endpoint."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from assay.errors import ConfigError
from assay.models._candidates_file import load_candidates_file
from assay.models._runner import Call, Outcome, RunStats, run_calls
from assay.models.providers import PROVIDER_TYPES, ProviderConfig
from tests.helpers.fake_huggingface import FakeHuggingFace

TOKEN = "hf_loopbackSECRET"


@pytest.fixture
def server() -> Iterator[FakeHuggingFace]:
    with FakeHuggingFace() as s:
        yield s


@pytest.fixture(autouse=True)
def token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSAY_TEST_HF_TOKEN", TOKEN)
    monkeypatch.delenv("HF_TOKEN", raising=False)


def run(calls: Sequence[Call], delays: list[float] | None = None) -> tuple[list[Outcome], RunStats]:
    recorded = delays if delays is not None else []
    return asyncio.run(
        run_calls(calls, cache=None, max_concurrency=4, sleep=recorded.append, seed=7)
    )


def hf(server: FakeHuggingFace, model: str = "acme/echo", **settings: Any) -> Call:
    settings.setdefault("api_key_env", "ASSAY_TEST_HF_TOKEN")
    config = ProviderConfig(type="huggingface", base_url=server.url, model=model, **settings)
    return Call("cand", "g1", 0, "one two", config)


def test_registered_as_a_built_in_type() -> None:
    assert "huggingface" in PROVIDER_TYPES


def test_request_shape_and_token(server: FakeHuggingFace) -> None:
    server.token = TOKEN
    [outcome], _ = run([hf(server, temperature=0.7, max_tokens=20, top_p=0.9, stop=("#",))])
    assert outcome.completion is not None, outcome.error
    assert outcome.completion.text == "echo: one two"  # return_full_text false: no prompt
    [seen] = server.seen
    assert seen.path == "/models/acme/echo"
    assert seen.headers["authorization"] == f"Bearer {TOKEN}"
    assert seen.json == {
        "inputs": "one two",
        "parameters": {
            "return_full_text": False,
            "do_sample": True,
            "temperature": 0.7,
            "max_new_tokens": 20,
            "top_p": 0.9,
            "stop": ["#"],
        },
    }


def test_temperature_zero_is_sent_as_greedy_decoding(server: FakeHuggingFace) -> None:
    [outcome], _ = run([hf(server)])
    assert outcome.completion is not None, outcome.error
    assert server.seen[0].json["parameters"] == {"return_full_text": False, "do_sample": False}


def test_a_loading_model_is_retried_after_its_estimated_time(server: FakeHuggingFace) -> None:
    server.estimated_time = 7.5
    delays: list[float] = []
    [outcome], stats = run([hf(server, "acme/loading")], delays)
    assert outcome.completion is not None, outcome.error
    assert stats.attempts == 3
    assert delays == [7.5, 7.5]


def test_rate_limits_are_retried_and_errors_keep_the_apis_words(server: FakeHuggingFace) -> None:
    [flaky], stats = run([hf(server, "acme/flaky-429")])
    assert flaky.completion is not None and stats.attempts == 3
    [missing], stats = run([hf(server, "acme/not-found")])
    assert missing.error is not None
    assert "request rejected (404): Model acme/not-found not found" in missing.error
    assert stats.attempts == 1
    [in_200], _ = run([hf(server, "acme/error-200")])
    assert in_200.error is not None and "scripted error in a 200" in in_200.error
    server.token = "another"
    [rejected], _ = run([hf(server)])
    assert rejected.error is not None and "(401): Invalid credentials" in rejected.error
    assert TOKEN not in rejected.error


def test_the_default_endpoint_reads_hf_token_and_no_other_endpoint_does(
    server: FakeHuggingFace, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = ProviderConfig(type="huggingface", model="acme/echo")
    with pytest.raises(ConfigError, match=r"HF_TOKEN \(api_key_env\) is not set") as info:
        run([Call("c", "g", 0, "p", config)])
    assert info.value.field == "provider.api_key_env"
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    local = ProviderConfig(type="huggingface", base_url=server.url, model="acme/echo")
    run([Call("c", "g", 0, "p", local)])
    assert "authorization" not in server.seen[0].headers


@pytest.mark.parametrize(
    "settings, field",
    [
        ("type: huggingface", "provider.model"),
        ("type: huggingface, model: m, frequency_penalty: 1", "provider.frequency_penalty"),
        ("type: huggingface, model: m, region: r", "provider.region"),
    ],
)
def test_settings_it_cannot_use_are_errors_naming_the_field(
    tmp_path: Path, settings: str, field: str
) -> None:
    path = tmp_path / "cands.yaml"
    path.write_text(
        f"provider: {{{settings}}}\ncandidates:\n  - {{id: a, prompt: '{{{{ input }}}}'}}\n",
        encoding="utf-8",
    )
    with pytest.raises(ConfigError) as info:
        load_candidates_file(path)
    assert (info.value.source, info.value.field) == (str(path), field)
