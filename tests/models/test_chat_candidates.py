"""Chat candidates (``system`` and ``messages``) and the provider settings passed through
(``top_p``, ``seed``, ``stop``, ``response_format``, penalties, ``headers``, ``header_env``, the
default openai endpoint): validation naming the file and field, the rendering rule, what each
provider receives, and the cache keeping candidates that differ only in their system prompt
apart."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from assay.errors import ConfigError
from assay.goldens import build_goldens
from assay.models._cache import cache_key
from assay.models._candidates_file import load_candidates_file
from assay.models._live import build_calls, flatten_messages
from assay.models._runner import Call, run_calls
from assay.models.providers import ProviderConfig
from assay.models.providers.openai import OpenAIProvider
from tests.helpers.cli import run_cli
from tests.helpers.fake_openai import FakeOpenAI, fake_openai


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with fake_openai() as s:
        yield s


def golden(**data: Any) -> Any:
    return build_goldens(data, source="mem", default_id=None, folder_tier=None)[0]


def load(tmp_path: Path, text: str) -> Any:
    path = tmp_path / "cands.yaml"
    path.write_text(text, encoding="utf-8")
    return load_candidates_file(path)


ECHO = "provider: {type: echo}\ncandidates:\n"

# --------------------------------------------------------------------------- validation


@pytest.mark.parametrize(
    "candidates, field",
    [
        ("  - {id: a, messages: hi}\n", "candidates[0].messages"),
        ("  - {id: a, messages: []}\n", "candidates[0].messages"),
        ("  - {id: a, messages: [hi]}\n", "candidates[0].messages[0]"),
        ("  - {id: a, messages: [{role: robot, content: x}]}\n", "candidates[0].messages[0].role"),
        ("  - {id: a, messages: [{content: x}]}\n", "candidates[0].messages[0].role"),
        ("  - {id: a, messages: [{role: user}]}\n", "candidates[0].messages[0].content"),
        (
            "  - {id: a, messages: [{role: user, content: ''}]}\n",
            "candidates[0].messages[0].content",
        ),
        (
            "  - {id: a, messages: [{role: user, content: 3}]}\n",
            "candidates[0].messages[0].content",
        ),
        (
            "  - {id: a, messages: [{role: user, content: x, name: bob}]}\n",
            "candidates[0].messages[0].name",
        ),
        (
            "  - {id: a, prompt: p}\n  - {id: b, messages: [{role: user, content: x},"
            " {role: system, content: late}]}\n",
            "candidates[1].messages[1].role",
        ),
        (
            "  - {id: a, system: s, messages: [{role: system, content: t}], prompt: p}\n",
            "candidates[0].messages[0].role",
        ),
        ("  - {id: a, system: '', prompt: p}\n", "candidates[0].system"),
        ("  - {id: a, system: [s], prompt: p}\n", "candidates[0].system"),
        ("  - {id: a, system: s}\n", "candidates[0].prompt"),
        (
            "  - {id: a, messages: [{role: system, content: s}, {role: assistant, content: x}]}\n",
            "candidates[0].messages",
        ),
        ("  - {id: a, system: s, prompt: 3}\n", "candidates[0].prompt"),
    ],
)
def test_chat_candidate_errors_name_the_file_and_field(
    tmp_path: Path, candidates: str, field: str
) -> None:
    with pytest.raises(ConfigError) as info:
        load(tmp_path, ECHO + candidates)
    assert info.value.source == str(tmp_path / "cands.yaml")
    assert info.value.field == field
    assert f"field '{field}'" in str(info.value)


# --------------------------------------------------------------------------- the rule


def test_a_plain_prompt_is_unchanged(tmp_path: Path) -> None:
    spec = load(tmp_path, ECHO + "  - {id: a, prompt: 'Q: {{ input }}'}\n")
    [c] = build_calls([golden(id="g", input="hi")], spec)
    assert (c.prompt, c.messages) == ("Q: hi", None)
    assert c.cache_prompt() == "Q: hi"  # a prompt-only candidate keeps its cache entries


def test_system_then_messages_then_prompt_as_the_last_user_message(tmp_path: Path) -> None:
    spec = load(
        tmp_path,
        ECHO + "  - id: a\n"
        "    system: 'You help with {{ tier }} questions.'\n"
        "    messages:\n"
        "      - {role: user, content: 'Capital of Italy?'}\n"
        "      - {role: assistant, content: Rome}\n"
        "    prompt: '{{ input.q }}'\n",
    )
    [c] = build_calls([golden(id="g", input={"q": "Capital of France?"}, tier="smoke")], spec)
    assert c.messages == (
        ("system", "You help with smoke questions."),
        ("user", "Capital of Italy?"),
        ("assistant", "Rome"),
        ("user", "Capital of France?"),
    )
    assert c.prompt == (
        "System: You help with smoke questions.\n\nUser: Capital of Italy?\n\n"
        "Assistant: Rome\n\nUser: Capital of France?"
    )


def test_messages_alone_replace_the_prompt(tmp_path: Path) -> None:
    spec = load(
        tmp_path,
        ECHO + "  - id: a\n    messages:\n"
        "      - {role: system, content: Terse.}\n"
        "      - {role: user, content: '{{ input }}'}\n"
        "      - {role: assistant, content: 'The answer is'}\n",
    )
    [c] = build_calls([golden(id="g", input="hi")], spec)
    assert c.messages == (("system", "Terse."), ("user", "hi"), ("assistant", "The answer is"))


def test_one_user_message_is_a_plain_prompt_sharing_its_cache_entry(tmp_path: Path) -> None:
    spec = load(
        tmp_path,
        ECHO
        + "  - {id: a, prompt: 'Q: {{ input }}'}\n"
        + "  - {id: b, messages: [{role: user, content: 'Q: {{ input }}'}]}\n",
    )
    a, b = build_calls([golden(id="g", input="hi")], spec)
    assert (b.prompt, b.messages) == ("Q: hi", None)
    assert cache_key(a.config, a.cache_prompt(), 0) == cache_key(b.config, b.cache_prompt(), 0)


def test_flattening() -> None:
    assert flatten_messages([("user", "just this")]) == "just this"
    assert flatten_messages([("system", "S"), ("user", "U")]) == "System: S\n\nUser: U"


@pytest.mark.parametrize(
    "candidate, field",
    [
        ("{id: a, system: '{{ expected }}', prompt: p}", "system"),
        (
            "{id: a, messages: [{role: user, content: x}, {role: user, content: '{{ nope }}'}]}",
            "messages[1].content",
        ),
    ],
)
def test_an_unknown_placeholder_names_the_template(
    tmp_path: Path, candidate: str, field: str
) -> None:
    spec = load(tmp_path, ECHO + f"  - {candidate}\n")
    with pytest.raises(ConfigError) as info:
        build_calls([golden(id="g", input="hi", expected="SECRET")], spec)
    assert info.value.field == field
    assert "candidate a" in str(info.value)
    assert "SECRET" not in str(info.value)


# --------------------------------------------------------------------------- the cache


def test_candidates_differing_only_in_system_never_share_a_cache_entry(
    server: FakeOpenAI, tmp_path: Path
) -> None:
    (tmp_path / "goldens.jsonl").write_text(
        '{"id": "g1", "input": "hello", "asserts": ["contains:hello"]}\n', encoding="utf-8"
    )
    (tmp_path / "cands.yaml").write_text(
        f"provider: {{type: openai, base_url: '{server.url}', model: echo}}\n"
        "candidates:\n"
        "  - {id: plain, prompt: '{{ input }}'}\n"
        "  - {id: terse, system: Be terse., prompt: '{{ input }}'}\n"
        "  - {id: kind, system: Be kind., prompt: '{{ input }}'}\n",
        encoding="utf-8",
    )
    args = ["eval", "goldens.jsonl", "--candidates", "cands.yaml", "--json"]
    code, out, err = run_cli(args, tmp_path)
    assert code == 0, err
    assert json.loads(out)["summary"]["model_calls"]["made"] == 3
    assert server.total == 3  # three requests: no candidate read another's output
    systems = sorted(
        s.body["messages"][0]["content"] for s in server.seen if len(s.body["messages"]) == 2
    )
    assert systems == ["Be kind.", "Be terse."]
    code, out, err = run_cli(args, tmp_path)
    assert code == 0, err
    assert json.loads(out)["summary"]["model_calls"]["cache_hits"] == 3
    assert server.total == 3


def test_a_chat_call_key_differs_from_a_prompt_of_its_flattened_text() -> None:
    config = ProviderConfig(type="echo")
    chat = Call(
        "c", "g", 0, "System: S\n\nUser: U", config, messages=(("system", "S"), ("user", "U"))
    )
    plain = Call("c", "g", 0, "System: S\n\nUser: U", config)
    assert cache_key(config, chat.cache_prompt(), 0) != cache_key(config, plain.cache_prompt(), 0)


@pytest.mark.parametrize(
    "setting, value",
    [
        ("top_p", 0.5),
        ("seed", 7),
        ("stop", ("END",)),
        ("response_format", '{"type":"json_object"}'),
        ("presence_penalty", 0.5),
        ("frequency_penalty", -0.5),
    ],
)
def test_sampling_settings_are_part_of_the_cache_identity(setting: str, value: Any) -> None:
    base = ProviderConfig(type="openai", base_url="http://127.0.0.1:1/v1", model="m")
    changed = ProviderConfig(
        type="openai", base_url="http://127.0.0.1:1/v1", model="m", **{setting: value}
    )
    assert cache_key(base, "p", 0) != cache_key(changed, "p", 0)
    # Unset, a setting is absent from the identity: configs without it keep their keys.
    assert setting not in base.cache_identity()


def test_headers_are_not_part_of_the_cache_identity() -> None:
    base = ProviderConfig(type="openai", base_url="http://127.0.0.1:1/v1", model="m")
    with_headers = ProviderConfig(
        type="openai",
        base_url="http://127.0.0.1:1/v1",
        model="m",
        headers=(("x-team", "a"),),
        header_env=(("api-key", "AZURE_OPENAI_KEY"),),
    )
    assert cache_key(base, "p", 0) == cache_key(with_headers, "p", 0)
    assert "AZURE_OPENAI_KEY" not in json.dumps(with_headers.cache_identity())


# --------------------------------------------------------------------------- what is sent


def test_openai_sends_system_and_messages_natively(server: FakeOpenAI, tmp_path: Path) -> None:
    spec = load(
        tmp_path,
        f"provider: {{type: openai, base_url: '{server.url}', model: echo}}\ncandidates:\n"
        "  - {id: a, system: Be terse., messages: [{role: user, content: Hi}, "
        "{role: assistant, content: Hello}], prompt: '{{ input }}'}\n",
    )
    calls = build_calls([golden(id="g", input="What now?")], spec)
    outcomes, _ = asyncio.run(run_calls(calls, cache=None, max_concurrency=1))
    assert outcomes[0].completion is not None
    assert outcomes[0].completion.text == "echo: What now?"
    assert server.seen[0].body["messages"] == [
        {"role": "system", "content": "Be terse."},
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello"},
        {"role": "user", "content": "What now?"},
    ]


def test_the_echo_provider_receives_the_flattened_text(tmp_path: Path) -> None:
    (tmp_path / "goldens.jsonl").write_text(
        '{"id": "g1", "input": "hello", '
        '"asserts": ["contains:System: Be terse.\\n\\nUser: hello"]}\n',
        encoding="utf-8",
    )
    (tmp_path / "cands.yaml").write_text(
        ECHO + "  - {id: a, system: Be terse., prompt: '{{ input }}'}\n", encoding="utf-8"
    )
    code, out, err = run_cli(
        ["eval", "goldens.jsonl", "--candidates", "cands.yaml", "--json", "--no-cache"], tmp_path
    )
    assert code == 0, err
    assert [r["status"] for r in json.loads(out)["results"]] == ["pass"]


def test_the_command_provider_reads_the_flattened_text_on_stdin(tmp_path: Path) -> None:
    spec = load(
        tmp_path,
        "provider: {type: command, command: cat}\ncandidates:\n"
        "  - {id: a, system: S, prompt: '{{ input }}'}\n",
    )
    calls = build_calls([golden(id="g", input="U")], spec)
    outcomes, _ = asyncio.run(run_calls(calls, cache=None, max_concurrency=1))
    assert outcomes[0].completion is not None
    assert outcomes[0].completion.text == "System: S\n\nUser: U"


def test_openai_sends_the_sampling_settings(server: FakeOpenAI, tmp_path: Path) -> None:
    spec = load(
        tmp_path,
        f"provider: {{type: openai, base_url: '{server.url}', model: echo, top_p: 0.5, seed: 42,"
        " stop: END, presence_penalty: 0.1, frequency_penalty: -0.2,"
        " response_format: {type: json_schema, json_schema: {name: a, schema: {type: object}}}}\n"
        "candidates:\n  - {id: a, prompt: '{{ input }}'}\n",
    )
    calls = build_calls([golden(id="g", input="x")], spec)
    outcomes, _ = asyncio.run(run_calls(calls, cache=None, max_concurrency=1))
    assert outcomes[0].completion is not None
    body = server.seen[0].body
    assert body["top_p"] == 0.5
    assert body["seed"] == 42
    assert body["stop"] == ["END"]
    assert body["presence_penalty"] == 0.1
    assert body["frequency_penalty"] == -0.2
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "a", "schema": {"type": "object"}},
    }


def test_openai_sends_none_of_them_when_unset(server: FakeOpenAI) -> None:
    config = ProviderConfig(type="openai", base_url=server.url, model="echo")
    asyncio.run(run_calls([Call("c", "g", 0, "p", config)], cache=None, max_concurrency=1))
    assert set(server.seen[0].body) == {"model", "messages", "temperature"}


@pytest.mark.parametrize(
    "settings, field",
    [
        ("top_p: 1.5", "provider.top_p"),
        ("top_p: x", "provider.top_p"),
        ("seed: 1.5", "provider.seed"),
        ("seed: 99999999999999999999", "provider.seed"),
        ("stop: []", "provider.stop"),
        ("stop: ['']", "provider.stop[0]"),
        ("stop: 3", "provider.stop"),
        ("response_format: json", "provider.response_format"),
        ("response_format: {}", "provider.response_format"),
        ("presence_penalty: 3", "provider.presence_penalty"),
        ("frequency_penalty: -2.5", "provider.frequency_penalty"),
        ("headers: [a]", "provider.headers"),
        ("headers: {'bad name': x}", "provider.headers.bad name"),
        ("headers: {Authorization: Bearer sk-1}", "provider.headers.Authorization"),
        ("headers: {api-key: sk-1}", "provider.headers.api-key"),
        ("headers: {x-team: 3}", "provider.headers.x-team"),
        ("headers: {Content-Type: text/plain}", "provider.headers.Content-Type"),
        ("header_env: {api-key: 'not a variable'}", "provider.header_env.api-key"),
        ("header_env: {x-a: A}, headers: {X-A: b}", "provider.header_env.x-a"),
        ("api_key_env: K, header_env: {authorization: K2}", "provider.header_env.authorization"),
    ],
)
def test_provider_setting_errors_name_the_file_and_field(
    tmp_path: Path, settings: str, field: str
) -> None:
    with pytest.raises(ConfigError) as info:
        load(
            tmp_path,
            "provider: {type: openai, base_url: 'http://127.0.0.1:1/v1', "
            f"{settings}}}\ncandidates:\n  - {{id: a, prompt: p}}\n",
        )
    assert info.value.field == field
    assert "sk-1" not in str(info.value)


def test_headers_and_header_env_go_on_every_request(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASSAY_TEST_AZURE_KEY", "az-secret")
    spec = load(
        tmp_path,
        "provider: {type: openai, base_url: 'http://127.0.0.1:1/v1', model: m,"
        " headers: {x-team: evals}, header_env: {api-key: ASSAY_TEST_AZURE_KEY}}\n"
        "candidates:\n  - {id: a, prompt: p}\n",
    )
    provider = OpenAIProvider(spec.candidates[0].provider)
    try:
        assert provider.clients[0].headers["api-key"] == "az-secret"
        assert provider.clients[0].headers["x-team"] == "evals"
        assert "authorization" not in provider.clients[0].headers
    finally:
        asyncio.run(provider.aclose())
    assert "az-secret" not in repr(spec)


def test_a_missing_header_variable_through_the_cli_exits_1_naming_it(
    server: FakeOpenAI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ASSAY_TEST_AZURE_KEY", raising=False)
    (tmp_path / "goldens.jsonl").write_text('{"id": "g1", "input": "hello"}\n', encoding="utf-8")
    (tmp_path / "cands.yaml").write_text(
        f"provider: {{type: openai, base_url: '{server.url}', model: echo,"
        " header_env: {api-key: ASSAY_TEST_AZURE_KEY}}\ncandidates:\n  - {id: a, prompt: p}\n",
        encoding="utf-8",
    )
    code, _out, err = run_cli(["eval", "goldens.jsonl", "--candidates", "cands.yaml"], tmp_path)
    assert code == 1
    assert "Traceback" not in err
    assert "ASSAY_TEST_AZURE_KEY" in err and "header_env.api-key" in err
    assert "cands.yaml" in err
    assert server.total == 0


def test_openai_defaults_to_the_official_endpoint_and_its_key_variable(tmp_path: Path) -> None:
    spec = load(
        tmp_path, "provider: {type: openai, model: m}\ncandidates:\n  - {id: a, prompt: p}\n"
    )
    config = spec.candidates[0].provider
    assert config.base_url == "https://api.openai.com/v1"
    assert config.api_key_env == "OPENAI_API_KEY"
    # Another endpoint never gets OPENAI_API_KEY unless api_key_env names it.
    local = ProviderConfig(type="openai", base_url="http://127.0.0.1:8000/v1")
    assert local.api_key_env is None


def test_openai_default_endpoint_without_its_key_stops_before_any_request(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    config = ProviderConfig(type="openai", model="m")
    with pytest.raises(ConfigError, match=r"OPENAI_API_KEY \(api_key_env\) is not set"):
        asyncio.run(run_calls([Call("c", "g", 0, "p", config)], cache=None, max_concurrency=1))


# --------------------------------------------------------------------------- docs/providers.md

PROVIDERS_DOC = Path(__file__).resolve().parents[2] / "docs" / "providers.md"


def _blocks(kind: str) -> list[str]:
    text = PROVIDERS_DOC.read_text(encoding="utf-8")
    return re.findall(rf"^```{kind}\n(.*?)^```$", text, flags=re.MULTILINE | re.DOTALL)


def test_every_candidates_file_in_the_providers_doc_loads(tmp_path: Path) -> None:
    blocks = _blocks("yaml")
    assert len(blocks) >= 7
    for i, block in enumerate(blocks):
        path = tmp_path / f"example{i}.yaml"
        path.write_text(block, encoding="utf-8")
        assert load_candidates_file(path).candidates, block


def test_the_offline_example_of_the_providers_doc_runs(tmp_path: Path) -> None:
    [script] = _blocks("sh")
    files = dict(re.findall(r"cat > (\S+) <<'EOF'\n(.*?)^EOF$", script, re.MULTILINE | re.DOTALL))
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    command = script.strip().splitlines()[-1].split()
    assert command[:2] == ["assay", "eval"]
    code, out, err = run_cli(command[1:], tmp_path)
    assert code == 0, err
    results = {r["candidate"]: r for r in json.loads(out)["results"]}
    assert {r["status"] for r in results.values()} == {"pass"}
    [shown] = _blocks("text")
    assert results["chat"]["output"] == shown.rstrip("\n")
