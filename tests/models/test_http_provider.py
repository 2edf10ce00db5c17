"""The generic http provider against a loopback server: the request (method, URL, query, headers,
the body template rendered with the prompt and the golden's vars), the answer read by
response_path, by a python transform_response or as the whole body, the app's error bodies, a
429 retried, the vars in the cache key, and one line for each bad setting."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from assay.errors import ConfigError
from assay.models._candidates_file import load_candidates_file
from assay.models._runner import Call, Outcome, RunStats, run_calls
from assay.models.providers import ProviderConfig
from assay.models.providers.http import TransformError, parse_path, transform_digest
from tests.helpers.cli import run_cli
from tests.helpers.fake_http import FakeHTTP, Request


@pytest.fixture
def server() -> Iterator[FakeHTTP]:
    with FakeHTTP() as s:
        yield s


def http(url: str, body: Any = None, **settings: Any) -> ProviderConfig:
    text = None if body is None else json.dumps(body, sort_keys=True, separators=(",", ":"))
    return ProviderConfig(type="http", url=url, body=text, **settings)


def run(*calls: Call, root: Path | None = None) -> tuple[list[Outcome], RunStats]:
    delays: list[float] = []
    coroutine = run_calls(calls, cache=None, max_concurrency=4, sleep=delays.append, root=root)
    return asyncio.run(coroutine)


def call(config: ProviderConfig, prompt: str, context: dict[str, Any] | None = None) -> Call:
    return Call("cand", "g1", 0, prompt, config, context=context or {"id": "g1", "input": "x"})


def text_of(outcome: Outcome) -> str:
    assert outcome.error is None, outcome.error
    assert outcome.completion is not None
    return outcome.completion.text


# --------------------------------------------------------------------------- the request


def test_the_body_template_sees_the_prompt_and_the_goldens_vars(
    server: FakeHTTP, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASSAY_APP_TOKEN", "Bearer app-1")
    body = {
        "question": "{{ prompt }}",
        "user": "{{ user }}",
        "meta": {"tags": "{{ tags }}", "n": 3},
    }
    config = http(
        server.url("/api/answer?v=2"),
        body,
        headers=(("x-team", "evals"),),
        header_env=(("Authorization", "ASSAY_APP_TOKEN"),),
        response_path="output",
    )
    server.reply = lambda r: (200, {"output": f"{r.json['user']} asked {r.json['question']}"}, {})
    context = {"id": "g1", "input": "x", "vars": {"user": "ada", "tags": ["a", "b"]}}
    [outcome], _ = run(call(config, 'say "hi"', context))
    assert text_of(outcome) == 'ada asked say "hi"'
    [seen] = server.seen
    assert (seen.method, seen.path, seen.query) == ("POST", "/api/answer", {"v": ["2"]})
    assert seen.headers["authorization"] == "Bearer app-1"
    assert seen.headers["x-team"] == "evals"
    assert seen.headers["content-type"] == "application/json"
    assert seen.json == {
        "question": 'say "hi"',
        "user": "ada",
        "meta": {"tags": '["a","b"]', "n": 3},
    }


def test_a_string_body_is_sent_as_its_rendered_text(server: FakeHTTP) -> None:
    server.reply = lambda r: (200, r.body, {"Content-Type": "text/plain"})
    config = http(server.url("/raw"), '{"q": {{ prompt | tojson }}, "lang": "{{ lang }}"}')
    context = {"id": "g1", "input": "x", "vars": {"lang": "fr"}}
    [outcome], _ = run(call(config, 'line one\nand "two"', context))
    # No response_path: the answer is the whole body, here the request echoed back.
    assert json.loads(text_of(outcome)) == {"q": 'line one\nand "two"', "lang": "fr"}


def test_a_get_sends_no_body(server: FakeHTTP) -> None:
    server.reply = lambda r: (200, {"data": {"items": [{"text": "first"}]}}, {})
    config = http(server.url("/search?q=x"), method="GET", response_path="data.items[0].text")
    [outcome], _ = run(call(config, "ignored"))
    assert text_of(outcome) == "first"
    assert (server.seen[0].method, server.seen[0].body) == ("GET", b"")


# --------------------------------------------------------------------------- the answer


@pytest.mark.parametrize(
    ("path", "answer", "expected"),
    [
        ("choices[0].message.content", {"choices": [{"message": {"content": "hey"}}]}, "hey"),
        ("output", {"output": {"a": [1, 2]}}, '{"a":[1,2]}'),
        ("items.1", {"items": ["x", "y"]}, "y"),
        ("n", {"n": 4.5}, "4.5"),
    ],
)
def test_response_path_reads_the_answer(
    server: FakeHTTP, path: str, answer: Any, expected: str
) -> None:
    server.reply = lambda r: (200, answer, {})
    [outcome], _ = run(call(http(server.url("/a"), {"p": "{{ prompt }}"}, response_path=path), "q"))
    assert text_of(outcome) == expected


def test_a_response_path_that_finds_nothing_says_where_it_stopped(server: FakeHTTP) -> None:
    server.reply = lambda r: (200, {"choices": []}, {})
    config = http(server.url("/a"), response_path="choices[0].message.content", max_retries=3)
    [outcome], _ = run(call(config, "q"))
    assert outcome.error == (
        "response_path 'choices[0].message.content': the answer's choices has no [0] "
        "(JSON body) after 1 attempt(s)"
    )


def test_transform_response_is_called_with_the_json_and_the_text(
    server: FakeHTTP, tmp_path: Path
) -> None:
    (tmp_path / "parse.py").write_text(
        "def answer(json, text):\n"
        "    return {'output': json['reply'].upper() + ' ' + str(len(text)),\n"
        "            'tokenUsage': {'prompt': 3, 'completion': 2, 'total': 5}}\n"
        "def plain(json, text):\n"
        "    return text[::-1]\n"
    )
    server.reply = lambda r: (200, {"reply": "ok"}, {})
    mapped = http(server.url("/a"), transform_response="parse.py:answer")
    reversed_ = http(server.url("/a"), transform_response="file://parse.py:plain")
    outcomes, stats = run(call(mapped, "q"), call(reversed_, "q"), root=tmp_path)
    assert text_of(outcomes[0]) == f"OK {len(json.dumps({'reply': 'ok'}))}"
    assert (stats.input_tokens, stats.output_tokens) == (3, 2)
    assert text_of(outcomes[1]) == json.dumps({"reply": "ok"})[::-1]


def test_a_transform_that_raises_is_the_calls_error(server: FakeHTTP, tmp_path: Path) -> None:
    (tmp_path / "parse.py").write_text("def answer(json, text):\n    return json['missing']\n")
    config = http(server.url("/a"), transform_response="parse.py:answer")
    [outcome], _ = run(call(config, "q"), root=tmp_path)
    assert outcome.error == (
        "transform_response 'parse.py:answer' raised KeyError: 'missing' after 1 attempt(s)"
    )


# --------------------------------------------------------------------------- status handling


def test_a_429_is_retried_and_an_apps_4xx_keeps_its_message(server: FakeHTTP) -> None:
    answered: dict[str, int] = {}

    def reply(request: Request) -> tuple[int, Any, dict[str, str]]:
        prompt = request.json["p"]
        answered[prompt] = answered.get(prompt, 0) + 1
        if prompt == "busy" and answered[prompt] < 3:
            return 429, {"error": "slow down"}, {"Retry-After": "0"}
        if prompt == "bad":
            return 422, {"message": "field p is too short"}, {}
        if prompt == "down":
            return 503, "upstream unavailable", {"Content-Type": "text/plain"}
        return 200, {"out": prompt}, {}

    server.reply = reply
    config = http(server.url("/a"), {"p": "{{ prompt }}"}, response_path="out", max_retries=2)
    outcomes, _ = run(call(config, "busy"), call(config, "bad"), call(config, "down"))
    assert text_of(outcomes[0]) == "busy" and outcomes[0].attempts == 3
    assert outcomes[1].error == "request rejected (422): field p is too short after 1 attempt(s)"
    assert outcomes[2].error == "server error (503) after 3 attempt(s)"


def test_an_unreachable_app_is_named_by_its_url_without_the_query() -> None:
    config = http("http://127.0.0.1:9/api?token=secret", max_retries=0)
    [outcome], _ = run(call(config, "q"))
    assert outcome.error is not None
    assert outcome.error.startswith("connection to http://127.0.0.1:9/api failed (")
    assert "secret" not in outcome.error


# --------------------------------------------------------------------------- through assay eval


def write_project(root: Path, provider: dict[str, Any]) -> list[str]:
    goldens = [
        {"id": "ada", "input": "same", "vars": {"user": "ada"}, "asserts": ["contains:echo"]},
        {"id": "bob", "input": "same", "vars": {"user": "bob"}, "asserts": ["contains:echo"]},
    ]
    (root / "goldens.jsonl").write_text("".join(json.dumps(g) + "\n" for g in goldens))
    document = {"provider": provider, "candidates": [{"id": "a", "prompt": "{{ input }}"}]}
    (root / "cands.yaml").write_text(json.dumps(document))
    return ["eval", "goldens.jsonl", "--candidates", "cands.yaml", "--json"]


def test_goldens_with_one_prompt_and_different_vars_do_not_share_a_cached_answer(
    server: FakeHTTP, tmp_path: Path
) -> None:
    server.reply = lambda r: (200, {"output": f"echo {r.json['user']}: {r.json['prompt']}"}, {})
    provider = {
        "type": "http",
        "url": server.url("/chat"),
        "body": {"prompt": "{{ prompt }}", "user": "{{ user }}"},
        "response_path": "output",
    }
    args = write_project(tmp_path, provider)
    code, out, err = run_cli(args, tmp_path)
    assert code == 0, err
    first = json.loads(out)
    assert first["summary"]["model_calls"]["made"] == 2
    outputs = {r["id"]: r["output"] for r in first["results"]}
    assert outputs == {"ada": "echo ada: same", "bob": "echo bob: same"}
    code, out, err = run_cli(args, tmp_path)
    second = json.loads(out)
    assert (
        second["summary"]["model_calls"]["made"],
        second["summary"]["model_calls"]["cache_hits"],
    ) == (0, 2)
    assert {r["id"]: r["output"] for r in second["results"]} == outputs
    assert len(server.seen) == 2


def test_an_edited_transform_response_file_is_a_cache_miss(
    server: FakeHTTP, tmp_path: Path
) -> None:
    server.reply = lambda r: (200, {"output": "hello"}, {})
    (tmp_path / "parse.py").write_text("def f(json, text):\n    return json['output']\n")
    provider = {"type": "http", "url": server.url("/chat"), "transform_response": "parse.py:f"}
    args = write_project(tmp_path, provider)
    code, out, err = run_cli(args, tmp_path)
    assert code == 0, err
    assert json.loads(out)["summary"]["model_calls"]["made"] == 2
    (tmp_path / "parse.py").write_text("def f(json, text):\n    return json['output'].upper()\n")
    code, out, err = run_cli(args, tmp_path)
    assert code == 0, err
    second = json.loads(out)
    assert second["summary"]["model_calls"]["made"] == 2  # not answered from the cache
    assert {r["output"] for r in second["results"]} == {"HELLO"}


def test_a_body_template_naming_a_var_a_golden_lacks_stops_the_run_in_one_line(
    server: FakeHTTP, tmp_path: Path
) -> None:
    provider = {"type": "http", "url": server.url("/chat"), "body": {"who": "{{ team }}"}}
    code, _, err = run_cli(write_project(tmp_path, provider), tmp_path)
    assert code == 1 and "Traceback" not in err
    [line] = err.strip().splitlines()
    assert "cands.yaml" in line and "provider.body" in line and "'team'" in line
    assert server.seen == []


# --------------------------------------------------------------------------- bad settings


@pytest.mark.parametrize(
    ("provider", "field", "words"),
    [
        ({"type": "http"}, "url", "the http provider needs 'url'"),
        ({"type": "http", "url": "ftp://x"}, "url", "must be an http:// or https:// URL"),
        ({"type": "http", "url": "http://x", "method": "FETCH"}, "method", "must be one of GET"),
        ({"type": "http", "url": "http://x", "model": "m"}, "model", "does not support 'model'"),
        (
            {"type": "http", "url": "http://x", "response_path": "a..b"},
            "response_path",
            "is not a path",
        ),
        (
            {"type": "http", "url": "http://x", "transform_response": "parse.py"},
            "transform_response",
            "must name a function in a python file",
        ),
        (
            {
                "type": "http",
                "url": "http://x",
                "response_path": "a",
                "transform_response": "p.py:f",
            },
            "transform_response",
            "not both",
        ),
        ({"type": "http", "url": "http://x", "body": {"q": "{{ prompt "}}, "body", "syntax error"),
        ({"type": "openai", "model": "m", "body": {"q": 1}}, "body", "does not support 'body'"),
    ],
)
def test_a_bad_http_setting_is_one_line_naming_the_field(
    tmp_path: Path, provider: dict[str, Any], field: str, words: str
) -> None:
    path = tmp_path / "cands.yaml"
    path.write_text(json.dumps({"provider": provider, "candidates": [{"id": "a", "prompt": "x"}]}))
    with pytest.raises(ConfigError) as caught:
        load_candidates_file(path)
    assert caught.value.source == str(path)
    assert caught.value.field == f"provider.{field}"
    assert words in caught.value.message


def test_a_transform_file_that_is_missing_stops_the_run_naming_the_setting(
    server: FakeHTTP, tmp_path: Path
) -> None:
    provider = {"type": "http", "url": server.url("/chat"), "transform_response": "nope.py:f"}
    code, _, err = run_cli(write_project(tmp_path, provider), tmp_path)
    assert code == 1 and "Traceback" not in err
    [line] = err.strip().splitlines()
    assert "cands.yaml" in line and "provider.transform_response" in line and "nope.py" in line


def test_the_method_is_kept_in_upper_case(tmp_path: Path) -> None:
    path = tmp_path / "cands.yaml"
    provider = {"type": "http", "url": "http://127.0.0.1:9/x", "method": "put"}
    path.write_text(json.dumps({"provider": provider, "candidates": [{"id": "a", "prompt": "x"}]}))
    assert load_candidates_file(path).candidates[0].provider.method == "PUT"


def test_parse_path_steps() -> None:
    assert parse_path("choices[0].message.content") == ("choices", 0, "message", "content")
    assert parse_path("[1].text") == (1, "text")
    assert parse_path("a.0.b") == ("a", "0", "b")


def test_transform_digest_is_the_files_sha256(tmp_path: Path) -> None:
    import hashlib

    (tmp_path / "parse.py").write_text("def f(json, text):\n    return text\n")
    config = http("http://127.0.0.1:9/x", transform_response="parse.py:f")
    expected = hashlib.sha256((tmp_path / "parse.py").read_bytes()).hexdigest()
    assert transform_digest(config, tmp_path) == expected
    assert transform_digest(http("http://127.0.0.1:9/x"), tmp_path) is None
    with pytest.raises(TransformError, match="no file"):
        transform_digest(http("http://127.0.0.1:9/x", transform_response="gone.py:f"), tmp_path)
