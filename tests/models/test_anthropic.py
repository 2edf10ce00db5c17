"""The anthropic provider: against a loopback fake Messages API server, at the provider level
(through run_calls) and end to end (``assay eval --candidates``). Request shape and headers,
text blocks, usage, stop_reason, retries (429 and 529 honouring retry-after), final 4xx errors
keeping the server's message, malformed bodies, the defaults, config errors naming the field,
and the API key appearing nowhere but in its header."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from assay.errors import ConfigError
from assay.models._candidates_file import load_candidates_file
from assay.models._runner import Call, Outcome, RunStats, run_calls
from assay.models.providers import PROVIDER_TYPES, ProviderConfig
from tests.helpers.cli import run_cli
from tests.helpers.fake_anthropic import FakeAnthropic, fake_anthropic

KEY = "sk-ant-loopback-SECRET-42"


@pytest.fixture
def server() -> Iterator[FakeAnthropic]:
    with fake_anthropic() as s:
        yield s


def anthropic(server: FakeAnthropic, model: str, **settings: Any) -> ProviderConfig:
    return ProviderConfig(type="anthropic", base_url=server.url, model=model, **settings)


def run(
    calls: Sequence[Call], *, delays: list[float] | None = None
) -> tuple[list[Outcome], RunStats]:
    """run_calls without a cache, recording every backoff delay instead of sleeping it."""
    recorded = delays if delays is not None else []
    return asyncio.run(
        run_calls(calls, cache=None, max_concurrency=4, sleep=recorded.append, seed=7)
    )


def call(
    config: ProviderConfig,
    prompt: str = "one two three",
    messages: tuple[tuple[str, str], ...] | None = None,
) -> Call:
    return Call("cand", "g1", 0, prompt, config, messages=messages)


# --------------------------------------------------------------------------- success


def test_registered_as_a_built_in_type() -> None:
    assert "anthropic" in PROVIDER_TYPES


def test_a_prompt_is_one_user_message_with_the_key_version_and_default_max_tokens(
    server: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASSAY_TEST_ANTHROPIC_KEY", KEY)
    server.api_key = KEY
    config = anthropic(
        server, "echo", api_key_env="ASSAY_TEST_ANTHROPIC_KEY", cost_per_1k_input=1.0
    )
    outcomes, stats = run([call(config)])
    [outcome] = outcomes
    assert outcome.error is None
    assert outcome.completion is not None
    assert outcome.completion.text == "echo: one two three"
    assert (outcome.completion.input_tokens, outcome.completion.output_tokens) == (3, 4)
    assert outcome.completion.finish_reason == "end_turn"
    assert stats.cost_usd == pytest.approx(3 / 1000)
    [seen] = server.seen
    assert seen.path == "/v1/messages"
    assert seen.body == {
        "model": "echo",
        "max_tokens": 1024,
        "messages": [{"role": "user", "content": "one two three"}],
        "temperature": 0.0,
    }
    assert seen.headers["x-api-key"] == KEY
    assert seen.headers["anthropic-version"] == "2023-06-01"
    assert "authorization" not in seen.headers


def test_system_goes_top_level_and_sampling_settings_are_sent(server: FakeAnthropic) -> None:
    config = anthropic(server, "echo", max_tokens=64, temperature=0.7, top_p=0.9, stop=("END",))
    messages = (
        ("system", "Be terse."),
        ("user", "Capital of Italy?"),
        ("assistant", "Rome"),
        ("user", "And of France?"),
    )
    outcomes, _ = run([call(config, "flattened, unused", messages)])
    assert outcomes[0].completion is not None
    assert outcomes[0].completion.text == "echo: And of France?"
    [seen] = server.seen
    assert seen.body == {
        "model": "echo",
        "max_tokens": 64,
        "system": "Be terse.",
        "messages": [
            {"role": "user", "content": "Capital of Italy?"},
            {"role": "assistant", "content": "Rome"},
            {"role": "user", "content": "And of France?"},
        ],
        "temperature": 0.7,
        "top_p": 0.9,
        "stop_sequences": ["END"],
    }


def test_the_answer_is_the_text_blocks_joined(server: FakeAnthropic) -> None:
    outcomes, _ = run([call(anthropic(server, "blocks")), call(anthropic(server, "empty"))])
    assert [o.completion.text if o.completion else o.error for o in outcomes] == [
        "first second",
        "",
    ]


def test_stop_reason_max_tokens_is_the_finish_reason(server: FakeAnthropic) -> None:
    outcomes, _ = run([call(anthropic(server, "max-tokens", max_tokens=5))])
    assert outcomes[0].completion is not None
    assert outcomes[0].completion.finish_reason == "max_tokens"
    assert server.seen[0].body["max_tokens"] == 5


# --------------------------------------------------------------------------- errors and retries


def test_401_keeps_the_servers_message_and_is_not_retried(
    server: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    server.api_key = "the-right-key"
    monkeypatch.setenv("ASSAY_TEST_ANTHROPIC_KEY", KEY)
    delays: list[float] = []
    config = anthropic(server, "echo", api_key_env="ASSAY_TEST_ANTHROPIC_KEY", max_retries=4)
    outcomes, stats = run([call(config)], delays=delays)
    assert outcomes[0].error == "request rejected (401): invalid x-api-key after 1 attempt(s)"
    assert KEY not in outcomes[0].error
    assert server.total == 1
    assert delays == []
    assert stats.errors == 1


def test_400_is_not_retried(server: FakeAnthropic) -> None:
    outcomes, _ = run([call(anthropic(server, "bad-request", max_retries=3))])
    assert outcomes[0].error == "request rejected (400): scripted 400 after 1 attempt(s)"
    assert server.total == 1


def test_429_honours_retry_after_then_succeeds(server: FakeAnthropic) -> None:
    server.retry_after = "7"
    delays: list[float] = []
    outcomes, _ = run([call(anthropic(server, "flaky-429"))], delays=delays)
    assert outcomes[0].completion is not None
    assert outcomes[0].attempts == 3
    assert delays == [7.0, 7.0]


def test_529_overloaded_is_retried_honouring_retry_after(server: FakeAnthropic) -> None:
    server.retry_after = "2"
    delays: list[float] = []
    outcomes, _ = run([call(anthropic(server, "flaky-529"))], delays=delays)
    assert outcomes[0].completion is not None
    assert delays == [2.0, 2.0]


def test_529_exhausting_retries_names_overloaded_and_the_message(server: FakeAnthropic) -> None:
    server.retry_after = None
    delays: list[float] = []
    outcomes, _ = run([call(anthropic(server, "always-529", max_retries=2))], delays=delays)
    assert outcomes[0].error == "overloaded (529): Overloaded after 3 attempt(s)"
    assert server.total == 3
    assert len(delays) == 2


@pytest.mark.parametrize("model", ["malformed", "no-content"])
def test_a_malformed_body_is_retried_then_an_error(server: FakeAnthropic, model: str) -> None:
    outcomes, _ = run([call(anthropic(server, model, max_retries=1))])
    assert outcomes[0].error == "malformed response (no content list) after 2 attempt(s)"
    assert server.total == 2


# --------------------------------------------------------------------------- defaults


def test_defaults_the_official_endpoint_its_key_variable_and_max_tokens() -> None:
    config = ProviderConfig(type="anthropic", model="claude")
    assert config.base_url == "https://api.anthropic.com"
    assert config.api_key_env == "ANTHROPIC_API_KEY"
    assert config.max_tokens == 1024
    # Written out or left to the defaults: the same config, the same cache entries.
    assert config == ProviderConfig(
        type="anthropic",
        model="claude",
        base_url="https://api.anthropic.com",
        api_key_env="ANTHROPIC_API_KEY",
        max_tokens=1024,
    )


def test_another_endpoint_gets_no_key_unless_asked(
    server: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The Anthropic key is never sent to a base_url that is not Anthropic's unless api_key_env
    # says so.
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    config = anthropic(server, "echo")
    assert config.api_key_env is None
    outcomes, _ = run([call(config)])
    assert outcomes[0].completion is not None
    assert "x-api-key" not in server.seen[0].headers


def test_the_default_key_variable_unset_stops_the_run_before_any_request(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(ConfigError, match=r"ANTHROPIC_API_KEY \(api_key_env\) is not set"):
        run([call(ProviderConfig(type="anthropic", model="claude"))])


def test_header_env_is_sent_and_a_missing_variable_is_an_error(
    server: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASSAY_TEST_GATEWAY_TOKEN", "gw-123")
    config = anthropic(
        server,
        "echo",
        headers=(("x-team", "evals"),),
        header_env=(("x-gateway-token", "ASSAY_TEST_GATEWAY_TOKEN"),),
    )
    outcomes, _ = run([call(config)])
    assert outcomes[0].completion is not None
    assert server.seen[0].headers["x-team"] == "evals"
    assert server.seen[0].headers["x-gateway-token"] == "gw-123"
    monkeypatch.delenv("ASSAY_TEST_GATEWAY_TOKEN")
    with pytest.raises(ConfigError) as info:
        run([call(config)])
    assert "ASSAY_TEST_GATEWAY_TOKEN (header_env.x-gateway-token) is not set" in str(info.value)
    assert info.value.field == "provider.header_env.x-gateway-token"


# --------------------------------------------------------------------------- config errors


@pytest.mark.parametrize(
    "settings, field",
    [
        ("seed: 1", "provider.seed"),
        ("response_format: {type: json_object}", "provider.response_format"),
        ("presence_penalty: 0.5", "provider.presence_penalty"),
        ("frequency_penalty: 0.5", "provider.frequency_penalty"),
        ("temperature: 1.5", "provider.temperature"),
        ("max_tokens: 0", "provider.max_tokens"),
        ("top_p: 1.5", "provider.top_p"),
        ("stop: []", "provider.stop"),
        ("headers: {x-api-key: sk-in-a-file}", "provider.headers.x-api-key"),
        ("api_key_env: K, header_env: {X-Api-Key: K2}", "provider.header_env.X-Api-Key"),
    ],
)
def test_settings_it_cannot_send_are_errors_naming_the_field(
    tmp_path: Path, settings: str, field: str
) -> None:
    path = tmp_path / "cands.yaml"
    path.write_text(
        f"provider: {{type: anthropic, model: m, {settings}}}\n"
        "candidates:\n  - {id: a, prompt: '{{ input }}'}\n",
        encoding="utf-8",
    )
    with pytest.raises(ConfigError) as info:
        load_candidates_file(path)
    assert info.value.source == str(path)
    assert info.value.field == field
    assert "sk-in-a-file" not in str(info.value)


# --------------------------------------------------------------------------- end to end

GOLDENS = (
    '{"id": "g1", "input": "hello", "asserts": ["contains:hello"]}\n'
    '{"id": "g2", "input": "world", "asserts": ["contains:world"]}\n'
)


def project(tmp_path: Path, server: FakeAnthropic, model: str, extra: str = "") -> list[str]:
    (tmp_path / "goldens.jsonl").write_text(GOLDENS, encoding="utf-8")
    (tmp_path / "cands.yaml").write_text(
        f"provider: {{type: anthropic, base_url: '{server.url}', model: {model}, "
        f"api_key_env: ASSAY_TEST_ANTHROPIC_KEY, max_retries: 2{extra}}}\n"
        "candidates:\n"
        "  - {id: plain, prompt: '{{ input }}'}\n"
        "  - {id: chat, system: 'Repeat the word.', prompt: 'Word: {{ input }}'}\n",
        encoding="utf-8",
    )
    return ["eval", "goldens.jsonl", "--candidates", "cands.yaml", "--json"]


def test_assay_run_end_to_end(
    server: FakeAnthropic, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASSAY_TEST_ANTHROPIC_KEY", KEY)
    server.api_key = KEY
    code, out, err = run_cli(project(tmp_path, server, "echo"), tmp_path)
    assert code == 0, err
    document = json.loads(out)
    assert {(r["candidate"], r["id"], r["status"]) for r in document["results"]} == {
        (c, g, "pass") for c in ("plain", "chat") for g in ("g1", "g2")
    }
    assert document["summary"]["model_calls"]["made"] == 4
    chat = [s.body for s in server.seen if "system" in s.body]
    assert len(chat) == 2
    assert {b["system"] for b in chat} == {"Repeat the word."}
    assert sorted(b["messages"][0]["content"] for b in chat) == ["Word: hello", "Word: world"]
    # The key went in its header and nowhere else: not the output, not the cache.
    assert KEY not in out + err
    for path in (tmp_path / ".assay" / "cache").iterdir():
        assert KEY.encode() not in path.read_bytes()
    # A second run reads everything from the cache.
    code, out, err = run_cli(project(tmp_path, server, "echo"), tmp_path)
    assert code == 0, err
    assert json.loads(out)["summary"]["model_calls"]["cache_hits"] == 4
    assert server.total == 4


def test_assay_run_with_a_rejected_key_is_an_error_result_with_the_servers_message(
    server: FakeAnthropic, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASSAY_TEST_ANTHROPIC_KEY", KEY)
    server.api_key = "another-key"
    code, out, err = run_cli([*project(tmp_path, server, "echo"), "--no-cache"], tmp_path)
    assert "Traceback" not in out + err
    assert code == 1, err  # every result an error: the run cannot decide
    results = json.loads(out)["results"]
    assert {r["status"] for r in results} == {"error"}
    notes = " ".join(n for r in results for n in r["notes"])
    assert "request rejected (401): invalid x-api-key" in notes
    assert KEY not in out + err
    assert server.total == 4  # never retried


def test_assay_run_retries_529_and_429(
    server: FakeAnthropic, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASSAY_TEST_ANTHROPIC_KEY", KEY)
    server.flaky_failures = 1
    for model in ("flaky-529", "flaky-429"):
        code, out, err = run_cli([*project(tmp_path, server, model), "--no-cache"], tmp_path)
        assert code == 0, err
        assert {r["status"] for r in json.loads(out)["results"]} == {"pass"}
    assert server.count("flaky-529") == 8  # 4 calls, each failed once
    assert server.count("flaky-429") == 8


def test_assay_run_a_cut_off_answer_carries_max_tokens(
    server: FakeAnthropic, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASSAY_TEST_ANTHROPIC_KEY", KEY)
    code, out, err = run_cli(
        [*project(tmp_path, server, "max-tokens", ", max_tokens: 3"), "--no-cache"], tmp_path
    )
    assert code == 0, err
    assert len(json.loads(out)["results"]) == 4
    assert {s.body["max_tokens"] for s in server.seen} == {3}


def test_assay_run_config_error_names_the_file_and_field(
    server: FakeAnthropic, tmp_path: Path
) -> None:
    code, out, err = run_cli(project(tmp_path, server, "echo", ", seed: 3"), tmp_path)
    assert code == 1
    assert out == ""
    assert "Traceback" not in err
    assert "cands.yaml" in err
    assert "field 'provider.seed'" in err
    assert "does not support 'seed'" in err
    assert server.total == 0
