"""A suite written as a promptfoo user writes one (prompts × vars × a default assert block × inline
judge and similar asserts × weights), run live against the loopback model: every template and
var reaches the model as written, and the judge is asked exactly where no cheaper check has
decided the golden already; the summary counts the calls saved (issue 16).

The same suite runs against the real model in tests/realmodel/test_real_server.py.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from rapidfuzz import fuzz

from tests.helpers.cli import run_cli
from tests.helpers.fake_openai import FakeOpenAI, echo_text, fake_openai
from tests.helpers.promptfoo_style import (
    ALWAYS_JUDGED,
    ALWAYS_SKIPPED,
    CANDIDATES,
    GOLDENS,
    decided_cheaply,
    judge_checks,
    skipped,
    write_suite,
)
from tests.test_judge import toml_judge

KEY = "ASSAY_TEST_KEY"


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with fake_openai() as s:
        yield s


def _run(tmp_path: Path, server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    monkeypatch.setenv(KEY, "test-key")
    provider = {"type": "openai", "base_url": server.url, "model": "echo", "api_key_env": KEY}
    provider["max_tokens"] = 64
    args = write_suite(tmp_path, provider, toml_judge(server, "judge-json", api_key_env=KEY))
    code, out, err = run_cli(args, tmp_path, timeout=60)
    assert code == 0, f"exit {code}\n{out}\n{err}"
    assert "Traceback" not in err
    return json.loads(out)  # type: ignore[no-any-return]


def test_every_prompt_and_var_reaches_the_model_as_written(
    tmp_path: Path, server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    document = _run(tmp_path, server, monkeypatch)
    ids = [(r["candidate"], r["id"]) for r in document["results"]]
    assert sorted(ids) == sorted((c, g) for c in CANDIDATES for g in GOLDENS)
    bodies = [s.body for s in server.seen if s.model == "echo"]
    assert len(bodies) == len(CANDIDATES) * len(GOLDENS)
    plain = {b["messages"][-1]["content"] for b in bodies if len(b["messages"]) == 1}
    # The file prompt's conditional: the defaults' tone is "plain", one list item overrides it.
    assert (
        "Answer in one short sentence, in a cheerful tone.\n"
        "Question: What is the capital of Japan?\n"
    ) in plain
    assert "Answer in one short sentence.\nQuestion: What is the capital of Peru?\n" in plain
    tutor = [b["messages"] for b in bodies if len(b["messages"]) == 2]
    assert len(tutor) == len(GOLDENS)
    systems = {m[0]["content"] for m in tutor}
    assert systems == {
        "You are a geography tutor. Keep answers plain and short.",
        "You are a geography tutor. Keep answers cheerful and short.",
    }
    assert all(m[0]["role"] == "system" and m[1]["role"] == "user" for m in tutor)


def test_the_judge_is_asked_only_where_no_cheaper_check_decided(
    tmp_path: Path, server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    document = _run(tmp_path, server, monkeypatch)
    results = {(r["candidate"], r["id"]): r for r in document["results"]}
    checks = judge_checks(document)
    # The echo is never JSON: as-json's is-json fails; never-says's contains always fails.
    expected_skips = {(c, g) for c in CANDIDATES for g in ("as-json", ALWAYS_SKIPPED)}
    assert {key for key, check in checks.items() if skipped(check)} == expected_skips
    for key, result in results.items():
        assert skipped(checks[key]) == decided_cheaply(result), key
        if skipped(checks[key]):
            assert result["decided_by"] == "tier1-asserts"
            assert checks[key]["reason"].startswith("skipped: ")
        else:
            assert result["decided_by"] == "tier3-judge"
            assert checks[key]["evidence"]["score"] == 0.5  # the fake judge's score
    summary = document["summary"]
    assert summary["judge_calls_saved"] == 4
    assert summary["model_calls"]["judge"]["made"] == 8
    assert server.count(model="judge-json") == 8  # one call per judge assert reached
    assert summary["model_calls"]["made"] == 12


def test_weights_and_defaults_make_the_scores(
    tmp_path: Path, server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    document = _run(tmp_path, server, monkeypatch)
    results = {(r["candidate"], r["id"]): r for r in document["results"]}
    # The defaults' two checks come first (weights 1 and 0.5), then the golden's own.
    for result in results.values():
        texts = [c["text"] for c in result["checks"]]
        assert texts[:2] == ["not-icontains:as an ai language model", "regex"]
    capital = results[("plain", "capitals#3")]
    output = echo_text("Answer in one short sentence.\nQuestion: What is the capital of Peru?\n")
    similar = fuzz.ratio(output, "The capital city is") / 100
    # (1 + 0.5 + similar × 1 + judge 0.5 × 2) / (1 + 0.5 + 1 + 2); the judge's 0.5 passes its
    # own threshold of 0.5, so the golden passes (no golden threshold: every check must pass).
    assert capital["score"] == pytest.approx((1 + 0.5 + similar + 1.0) / 4.5)
    assert capital["status"] == "pass"
    # A skipped judge is not counted: (1 + 0.5 + 0) / (1 + 0.5 + 1).
    assert results[("plain", "never-says")]["score"] == pytest.approx(0.6)
    # The weight-0 contains fails and counts for nothing; the judge (0.5 < 0.8) fails it.
    informational = results[("tutor", "informational")]
    assert informational["score"] == pytest.approx((1 + 0.5 + 0.5) / 2.5)
    assert informational["status"] == "fail"
    assert all(key[1] in ALWAYS_JUDGED or skipped(judge_checks(document)[key]) for key in results)
