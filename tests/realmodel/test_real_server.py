"""assay against a real model: llama.cpp's server and Gemma 3 270M, on loopback.

These tests assert plumbing, never answer quality: calls made and cached, usage read, the
finish reason recorded, the server's own message in error results, repeats as distinct calls,
a schema-constrained judge that decides and is cached, a run that can be gated, and a suite
written as a promptfoo user would whose judge asserts are asked only where reached.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.cli import run_cli
from tests.helpers.promptfoo_style import (
    ALWAYS_SKIPPED,
    CANDIDATES,
    GOLDENS,
    decided_cheaply,
    judge_checks,
    skipped,
    write_suite,
)
from tests.realmodel.conftest import KEY_ENV, Server

pytestmark = pytest.mark.realmodel

QUESTIONS = [
    ("france", "What is the capital of France?"),
    ("spain", "What is the capital of Spain?"),
    ("sum", "What is 2 + 2?"),
]
TIMEOUT_S = 120.0


def project(
    root: Path, server: Server, *, repeats: int = 1, key_env: str = KEY_ENV, **provider: Any
) -> list[str]:
    goldens = [
        {"id": gid, "input": question, "asserts": ["not-contains:zzzz"]}
        for gid, question in QUESTIONS
    ]
    (root / "goldens.jsonl").write_text("".join(json.dumps(g) + "\n" for g in goldens))
    settings = {
        "type": "openai",
        "base_url": server.url,
        "model": "gemma-3-270m",
        "api_key_env": key_env,
        "max_tokens": 8,
        "timeout_s": 60,
        "max_retries": 1,
        "max_concurrency": 2,
        **provider,
    }
    document = {
        "provider": settings,
        "candidates": [{"id": "qa", "prompt": "{{ input }}"}],
        "repeats": repeats,
    }
    (root / "cands.yaml").write_text(json.dumps(document))  # JSON is YAML
    return ["eval", "goldens.jsonl", "--candidates", "cands.yaml", "--json"]


def run_json(args: list[str], root: Path, code: int = 0) -> dict[str, Any]:
    got, out, err = run_cli(args, root, TIMEOUT_S)
    assert got == code, f"exit {got}\n{out}\n{err}"
    assert "Traceback" not in err
    return json.loads(out)  # type: ignore[no-any-return]


def test_calls_are_made_then_cached_with_usage_and_finish_reason(
    llama: Server, api_key: str, tmp_path: Path
) -> None:
    args = project(tmp_path, llama)
    first = run_json(args, tmp_path)
    calls = first["summary"]["model_calls"]
    assert (calls["made"], calls["cache_hits"], calls["errors"]) == (3, 0, 0)
    assert calls["input_tokens"] > 0 and calls["output_tokens"] > 0
    for result in first["results"]:
        assert result["finish_reason"] in ("stop", "length")
        assert isinstance(result["output"], str)
    second = run_json(args, tmp_path)
    calls = second["summary"]["model_calls"]
    assert (calls["made"], calls["cache_hits"]) == (0, 3)
    assert [r["output"] for r in second["results"]] == [r["output"] for r in first["results"]]
    assert [r["finish_reason"] for r in second["results"]] == [
        r["finish_reason"] for r in first["results"]
    ]


def test_a_length_limit_is_recorded_as_truncated(
    llama: Server, api_key: str, tmp_path: Path
) -> None:
    document = run_json([*project(tmp_path, llama, max_tokens=1), "--no-cache"], tmp_path)
    for result in document["results"]:
        assert result["finish_reason"] == "length"
        assert "truncated: the model stopped at its length limit (length)" in result["notes"]


def test_repeats_are_distinct_calls(llama: Server, api_key: str, tmp_path: Path) -> None:
    document = run_json([*project(tmp_path, llama, repeats=2), "--no-cache"], tmp_path)
    assert document["summary"]["model_calls"]["made"] == 6
    assert {r["repeats"]["k"] for r in document["results"]} == {2}


def test_a_wrong_key_surfaces_the_servers_message(
    llama: Server, api_key: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    good = project(tmp_path, llama)
    code, _, err = run_cli([*good, "--write-baseline"], tmp_path, TIMEOUT_S)
    assert code == 0, err
    monkeypatch.setenv("ASSAY_WRONG_KEY", "not-the-key")
    args = project(tmp_path, llama, key_env="ASSAY_WRONG_KEY")
    document = run_json([*args, "--no-cache"], tmp_path, code=1)  # all errors: undecided
    for result in document["results"]:
        assert result["status"] == "error"
        assert result["notes"][0].startswith("request rejected (401): Invalid API Key")
    # Under --check a rejected key is no regression: the gate cannot decide, exit 1, never 2.
    code, _, err = run_cli([*args, "--no-cache", "--check"], tmp_path, TIMEOUT_S)
    assert code == 1
    assert "the gate cannot decide: 3 of 3 result(s) are errors" in err
    assert "Invalid API Key" in err


def test_an_over_long_prompt_surfaces_the_servers_message(
    llama: Server, api_key: str, tmp_path: Path
) -> None:
    args = project(tmp_path, llama)
    long = {"id": "long", "input": "word " * 3000, "asserts": ["not-contains:zzzz"]}
    (tmp_path / "goldens.jsonl").write_text(json.dumps(long) + "\n")
    [result] = run_json([*args, "--no-cache"], tmp_path, code=1)["results"]
    assert result["status"] == "error"
    note = result["notes"][0]
    assert note.startswith("request rejected (400): ")
    assert "context size" in note


def test_the_schema_constrained_judge_decides_and_is_cached(
    llama_judge: Server, api_key: str, tmp_path: Path
) -> None:
    (tmp_path / "assay.toml").write_text(
        # The server constrains every reply to judge-schema.json (-jf); with response_format
        # per request the 270M model filled the JSON with whitespace until max_tokens.
        "[judge]\nverified = true\nstructured = false\n[judge.provider]\n"
        f'type = "openai"\nbase_url = "{llama_judge.url}"\nmodel = "gemma-3-270m"\n'
        f'api_key_env = "{KEY_ENV}"\nmax_tokens = 48\ntimeout_s = 60\n'
    )
    goldens = [
        {"id": "capital", "input": "Capital of France?", "rubric": "Names Paris."},
        {"id": "maths", "input": "2 + 2?", "rubric": "Says 4."},
    ]
    (tmp_path / "goldens.jsonl").write_text("".join(json.dumps(g) + "\n" for g in goldens))
    (tmp_path / "out.json").write_text(json.dumps({"capital": "Paris", "maths": "4"}))
    args = ["gate", "goldens.jsonl", "--outputs", "out.json", "--json"]
    first = run_json(args, tmp_path)
    for result in first["results"]:
        assert result["status"] in ("pass", "fail"), result  # decided, never a judge-error
        assert result["decided_by"] == "tier3-judge"
        assert result["score"] in (0, 0.25, 0.5, 0.75, 1)  # judge-schema.json's enum
    assert first["summary"]["model_calls"]["judge"]["made"] == 2
    second = run_json(args, tmp_path)
    assert second["summary"]["model_calls"]["judge"]["cache_hits"] == 2
    assert [r["score"] for r in second["results"]] == [r["score"] for r in first["results"]]


def test_a_live_run_can_be_gated(llama: Server, api_key: str, tmp_path: Path) -> None:
    args = project(tmp_path, llama)
    code, _, err = run_cli([*args, "--write-baseline"], tmp_path, TIMEOUT_S)
    assert code == 0, err
    baseline = json.loads((tmp_path / "assay-baseline.json").read_text())
    entry = baseline["goldens"]["qa"]["france"]
    assert (entry["trials"], entry["random"]) == (1, True)
    # Against the same answers (the cache) there is no evidence of a regression.
    code, out, err = run_cli([*args, "--check"], tmp_path, TIMEOUT_S)
    assert code == 0, out + err
    assert json.loads(out)["summary"]["gate"] == "passed"


def test_a_promptfoo_style_suite_runs_with_the_judge_only_where_reached(
    llama: Server, llama_judge: Server, api_key: str, tmp_path: Path
) -> None:
    # prompts × vars × a default assert block × inline similar and judge asserts × weights
    # (tests/helpers/promptfoo_style.py), the answers from one server, the verdicts from the
    # schema-constrained one.
    provider = {
        "type": "openai",
        "base_url": llama.url,
        "model": "gemma-3-270m",
        "api_key_env": KEY_ENV,
        "max_tokens": 8,
        "timeout_s": 60,
        "max_retries": 1,
        "max_concurrency": 2,
    }
    judge = (
        "[judge]\nverified = true\nstructured = false\n[judge.provider]\n"
        f'type = "openai"\nbase_url = "{llama_judge.url}"\nmodel = "gemma-3-270m"\n'
        f'api_key_env = "{KEY_ENV}"\nmax_tokens = 48\ntimeout_s = 60\n'
    )
    document = run_json(write_suite(tmp_path, provider, judge), tmp_path)
    results = {(r["candidate"], r["id"]): r for r in document["results"]}
    assert sorted(results) == sorted((c, g) for c in CANDIDATES for g in GOLDENS)
    checks = judge_checks(document)
    reached = [key for key, check in checks.items() if not skipped(check)]
    for key, result in results.items():
        assert result["status"] in ("pass", "fail"), result  # decided: no call failed
        # What the model said decides which judge asserts are reached; the rule does not vary.
        assert skipped(checks[key]) == decided_cheaply(result), key
        if not skipped(checks[key]):
            assert result["decided_by"] == "tier3-judge"
            assert checks[key]["evidence"]["score"] in (0, 0.25, 0.5, 0.75, 1)
    assert all(skipped(checks[(c, ALWAYS_SKIPPED)]) for c in CANDIDATES)
    summary = document["summary"]
    assert summary["judge_calls_saved"] == len(checks) - len(reached) >= len(CANDIDATES)
    assert summary["model_calls"]["judge"]["made"] == len(reached) > 0
    assert summary["model_calls"]["made"] == len(results)
