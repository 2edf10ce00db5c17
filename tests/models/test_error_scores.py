"""Errors have no score (issue 27, item 16): a failed call's result has ``score: null``, means
are over the results that have a score, and a candidate whose every call failed ranks after one
whose every answer was wrong (nothing is known of it), not beside it as if it had answered 0."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

from tests.helpers.cli import run_cli
from tests.helpers.fake_openai import FakeOpenAI, fake_openai

GOLDENS = [
    {"id": "g1", "input": "hello", "asserts": ["contains:hello"]},
    {"id": "g2", "input": "bye", "asserts": ["contains:never said"]},
]


def closed_url() -> str:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{probe.getsockname()[1]}/v1"


def run(tmp_path: Path, server: FakeOpenAI, *extra: str) -> tuple[int, str, str]:
    (tmp_path / "goldens.jsonl").write_text(
        "".join(json.dumps(g) + "\n" for g in GOLDENS), encoding="utf-8"
    )
    provider = {"type": "openai", "base_url": server.url, "model": "echo", "max_tokens": 16}
    candidates: list[dict[str, Any]] = [
        # "a-down" sorts first by id: only the rule can put it last.
        {
            "id": "a-down",
            "prompt": "{{ input }}",
            "provider": {"base_url": closed_url(), "max_retries": 0},
        },
        {"id": "half", "prompt": "{{ input }}"},
        {"id": "wrong", "prompt": "nothing"},
    ]
    (tmp_path / "cands.yaml").write_text(
        json.dumps({"provider": provider, "candidates": candidates}), encoding="utf-8"
    )
    (tmp_path / "assay.toml").write_text("[gate]\nmax_error_rate = 1.0\n", encoding="utf-8")
    args = ["eval", "goldens.jsonl", "--candidates", "cands.yaml", "--no-cache", "--no-save"]
    return run_cli([*args, *extra], tmp_path)


def test_an_all_error_candidate_has_no_score_and_ranks_last(tmp_path: Path) -> None:
    with fake_openai() as server:
        code, out, err = run(tmp_path, server, "--json")
    assert code == 0, err
    document = json.loads(out)
    down = [r for r in document["results"] if r["candidate"] == "a-down"]
    assert [(r["status"], r["score"]) for r in down] == [("error", None), ("error", None)]
    ranked = [(s["candidate"], s["mean_score"]) for s in document["summary"]["candidates"]]
    assert ranked == [("half", 0.5), ("wrong", 0.0), ("a-down", None)]
    # The run's mean is over the four scored results, not the six.
    assert document["summary"]["mean_score"] == 0.25


def test_the_text_report_says_n_a_for_a_candidate_with_no_score(tmp_path: Path) -> None:
    with fake_openai() as server:
        code, out, err = run(tmp_path, server)
    assert code == 0, err
    assert "a-down: mean score n/a, pass rate 0.0% (2 goldens)" in out
    assert "0 fail, 0 needs-judge, 0 no-output, 2 error · pass rate 0.0% · mean score n/a" in out
    assert "3. a-down" in out
