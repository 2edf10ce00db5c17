"""The gemini and vertex providers against a loopback server that speaks generateContent
(tests.helpers.fake_google): the URL forms, the key and token headers, the request body
(contents, systemInstruction, generationConfig), the answer (thought parts left out, usage,
finishReason), retries honouring RetryInfo, errors keeping Google's message, and the setup
errors (no key, no token, no project) naming the field. Vertex's Application Default
Credentials path refreshes a real google-auth authorized-user credential against the fake's
token endpoint. No request leaves the machine."""

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
from assay.models.providers import PROVIDER_TYPES, ProviderConfig, make_provider
from tests.helpers.cli import run_cli
from tests.helpers.fake_google import FakeGoogle

KEY = "AIza-loopback-SECRET-7"
TOKEN = "ya29.loopback-SECRET-token"


@pytest.fixture
def server() -> Iterator[FakeGoogle]:
    with FakeGoogle() as s:
        yield s


def run(calls: Sequence[Call], delays: list[float] | None = None) -> tuple[list[Outcome], RunStats]:
    recorded = delays if delays is not None else []
    return asyncio.run(
        run_calls(calls, cache=None, max_concurrency=4, sleep=recorded.append, seed=7)
    )


def call(config: ProviderConfig, prompt: str = "one two three", messages: Any = None) -> Call:
    return Call("cand", "g1", 0, prompt, config, messages=messages)


def gemini(server: FakeGoogle, model: str = "echo", **settings: Any) -> ProviderConfig:
    settings.setdefault("api_key_env", "ASSAY_TEST_GEMINI_KEY")
    return ProviderConfig(type="gemini", base_url=server.url, model=model, **settings)


def vertex(server: FakeGoogle, model: str = "echo", **settings: Any) -> ProviderConfig:
    settings.setdefault("api_key_env", "ASSAY_TEST_VERTEX_TOKEN")
    settings.setdefault("project", "my-proj")
    settings.setdefault("region", "europe-west4")
    return ProviderConfig(type="vertex", base_url=server.url, model=model, **settings)


