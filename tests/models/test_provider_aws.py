"""The bedrock and sagemaker providers against a loopback server that speaks Converse and
InvokeEndpoint (tests.helpers.fake_aws), every request's SigV4 signature checked there by an
independent computation, itself checked here against AWS's published test vector. Request and
answer shapes (the sagemaker payloads), usage, retries of ThrottlingException, AWS's error
names and messages, the credential chain (environment, a profile file, a session token) and the
setup errors naming the field. botocore never finds real credentials nor asks an instance
metadata service: the environment points it at nothing but the test's own files."""

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
from tests.helpers.fake_aws import FakeAWS, sigv4_signature

pytest.importorskip("botocore")


@pytest.fixture
def server() -> Iterator[FakeAWS]:
    with FakeAWS() as s:
        yield s


@pytest.fixture(autouse=True)
def aws_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, server: FakeAWS) -> None:
    for name in (
        "AWS_PROFILE",
        "AWS_DEFAULT_PROFILE",
        "AWS_REGION",
        "AWS_DEFAULT_REGION",
        "AWS_SESSION_TOKEN",
        "AWS_SECURITY_TOKEN",
        "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
        "AWS_CONTAINER_CREDENTIALS_FULL_URI",
        "AWS_WEB_IDENTITY_TOKEN_FILE",
        "AWS_ROLE_ARN",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-aws-credentials"))
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", server.access_key)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", server.secret_key)


def run(calls: Sequence[Call], delays: list[float] | None = None) -> tuple[list[Outcome], RunStats]:
    recorded = delays if delays is not None else []
    return asyncio.run(
        run_calls(calls, cache=None, max_concurrency=4, sleep=recorded.append, seed=7)
    )


def call(config: ProviderConfig, prompt: str = "one two three", messages: Any = None) -> Call:
    return Call("cand", "g1", 0, prompt, config, messages=messages)


def bedrock(server: FakeAWS, model: str = "echo", **settings: Any) -> ProviderConfig:
    settings.setdefault("region", server.region)
    return ProviderConfig(type="bedrock", base_url=server.url, model=model, **settings)


def sagemaker(server: FakeAWS, endpoint: str = "echo", **settings: Any) -> ProviderConfig:
    settings.setdefault("region", server.region)
    return ProviderConfig(type="sagemaker", base_url=server.url, endpoint=endpoint, **settings)


def test_registered_as_built_in_types() -> None:
    assert {"bedrock", "sagemaker"} <= set(PROVIDER_TYPES)


def test_the_fakes_signature_check_reproduces_awss_published_test_vector() -> None:
    # AWS's SigV4 test suite, "get-vanilla": GET / on example.amazonaws.com, service "service",
    # us-east-1, 20150830T123600Z, the example credentials; the published signature.
    signature = sigv4_signature(
        method="GET",
        raw_path="/",
        query="",
        headers={"host": "example.amazonaws.com", "x-amz-date": "20150830T123600Z"},
        signed_headers=["host", "x-amz-date"],
        body=b"",
        amz_date="20150830T123600Z",
        secret_key="wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
        region="us-east-1",
        service="service",
    )
    assert signature == "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"


def test_bedrock_converse_request_shape_signature_usage_and_cost(server: FakeAWS) -> None:
    # A model id with a colon: percent-encoded in the path, and signed as AWS signs it
    # (encoded once more), or the fake refuses the signature.
    model = "anthropic.claude-3-haiku-20240307-v1:0"
    config = bedrock(
        server,
        model,
        temperature=0.2,
        max_tokens=64,
        top_p=0.8,
        stop=("END",),
        cost_per_1k_input=3.0,
        cost_per_1k_output=15.0,
    )
    messages = (("system", "Be brief."), ("user", "Hi"), ("assistant", "Hello"), ("user", "a b"))
    outcomes, stats = run([call(config, messages=messages)])
    completion = outcomes[0].completion
    assert completion is not None, outcomes[0].error
    assert completion.text == "echo: a b"
    assert (completion.input_tokens, completion.output_tokens) == (2, 3)
    assert completion.finish_reason == "end_turn"
    assert stats.cost_usd == pytest.approx((2 * 3.0 + 3 * 15.0) / 1000)
    [seen] = server.seen
    assert seen.raw_path == "/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse"
    assert server.signatures == [("bedrock", server.region)]
    assert server.secret_key not in json.dumps(seen.headers)
    assert seen.json == {
        "messages": [
            {"role": "user", "content": [{"text": "Hi"}]},
            {"role": "assistant", "content": [{"text": "Hello"}]},
            {"role": "user", "content": [{"text": "a b"}]},
        ],
        "system": [{"text": "Be brief."}],
        "inferenceConfig": {
            "temperature": 0.2,
            "maxTokens": 64,
            "topP": 0.8,
            "stopSequences": ["END"],
        },
    }


