"""The replicate provider against a loopback server that speaks Replicate's predictions API
(tests.helpers.fake_replicate): the two creation routes (an official model, a version), the
bearer token and ``Prefer: wait``, the input fields, a prediction polled at ``urls.get`` until
it succeeds (and never at another host), the output list joined, the token counts, failed
predictions and Replicate's problem details, and polling bounded by ``timeout_s``."""

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
from tests.helpers.fake_replicate import FakeReplicate

TOKEN = "r8_loopbackSECRET"


@pytest.fixture
def server() -> Iterator[FakeReplicate]:
    with FakeReplicate() as s:
        yield s


@pytest.fixture(autouse=True)
def token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSAY_TEST_REPLICATE_TOKEN", TOKEN)
    monkeypatch.delenv("REPLICATE_API_TOKEN", raising=False)


def run(calls: Sequence[Call], delays: list[float] | None = None) -> tuple[list[Outcome], RunStats]:
    recorded = delays if delays is not None else []
    return asyncio.run(
        run_calls(calls, cache=None, max_concurrency=4, sleep=recorded.append, seed=7)
    )


def replicate(server: FakeReplicate, model: str = "meta/echo", **settings: Any) -> ProviderConfig:
    settings.setdefault("api_key_env", "ASSAY_TEST_REPLICATE_TOKEN")
    return ProviderConfig(type="replicate", base_url=f"{server.url}/v1", model=model, **settings)


def call(config: ProviderConfig, prompt: str = "one two", messages: Any = None) -> Call:
    return Call("cand", "g1", 0, prompt, config, messages=messages)


def test_registered_as_a_built_in_type() -> None:
    assert "replicate" in PROVIDER_TYPES


def test_an_official_model_with_prefer_wait_its_input_and_the_joined_output(
    server: FakeReplicate,
) -> None:
    server.token = TOKEN
    config = replicate(
        server,
        temperature=0.6,
        max_tokens=40,
        top_p=0.9,
        seed=5,
        stop=("A", "B"),
        cost_per_1k_input=1.0,
    )
    [outcome], stats = run([call(config, messages=(("system", "S."), ("user", "a b c")))])
    completion = outcome.completion
    assert completion is not None, outcome.error
    assert completion.text == "echo: a b c"  # the list of pieces, joined
    assert (completion.input_tokens, completion.output_tokens) == (3, 4)
    assert stats.cost_usd == pytest.approx(3 / 1000)
    [seen] = server.seen
    assert (seen.method, seen.path) == ("POST", "/v1/models/meta/echo/predictions")
    assert seen.headers["authorization"] == f"Bearer {TOKEN}"
    assert seen.headers["prefer"] == "wait"
    assert seen.json == {
        "input": {
            "prompt": "a b c",
            "system_prompt": "S.",
            "temperature": 0.6,
            "max_tokens": 40,
            "max_new_tokens": 40,
            "top_p": 0.9,
            "seed": 5,
            "stop_sequences": "A,B",
        }
    }


def test_a_version_goes_to_predictions_with_its_id(server: FakeReplicate) -> None:
    [outcome], _ = run([call(replicate(server, "acme/model:text"))])
    assert outcome.completion is not None and outcome.completion.text == "echo: one two"
    [seen] = server.seen
    assert seen.path == "/v1/predictions"
    assert seen.json["version"] == "text"


def test_a_slow_prediction_is_polled_at_urls_get_until_it_succeeds(server: FakeReplicate) -> None:
    server.polls = 3
    [outcome], stats = run([call(replicate(server, "meta/slow"))])
    assert outcome.completion is not None, outcome.error
    assert outcome.completion.text == "echo: one two"
    assert [s.method for s in server.seen] == ["POST", "GET", "GET", "GET"]
    assert {s.path for s in server.seen[1:]} == {"/v1/predictions/p1"}
    assert all(s.headers["authorization"] == f"Bearer {TOKEN}" for s in server.seen)
    assert stats.attempts == 1  # polling is one call


def test_a_urls_get_on_another_host_is_not_followed(server: FakeReplicate) -> None:
    # The fake's urls.get names api.elsewhere.invalid: following it would send the token
    # there. The provider polls base_url's predictions/{id} instead.
    server.polls = 1
    [outcome], _ = run([call(replicate(server, "meta/elsewhere"))])
    assert outcome.completion is not None, outcome.error
    assert [(s.method, s.path) for s in server.seen] == [
        ("POST", "/v1/models/meta/elsewhere/predictions"),
        ("GET", "/v1/predictions/p1"),
    ]


def test_polling_stops_at_timeout_s(server: FakeReplicate) -> None:
    server.polls = 1000
    [outcome], _ = run([call(replicate(server, "meta/slow", timeout_s=0.3, max_retries=0))])
    assert outcome.error is not None
    assert "the prediction was still processing after 0.3 s" in outcome.error


def test_a_failed_prediction_is_a_final_error_with_its_message(server: FakeReplicate) -> None:
    [outcome], stats = run([call(replicate(server, "meta/fails"))])
    assert outcome.error is not None
    assert "the prediction failed: CUDA out of memory" in outcome.error
    assert stats.attempts == 1


def test_problem_details_are_the_message_and_429_is_retried(server: FakeReplicate) -> None:
    [invalid], stats = run([call(replicate(server, "meta/invalid"))])
    assert invalid.error is not None
    assert "request rejected (422): input.top_k: Extra inputs are not permitted" in invalid.error
    assert stats.attempts == 1
    server.retry_after = "3"
    delays: list[float] = []
    [flaky], stats = run([call(replicate(server, "meta/flaky-429"))], delays)
    assert flaky.completion is not None and stats.attempts == 3
    assert delays == [3.0, 3.0]
    server.token = "another"
    [rejected], _ = run([call(replicate(server))])
    assert rejected.error is not None
    assert "(401): You did not pass a valid authentication token" in rejected.error


def test_the_default_endpoint_reads_replicate_api_token(
    server: FakeReplicate, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(
        ConfigError, match=r"REPLICATE_API_TOKEN \(api_key_env\) is not set"
    ) as info:
        run([call(ProviderConfig(type="replicate", model="meta/llama"))])
    assert info.value.field == "provider.api_key_env"
    monkeypatch.setenv("REPLICATE_API_TOKEN", TOKEN)
    local = ProviderConfig(type="replicate", base_url=f"{server.url}/v1", model="meta/echo")
    run([call(local)])
    assert "authorization" not in server.seen[0].headers


def test_settings_it_cannot_use_are_errors_naming_the_field(tmp_path: Path) -> None:
    path = tmp_path / "cands.yaml"
    for settings, field in (
        ("type: replicate", "provider.model"),
        ("type: replicate, model: m, presence_penalty: 1", "provider.presence_penalty"),
    ):
        path.write_text(
            f"provider: {{{settings}}}\ncandidates:\n  - {{id: a, prompt: p}}\n", encoding="utf-8"
        )
        with pytest.raises(ConfigError) as info:
            load_candidates_file(path)
        assert (info.value.source, info.value.field) == (str(path), field)
