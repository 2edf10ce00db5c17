"""The OpenAI-compatible presets (and the generic http provider) against the real llama.cpp
server: each preset, its base_url pointed at the server, makes its call with the key the server
wants, reads usage and the finish reason, and surfaces the server's own message for a wrong key.
Plumbing only, never answer quality."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.cli import run_cli
from tests.realmodel.conftest import KEY_ENV, Server

pytestmark = pytest.mark.realmodel

PRESETS = (
    "openrouter",
    "perplexity",
    "groq",
    "mistral",
    "cerebras",
    "together",
    "fireworks",
    "deepseek",
    "vllm",
    "ollama-openai",
)
TIMEOUT_S = 180.0


def project(root: Path, server: Server, candidates: list[dict[str, Any]], **base: Any) -> list[str]:
    golden = {
        "id": "france",
        "input": "What is the capital of France?",
        "asserts": ["not-contains:zzzz"],
    }
    (root / "goldens.jsonl").write_text(json.dumps(golden) + "\n")
    provider = {
        "type": "openai",
        "base_url": server.url,
        "model": "gemma-3-270m",
        "api_key_env": KEY_ENV,
        "max_tokens": 8,
        "timeout_s": 60,
        "max_retries": 1,
        "max_concurrency": 2,
        **base,
    }
    document = {"provider": provider, "candidates": candidates}
    (root / "cands.yaml").write_text(json.dumps(document))
    return ["eval", "goldens.jsonl", "--candidates", "cands.yaml", "--json"]


def run_json(args: list[str], root: Path, code: int = 0) -> dict[str, Any]:
    got, out, err = run_cli(args, root, TIMEOUT_S)
    assert got == code, f"exit {got}\n{out}\n{err}"
    assert "Traceback" not in err
    return json.loads(out)  # type: ignore[no-any-return]


def test_every_preset_calls_the_real_server(llama: Server, api_key: str, tmp_path: Path) -> None:
    candidates = [
        {"id": kind, "prompt": "{{ input }}", "provider": {"type": kind}} for kind in PRESETS
    ]
    document = run_json(project(tmp_path, llama, candidates), tmp_path)
    calls = document["summary"]["model_calls"]
    assert (calls["made"], calls["errors"]) == (len(PRESETS), 0)
    assert calls["input_tokens"] > 0 and calls["output_tokens"] > 0
    assert {r["candidate"] for r in document["results"]} == set(PRESETS)
    for result in document["results"]:
        assert result["status"] != "error", result
        assert result["finish_reason"] in ("stop", "length")
    again = run_json(project(tmp_path, llama, candidates), tmp_path)
    assert again["summary"]["model_calls"]["cache_hits"] == len(PRESETS)


def test_a_presets_wrong_key_surfaces_the_servers_message(
    llama: Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASSAY_WRONG_KEY", "not-the-key")
    candidates = [{"id": "groq", "prompt": "{{ input }}", "provider": {"type": "groq"}}]
    args = project(tmp_path, llama, candidates, api_key_env="ASSAY_WRONG_KEY")
    document = run_json([*args, "--no-cache"], tmp_path, code=1)
    [result] = document["results"]
    assert result["status"] == "error"
    assert result["notes"][0].startswith("request rejected (401): Invalid API Key")


def test_the_http_provider_reads_the_real_servers_answer_by_its_path(
    llama: Server, api_key: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASSAY_REAL_BEARER", "Bearer assay-test-key")
    http = {
        "type": "http",
        "url": llama.url + "/chat/completions",
        "header_env": {"Authorization": "ASSAY_REAL_BEARER"},
        "body": {
            "model": "gemma-3-270m",
            "max_tokens": 8,
            "messages": [{"role": "user", "content": "{{ prompt }}"}],
        },
        "response_path": "choices[0].message.content",
        "timeout_s": 60,
        "max_retries": 1,
    }
    (tmp_path / "goldens.jsonl").write_text(
        json.dumps(
            {"id": "france", "input": "Capital of France?", "asserts": ["not-contains:zzzz"]}
        )
        + "\n"
    )
    document = {"provider": http, "candidates": [{"id": "app", "prompt": "{{ input }}"}]}
    (tmp_path / "cands.yaml").write_text(json.dumps(document))
    args = ["eval", "goldens.jsonl", "--candidates", "cands.yaml", "--json", "--no-cache"]
    result = run_json(args, tmp_path)
    [row] = result["results"]
    assert row["status"] != "error", row
    assert isinstance(row["output"], str) and row["output"]