def test_a_wrong_secret_is_refused_by_the_signature_check(
    server: FakeAWS, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The check is real: a signature made with another secret does not verify.
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "not-the-secret")
    [outcome], stats = run([call(bedrock(server))])
    assert outcome.error is not None
    assert (
        "request rejected (403): InvalidSignatureException: The request signature" in outcome.error
    )
    assert stats.attempts == 1
    assert server.signatures == []


def test_a_session_token_is_sent_and_signed(
    server: FakeAWS, monkeypatch: pytest.MonkeyPatch
) -> None:
    server.session_token = "FwoGZX-loopback-session"
    monkeypatch.setenv("AWS_SESSION_TOKEN", server.session_token)
    [outcome], _ = run([call(bedrock(server))])
    assert outcome.completion is not None, outcome.error
    assert server.seen[0].headers["x-amz-security-token"] == server.session_token


def test_a_named_profile_and_its_region_come_from_the_aws_files(
    server: FakeAWS, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    (tmp_path / "no-aws-credentials").write_text(
        f"[evals]\naws_access_key_id = {server.access_key}\n"
        f"aws_secret_access_key = {server.secret_key}\n",
        encoding="utf-8",
    )
    (tmp_path / "no-aws-config").write_text(
        f"[profile evals]\nregion = {server.region}\n", encoding="utf-8"
    )
    config = ProviderConfig(type="bedrock", base_url=server.url, model="echo", profile="evals")
    [outcome], _ = run([call(config)])
    assert outcome.completion is not None, outcome.error
    assert server.signatures == [("bedrock", server.region)]


def test_reasoning_blocks_are_not_the_answer(server: FakeAWS) -> None:
    [outcome], _ = run([call(bedrock(server, "reasoning"), "x")])
    assert outcome.completion is not None and outcome.completion.text == "echo: x"


def test_throttling_is_retried_honouring_retry_after(server: FakeAWS) -> None:
    server.retry_after = "2"
    delays: list[float] = []
    [outcome], stats = run([call(bedrock(server, "flaky-429"))], delays)
    assert outcome.completion is not None
    assert stats.attempts == 3
    assert delays == [2.0, 2.0]


def test_errors_name_the_aws_exception_and_keep_its_message(server: FakeAWS) -> None:
    [bad], stats = run([call(bedrock(server, "bad-request"))])
    assert bad.error is not None
    assert "request rejected (400): ValidationException: scripted 400" in bad.error
    assert stats.attempts == 1
    [down], stats = run([call(bedrock(server, "always-500", max_retries=1))])
    assert down.error is not None and "InternalServerException: scripted 500" in down.error
    assert stats.attempts == 2
    [broken], _ = run([call(bedrock(server, "malformed", max_retries=0))])
    assert broken.error is not None and "malformed response" in broken.error


def test_sagemaker_huggingface_payload(server: FakeAWS) -> None:
    config = sagemaker(server, temperature=0.5, max_tokens=32, stop=("\n",), seed=3)
    [outcome], _ = run([call(config, "tell me")])
    assert outcome.completion is not None, outcome.error
    assert outcome.completion.text == "echo: tell me"
    [seen] = server.seen
    assert seen.path == "/endpoints/echo/invocations"
    assert server.signatures == [("sagemaker", server.region)]
    assert seen.json == {
        "inputs": "tell me",
        "parameters": {
            "return_full_text": False,
            "do_sample": True,
            "temperature": 0.5,
            "max_new_tokens": 32,
            "stop": ["\n"],
            "seed": 3,
        },
    }


def test_sagemaker_temperature_zero_is_greedy_decoding_which_tgi_accepts(server: FakeAWS) -> None:
    # TGI refuses temperature 0 (the fake answers as SageMaker relays it: a 424 ModelError);
    # the provider sends do_sample false and no temperature instead.
    [outcome], _ = run([call(sagemaker(server, "single"))])
    assert outcome.completion is not None, outcome.error
    assert outcome.completion.text == "echo: one two three"  # one {generated_text}, not a list
    parameters = server.seen[0].json["parameters"]
    assert parameters["do_sample"] is False and "temperature" not in parameters


def test_sagemaker_model_error_keeps_the_containers_message(server: FakeAWS) -> None:
    [outcome], stats = run([call(sagemaker(server, "model-error"))])
    assert outcome.error is not None
    assert "request rejected (424): ModelError: Received client error (400) from primary" in (
        outcome.error
    )
    assert stats.attempts == 1


def test_sagemaker_openai_payload_sends_messages_and_reads_usage(server: FakeAWS) -> None:
    config = sagemaker(server, payload="openai", model="tgi", max_tokens=16)
    messages = (("system", "S."), ("user", "q w"))
    [outcome], _ = run([call(config, messages=messages)])
    completion = outcome.completion
    assert completion is not None, outcome.error
    assert completion.text == "echo: q w"
    assert (completion.input_tokens, completion.output_tokens, completion.finish_reason) == (
        2,
        3,
        "stop",
    )
    assert server.seen[0].json == {
        "messages": [{"role": "system", "content": "S."}, {"role": "user", "content": "q w"}],
        "temperature": 0.0,
        "model": "tgi",
        "max_tokens": 16,
    }


def test_sagemaker_throttling_is_retried(server: FakeAWS) -> None:
    server.flaky_failures = 1
    [outcome], stats = run([call(sagemaker(server, "flaky-429"))])
    assert outcome.completion is not None and stats.attempts == 2


# --------------------------------------------------------------------------- setup errors


def test_no_credentials_stop_the_run_naming_the_setting(
    server: FakeAWS, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    with pytest.raises(ConfigError, match="no AWS credentials found") as info:
        run([call(bedrock(server))])
    assert info.value.field == "provider.profile"
    assert server.seen == []


def test_no_region_stops_the_run_naming_the_setting(server: FakeAWS) -> None:
    with pytest.raises(ConfigError, match="no AWS region") as info:
        run([call(ProviderConfig(type="bedrock", base_url=server.url, model="echo"))])
    assert info.value.field == "provider.region"


def test_an_unknown_profile_names_the_setting(server: FakeAWS) -> None:
    with pytest.raises(ConfigError, match="nosuch") as info:
        run([call(bedrock(server, profile="nosuch"))])
    assert info.value.field == "provider.profile"


def test_without_botocore_one_line_says_what_to_install(
    server: FakeAWS, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "botocore", None)  # an import of it now fails
    monkeypatch.setitem(sys.modules, "botocore.session", None)
    with pytest.raises(ConfigError) as info:
        run([call(bedrock(server))])
    assert "pip install 'assay[aws]'" in str(info.value)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    "settings, field",
    [
        ("type: bedrock", "provider.model"),
        ("type: bedrock, model: m, seed: 1", "provider.seed"),
        ("type: bedrock, model: m, endpoint: e", "provider.endpoint"),
        ("type: sagemaker, region: r", "provider.endpoint"),
        ("type: sagemaker, endpoint: e, payload: llama", "provider.payload"),
        ("type: sagemaker, endpoint: e, presence_penalty: 1", "provider.presence_penalty"),
        ("type: sagemaker, endpoint: e, project: p", "provider.project"),
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


def test_assay_eval_end_to_end_with_a_sagemaker_endpoint(server: FakeAWS, tmp_path: Path) -> None:
    (tmp_path / "goldens.jsonl").write_text(
        '{"id": "g1", "input": "hello", "asserts": ["contains:hello"]}\n'
        '{"id": "g2", "input": "world", "asserts": ["contains:world"]}\n',
        encoding="utf-8",
    )
    (tmp_path / "cands.yaml").write_text(
        f"provider: {{type: sagemaker, base_url: '{server.url}', endpoint: echo, "
        f"region: {server.region}, max_tokens: 64}}\n"
        "candidates:\n  - {id: a, prompt: 'Say {{ input }}'}\n",
        encoding="utf-8",
    )
    args = ["eval", "goldens.jsonl", "--candidates", "cands.yaml", "--json", "--no-cache"]
    code, out, err = run_cli(args, tmp_path)
    assert code == 0, err
    assert [r["status"] for r in json.loads(out)["results"]] == ["pass", "pass"]
    assert len(server.signatures) == 2
    assert server.secret_key not in out + err
