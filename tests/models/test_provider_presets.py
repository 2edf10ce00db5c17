"""The OpenAI-compatible family by name (presets over the openai provider) and Azure OpenAI,
each against a loopback server: the vendor's default endpoint and key variable, the request's
path, query, body and auth header, the vendor's error bodies, a 429 retried, and the one line
a missing key variable or a missing setting gives, naming the candidates file and the field."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from assay.errors import ConfigError
from assay.models._candidates_file import load_candidates_file
from assay.models._runner import Call, Outcome, RunStats, run_calls
from assay.models.providers import PROVIDER_TYPES, ProviderConfig
from assay.models.providers._base import DEFAULT_BASE_URLS, DEFAULT_KEY_ENVS
from tests.helpers.cli import run_cli
from tests.helpers.fake_http import FakeHTTP, Request
from tests.helpers.fake_openai import FakeOpenAI, fake_openai

# Each vendor's documented chat-completions root and key variable (see docs/providers.md).
PRESETS = {
    "openrouter": ("https://openrouter.ai/api/v1", "OPENROUTER_API_KEY"),
    "perplexity": ("https://api.perplexity.ai", "PERPLEXITY_API_KEY"),
    "groq": ("https://api.groq.com/openai/v1", "GROQ_API_KEY"),
    "mistral": ("https://api.mistral.ai/v1", "MISTRAL_API_KEY"),
    "cerebras": ("https://api.cerebras.ai/v1", "CEREBRAS_API_KEY"),
    "together": ("https://api.together.xyz/v1", "TOGETHER_API_KEY"),
    "fireworks": ("https://api.fireworks.ai/inference/v1", "FIREWORKS_API_KEY"),
    "deepseek": ("https://api.deepseek.com", "DEEPSEEK_API_KEY"),
}
LOCAL = {"vllm": "http://localhost:8000/v1", "ollama-openai": "http://localhost:11434/v1"}


def run(*calls: Call) -> tuple[list[Outcome], RunStats]:
    delays: list[float] = []
    return asyncio.run(run_calls(calls, cache=None, max_concurrency=4, sleep=delays.append))


def call(config: ProviderConfig, prompt: str = "one two three") -> Call:
    return Call("cand", "g1", 0, prompt, config)


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with fake_openai() as s:
        yield s


# --------------------------------------------------------------------------- defaults


@pytest.mark.parametrize("kind", sorted(PRESETS))
def test_a_preset_defaults_to_its_vendors_endpoint_and_key_variable(kind: str) -> None:
    url, key_env = PRESETS[kind]
    config = ProviderConfig(type=kind, model="m")
    assert (config.base_url, config.api_key_env) == (url, key_env)
    assert kind in PROVIDER_TYPES


@pytest.mark.parametrize("kind", sorted(PRESETS))
def test_a_presets_key_is_not_sent_to_another_endpoint_unasked(kind: str) -> None:
    config = ProviderConfig(type=kind, model="m", base_url="http://127.0.0.1:9/v1")
    assert config.api_key_env is None


@pytest.mark.parametrize("kind", sorted(LOCAL))
def test_a_local_preset_has_its_default_address_and_no_key(kind: str) -> None:
    config = ProviderConfig(type=kind, model="m")
    assert (config.base_url, config.api_key_env) == (LOCAL[kind], None)
    assert kind not in DEFAULT_KEY_ENVS and DEFAULT_BASE_URLS[kind] == LOCAL[kind]


def test_azure_reads_its_key_variable_only_for_an_azure_host() -> None:
    on_azure = ProviderConfig(type="azure", base_url="https://r1.openai.azure.com", deployment="d")
    assert on_azure.api_key_env == "AZURE_OPENAI_API_KEY"
    assert on_azure.api_version == "2024-10-21"
    elsewhere = ProviderConfig(type="azure", base_url="https://evil.example.com", deployment="d")
    assert elsewhere.api_key_env is None
    plain_http = ProviderConfig(type="azure", base_url="http://r1.openai.azure.com", deployment="d")
    assert plain_http.api_key_env is None


# --------------------------------------------------------------------------- wire format


@pytest.mark.parametrize("kind", [*sorted(PRESETS), *sorted(LOCAL)])
def test_a_preset_speaks_chat_completions_with_a_bearer_key(
    kind: str, server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASSAY_TEST_KEY", "k-123")
    config = ProviderConfig(
        type=kind, base_url=server.url, model="echo", api_key_env="ASSAY_TEST_KEY", seed=7
    )
    [outcome], stats = run(call(config))
    assert outcome.completion is not None and outcome.completion.text == "echo: one two three"
    assert (stats.input_tokens, stats.output_tokens) == (3, 4)
    [seen] = server.seen
    assert seen.authorization == "Bearer k-123"
    assert seen.body["messages"] == [{"role": "user", "content": "one two three"}]
    # Mistral names the sampling seed random_seed; every other vendor takes OpenAI's name.
    seed_field = "random_seed" if kind == "mistral" else "seed"
    assert seen.body[seed_field] == 7
    assert ("seed" in seen.body) is (kind != "mistral")


@pytest.mark.parametrize("kind", ["groq", "deepseek", "vllm"])
def test_a_preset_retries_a_429_and_reports_the_vendors_error_body(
    kind: str, server: FakeOpenAI
) -> None:
    retried = ProviderConfig(type=kind, base_url=server.url, model="flaky-429", max_retries=3)
    rejected = ProviderConfig(type=kind, base_url=server.url, model="bad-request")
    failing = ProviderConfig(type=kind, base_url=server.url, model="always-500", max_retries=1)
    outcomes, _ = run(call(retried), call(rejected), call(failing))
    assert outcomes[0].completion is not None and outcomes[0].attempts == 3
    assert outcomes[1].error == "request rejected (400): scripted 400 after 1 attempt(s)"
    assert outcomes[2].error == "server error (500): scripted 500 after 2 attempt(s)"


@pytest.mark.parametrize("kind", sorted(PRESETS))
def test_a_preset_posts_to_chat_completions_under_its_vendors_root(kind: str) -> None:
    # The vendor's root path (perplexity's and deepseek's have no /v1) on a loopback server.
    root_path = urlsplit(PRESETS[kind][0]).path
    with FakeHTTP() as server:
        server.reply = lambda r: (200, {"choices": [{"message": {"content": "ok"}}]}, {})
        config = ProviderConfig(type=kind, base_url=server.url(root_path), model="m")
        [outcome], _ = run(call(config))
        [seen] = server.seen
    assert outcome.completion is not None and outcome.completion.text == "ok"
    assert (seen.method, seen.path, seen.query) == ("POST", f"{root_path}/chat/completions", {})
    assert "authorization" not in seen.headers  # not the vendor's endpoint: no key unasked


# --------------------------------------------------------------------------- azure


def azure_reply(request: Request) -> tuple[int, Any, dict[str, str]]:
    if request.headers.get("api-key") != "az-key":
        return 401, {"error": {"code": "401", "message": "Access denied due to invalid key"}}, {}
    content = request.json["messages"][-1]["content"]
    if content == "busy":
        return (
            429,
            {"error": {"code": "429", "message": "Rate limit is exceeded"}},
            {"Retry-After": "0"},
        )
    body = {
        "choices": [{"message": {"role": "assistant", "content": f"az: {content}"}}],
        "usage": {"prompt_tokens": 2, "completion_tokens": 5},
    }
    return 200, body, {}


def test_azure_posts_to_the_deployment_url_with_the_api_version_and_api_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ASSAY_AZURE_KEY", "az-key")
    with FakeHTTP() as server:
        server.reply = azure_reply
        config = ProviderConfig(
            type="azure",
            base_url=server.url(""),
            deployment="gpt 4o/mini",
            api_version="2024-06-01",
            api_key_env="ASSAY_AZURE_KEY",
            max_tokens=16,
        )
        [outcome], stats = run(call(config, "hello"))
        assert outcome.completion is not None and outcome.completion.text == "az: hello"
        assert (stats.input_tokens, stats.output_tokens) == (2, 5)
        [seen] = server.seen
    assert (seen.method, seen.path) == (
        "POST",
        "/openai/deployments/gpt%204o%2Fmini/chat/completions",
    )
    assert seen.query == {"api-version": ["2024-06-01"]}
    assert "authorization" not in seen.headers
    # The deployment picks the model: no model is sent when none is set.
    assert seen.json == {
        "messages": [{"role": "user", "content": "hello"}],
        "temperature": 0.0,
        "max_tokens": 16,
    }


def test_azure_retries_its_429_and_reports_its_401(monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeHTTP() as server:
        server.reply = azure_reply
        base = {"type": "azure", "base_url": server.url(""), "deployment": "d", "max_retries": 2}
        monkeypatch.setenv("ASSAY_AZURE_KEY", "az-key")
        good = ProviderConfig(**base, api_key_env="ASSAY_AZURE_KEY")
        monkeypatch.setenv("ASSAY_AZURE_WRONG", "nope")
        wrong = ProviderConfig(**base, api_key_env="ASSAY_AZURE_WRONG")
        outcomes, _ = run(call(good, "busy"), call(wrong, "hello"))
        assert len([r for r in server.seen if r.json["messages"][-1]["content"] == "busy"]) == 3
    assert outcomes[0].error == "rate limited (429): Rate limit is exceeded after 3 attempt(s)"
    assert outcomes[1].error == (
        "request rejected (401): Access denied due to invalid key after 1 attempt(s)"
    )


# --------------------------------------------------------------------------- one clear line


def project(root: Path, provider: dict[str, Any]) -> list[str]:
    (root / "goldens.jsonl").write_text(
        json.dumps({"id": "g1", "input": "hi", "asserts": ["contains:hi"]}) + "\n"
    )
    document = {"provider": provider, "candidates": [{"id": "a", "prompt": "{{ input }}"}]}
    (root / "cands.yaml").write_text(json.dumps(document))
    return ["eval", "goldens.jsonl", "--candidates", "cands.yaml", "--no-cache"]


def test_a_missing_key_variable_is_one_line_naming_the_file_and_field(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GROQ_API_KEY", raising=False)
    code, _, err = run_cli(project(tmp_path, {"type": "groq", "model": "llama"}), tmp_path)
    assert code == 1 and "Traceback" not in err
    [line] = err.strip().splitlines()
    assert "cands.yaml" in line and "provider.api_key_env" in line
    assert "environment variable GROQ_API_KEY (api_key_env) is not set" in line


@pytest.mark.parametrize(
    ("provider", "field", "words"),
    [
        ({"type": "azure", "deployment": "d"}, "base_url", "the azure provider needs 'base_url'"),
        (
            {"type": "azure", "base_url": "https://r.openai.azure.com"},
            "deployment",
            "the azure provider needs 'deployment'",
        ),
        ({"type": "groq", "model": "m", "url": "http://x"}, "url", "does not support 'url'"),
        ({"type": "openai", "model": "m", "deployment": "d"}, "deployment", "does not support"),
    ],
)
def test_a_missing_or_foreign_setting_is_one_line_naming_the_file_and_field(
    tmp_path: Path, provider: dict[str, Any], field: str, words: str
) -> None:
    code, _, err = run_cli(project(tmp_path, provider), tmp_path)
    assert code == 1 and "Traceback" not in err
    [line] = err.strip().splitlines()
    assert "cands.yaml" in line and f"provider.{field}" in line and words in line


def test_presets_get_the_default_length_limit(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(
        json.dumps(
            {"provider": {"type": "groq", "model": "m"}, "candidates": [{"id": "a", "prompt": "x"}]}
        )
    )
    spec = load_candidates_file(path)
    assert spec.candidates[0].provider.max_tokens == 1024 and spec.defaulted == ("a",)


def test_a_key_given_twice_is_refused_for_azure(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    provider = {
        "type": "azure",
        "base_url": "https://r.openai.azure.com",
        "deployment": "d",
        "api_key_env": "K",
        "header_env": {"api-key": "K2"},
    }
    path.write_text(json.dumps({"provider": provider, "candidates": [{"id": "a", "prompt": "x"}]}))
    with pytest.raises(ConfigError, match="sends the api_key_env key"):
        load_candidates_file(path)


def test_a_candidate_of_another_type_inherits_only_what_its_type_uses(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    base = {"type": "python", "function": "file://p.py", "config": {"k": 1}, "timeout_s": 5}
    candidates = [
        {"id": "py", "prompt": "x"},
        {"id": "groq", "prompt": "x", "provider": {"type": "groq", "model": "m"}},
        {"id": "app", "prompt": "x", "provider": {"type": "http", "url": "http://127.0.0.1:9/a"}},
    ]
    path.write_text(json.dumps({"provider": base, "candidates": candidates}))
    py, groq, app = (c.provider for c in load_candidates_file(path).candidates)
    assert (py.function, py.config) == ("file://p.py", '{"k":1}')
    assert (groq.function, groq.config, groq.timeout_s) == (None, None, 5)
    assert (app.function, app.url, app.timeout_s) == (None, "http://127.0.0.1:9/a", 5)
    # Written for the candidate's own type, a foreign setting is still refused.
    candidates[1]["provider"] = {"type": "groq", "model": "m", "function": "file://p.py"}
    path.write_text(json.dumps({"provider": base, "candidates": candidates}))
    with pytest.raises(ConfigError, match="the groq provider does not support 'function'"):
        load_candidates_file(path)


@pytest.mark.parametrize(
    ("own", "refused"),
    [
        ({"type": "gemini", "model": "g"}, "the gemini provider does not support 'function'"),
        ({"type": "bedrock", "model": "b", "region": "eu-west-1"}, "'function'"),
        ({"type": "anthropic", "model": "a"}, "the anthropic provider does not support 'function'"),
    ],
)
def test_native_and_anthropic_candidates_inherit_only_what_their_type_uses(
    tmp_path: Path, own: dict[str, str], refused: str
) -> None:
    path = tmp_path / "c.yaml"
    base = {"type": "python", "function": "file://p.py", "config": {"k": 1}, "timeout_s": 5}
    candidates = [{"id": "py", "prompt": "x"}, {"id": "other", "prompt": "x", "provider": own}]
    path.write_text(json.dumps({"provider": base, "candidates": candidates}))
    other = load_candidates_file(path).candidates[1].provider
    assert (other.type, other.function, other.config, other.timeout_s) == (
        own["type"],
        None,
        None,
        5,
    )
    # Written for the candidate's own type, a foreign setting is still refused.
    candidates[1]["provider"] = {**own, "function": "file://p.py"}
    path.write_text(json.dumps({"provider": base, "candidates": candidates}))
    with pytest.raises(ConfigError, match=refused):
        load_candidates_file(path)