@pytest.fixture(autouse=True)
def secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSAY_TEST_GEMINI_KEY", KEY)
    monkeypatch.setenv("ASSAY_TEST_VERTEX_TOKEN", TOKEN)
    for name in ("GEMINI_API_KEY", "VERTEX_ACCESS_TOKEN", "GOOGLE_CLOUD_PROJECT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("GOOGLE_CLOUD_LOCATION", raising=False)
    # google-auth must never find real credentials (nor ask a metadata server) here.
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", "/nonexistent/assay-test-adc.json")
    monkeypatch.setenv("NO_GCE_CHECK", "True")


def test_registered_as_built_in_types() -> None:
    assert {"gemini", "vertex"} <= set(PROVIDER_TYPES)


def test_gemini_request_shape_key_header_usage_and_cost(server: FakeGoogle) -> None:
    server.api_key = KEY
    config = gemini(
        server,
        temperature=0.3,
        max_tokens=50,
        top_p=0.9,
        seed=4,
        stop=("END",),
        cost_per_1k_input=1.0,
        cost_per_1k_output=2.0,
    )
    messages = (("system", "Be brief."), ("user", "Hi"), ("assistant", "Hello"), ("user", "a b"))
    outcomes, stats = run([call(config, messages=messages)])
    completion = outcomes[0].completion
    assert completion is not None, outcomes[0].error
    assert completion.text == "echo: a b"
    assert (completion.input_tokens, completion.output_tokens) == (2, 3)
    assert completion.finish_reason == "STOP"
    assert stats.cost_usd == pytest.approx((2 * 1.0 + 3 * 2.0) / 1000)
    [seen] = server.seen
    assert seen.path == "/v1beta/models/echo:generateContent"
    assert seen.headers["x-goog-api-key"] == KEY
    assert "authorization" not in seen.headers
    assert seen.json == {
        "contents": [
            {"role": "user", "parts": [{"text": "Hi"}]},
            {"role": "model", "parts": [{"text": "Hello"}]},
            {"role": "user", "parts": [{"text": "a b"}]},
        ],
        "systemInstruction": {"parts": [{"text": "Be brief."}]},
        "generationConfig": {
            "temperature": 0.3,
            "maxOutputTokens": 50,
            "topP": 0.9,
            "seed": 4,
            "stopSequences": ["END"],
        },
    }


def test_thought_parts_are_not_the_answer_but_are_billed_as_output(server: FakeGoogle) -> None:
    outcomes, _ = run([call(gemini(server, "thinking"), "x y")])
    completion = outcomes[0].completion
    assert completion is not None
    assert completion.text == "echo: x y"
    assert completion.output_tokens == 3 + 5


def test_a_models_prefix_names_the_same_model(server: FakeGoogle) -> None:
    run([call(gemini(server, "models/echo"))])
    assert server.seen[0].path == "/v1beta/models/echo:generateContent"


def test_a_429_is_retried_after_its_retry_info_delay(server: FakeGoogle) -> None:
    server.retry_delay = "1.5s"
    delays: list[float] = []
    outcomes, stats = run([call(gemini(server, "flaky-429"))], delays)
    assert outcomes[0].completion is not None
    assert stats.attempts == 3
    assert delays == [1.5, 1.5]  # RetryInfo, not the runner's own backoff


def test_final_errors_keep_googles_message(server: FakeGoogle) -> None:
    server.api_key = "another-key"
    outcomes, stats = run([call(gemini(server))])
    assert outcomes[0].error is not None
    assert "request rejected (400): API key not valid" in outcomes[0].error
    assert stats.attempts == 1
    assert KEY not in outcomes[0].error
    server.api_key = None
    [bad], _ = run([call(gemini(server, "bad-request"))])
    assert bad.error is not None and "(400): scripted 400" in bad.error
    [blocked], _ = run([call(gemini(server, "blocked"))])
    assert blocked.error is not None and "the prompt was blocked (SAFETY)" in blocked.error


def test_a_5xx_and_a_malformed_body_are_retried(server: FakeGoogle) -> None:
    [down], stats = run([call(gemini(server, "always-503", max_retries=2))])
    assert down.error is not None and "server error (503): The model is overloaded." in down.error
    assert stats.attempts == 3
    [broken], _ = run([call(gemini(server, "malformed", max_retries=1))])
    assert broken.error is not None and "malformed response" in broken.error


def test_vertex_url_form_and_bearer_token(server: FakeGoogle) -> None:
    server.token = TOKEN
    outcomes, _ = run([call(vertex(server, "gemini-2.0-flash"))])
    assert outcomes[0].completion is not None, outcomes[0].error
    [seen] = server.seen
    assert seen.path == (
        "/v1/projects/my-proj/locations/europe-west4/publishers/google/models/"
        "gemini-2.0-flash:generateContent"
    )
    assert seen.headers["authorization"] == f"Bearer {TOKEN}"
    assert "x-goog-api-key" not in seen.headers


def test_vertex_rejected_token_keeps_googles_message(server: FakeGoogle) -> None:
    server.token = "another"
    [outcome], _ = run([call(vertex(server))])
    assert outcome.error is not None
    assert "(401): Request had invalid authentication credentials." in outcome.error
    assert TOKEN not in outcome.error


def test_vertex_project_and_region_default_from_the_environment(
    server: FakeGoogle, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "env-proj")
    config = ProviderConfig(
        type="vertex", base_url=server.url, model="echo", api_key_env="ASSAY_TEST_VERTEX_TOKEN"
    )
    run([call(config)])
    assert server.seen[0].path.startswith("/v1/projects/env-proj/locations/us-central1/")


def test_vertex_default_endpoints_by_region() -> None:
    from assay.models.providers.google import vertex_url

    assert vertex_url("us-central1") == "https://us-central1-aiplatform.googleapis.com"
    assert vertex_url("global") == "https://aiplatform.googleapis.com"


# --------------------------------------------------------------------------- setup errors


def test_gemini_default_endpoint_without_its_key_stops_before_any_request() -> None:
    with pytest.raises(ConfigError, match=r"GEMINI_API_KEY \(api_key_env\) is not set") as info:
        run([call(ProviderConfig(type="gemini", model="gemini-2.0-flash"))])
    assert info.value.field == "provider.api_key_env"


def test_the_gemini_key_goes_to_another_endpoint_only_when_asked(
    server: FakeGoogle, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    run([call(ProviderConfig(type="gemini", base_url=server.url, model="echo"))])
    assert "x-goog-api-key" not in server.seen[0].headers


def test_vertex_without_a_token_or_google_auth_credentials_names_the_setting(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    config = ProviderConfig(type="vertex", model="gemini-2.0-flash", project="p")
    with pytest.raises(ConfigError) as info:
        run([call(config)])
    message = str(info.value)
    assert "no Vertex AI access token" in message
    assert "VERTEX_ACCESS_TOKEN" in message
    assert info.value.field == "provider.api_key_env"


def test_vertex_without_a_project_names_the_setting(server: FakeGoogle) -> None:
    config = ProviderConfig(
        type="vertex", base_url=server.url, model="m", api_key_env="ASSAY_TEST_VERTEX_TOKEN"
    )
    with pytest.raises(ConfigError, match="no Google Cloud project") as info:
        run([call(config)])
    assert info.value.field == "provider.project"
    assert server.seen == []


def test_vertex_application_default_credentials_are_refreshed_and_sent(
    server: FakeGoogle, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An authorized-user ADC file (what `gcloud auth application-default login` writes):
    # google-auth loads it, and refreshes it for real against the fake's token endpoint (set
    # with with_token_uri: google-auth pins such a file's token_uri to Google's), and the
    # provider sends the token it got. The provider is built as on the default endpoint, then
    # pointed at the fake before any request, so that nothing can go to Google.
    pytest.importorskip("google.auth")
    adc = tmp_path / "adc.json"
    adc.write_text(
        json.dumps(
            {
                "type": "authorized_user",
                "client_id": "cid",
                "client_secret": "csecret",
                "refresh_token": "rtoken",
                "token_uri": f"{server.url}/token",
                "quota_project_id": "adc-proj",
            }
        ),
        encoding="utf-8",
    )
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(adc))
    config = ProviderConfig(type="vertex", model="echo", project="p", region="us-east1")
    provider: Any = make_provider(config)
    auth = provider.clients[0].auth
    auth.credentials = auth.credentials.with_token_uri(f"{server.url}/token")
    for client in provider.clients:
        client.base_url = server.url + "/"
        assert client.auth is auth
    server.token = server.issued

    async def one() -> Any:
        try:
            return await provider.complete("via adc")
        finally:
            await provider.aclose()

    completion = asyncio.run(one())
    assert completion.text == "echo: via adc"
    token_requests = [s for s in server.seen if s.path == "/token"]
    assert len(token_requests) == 1
    assert "refresh_token=rtoken" in token_requests[0].raw.decode()
    generate = [s for s in server.seen if s.path != "/token"]
    assert generate[0].headers["authorization"] == f"Bearer {server.issued}"
    assert generate[0].headers["x-goog-user-project"] == "adc-proj"


@pytest.mark.parametrize(
    "settings, field",
    [
        ("type: gemini", "provider.model"),
        (
            "type: gemini, model: m, response_format: {type: json_object}",
            "provider.response_format",
        ),
        ("type: gemini, model: m, project: p", "provider.project"),
        ("type: vertex, model: m, endpoint: e", "provider.endpoint"),
        (
            "type: gemini, model: m, api_key_env: K, header_env: {x-goog-api-key: K2}",
            "provider.header_env.x-goog-api-key",
        ),
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
    assert info.value.source == str(path)
    assert info.value.field == field


def test_assay_eval_end_to_end_and_a_missing_key_is_one_line(
    server: FakeGoogle, tmp_path: Path
) -> None:
    (tmp_path / "goldens.jsonl").write_text(
        '{"id": "g1", "input": "hello", "asserts": ["contains:hello"]}\n', encoding="utf-8"
    )
    cands = tmp_path / "cands.yaml"
    cands.write_text(
        f"provider: {{type: gemini, base_url: '{server.url}', model: echo, "
        "api_key_env: ASSAY_TEST_GEMINI_KEY}\n"
        "candidates:\n  - {id: chat, system: 'Repeat.', prompt: '{{ input }}'}\n",
        encoding="utf-8",
    )
    args = ["eval", "goldens.jsonl", "--candidates", "cands.yaml", "--json", "--no-cache"]
    code, out, err = run_cli(args, tmp_path)
    assert code == 0, err
    assert [r["status"] for r in json.loads(out)["results"]] == ["pass"]
    assert KEY not in out + err
    cands.write_text(
        cands.read_text(encoding="utf-8").replace("ASSAY_TEST_GEMINI_KEY", "ASSAY_TEST_UNSET_KEY"),
        encoding="utf-8",
    )
    code, out, err = run_cli(args, tmp_path)
    assert code == 1
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if "ASSAY_TEST_UNSET_KEY" in line]
    assert len(lines) == 1
    assert "api_key_env" in lines[0]
