"""What a live run shows of the model's answers: the text in ``--json`` results, an outputs
file (``--format outputs``) that ``--outputs`` reads back, the finish reason on every result, a
``truncated`` note, and ``natural-stop``, which fails an answer cut off at the length limit.
Against the loopback fake (the real-model suite shows the same against llama.cpp's server)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers.cli import run_cli
from tests.helpers.fake_openai import echo_text, fake_openai
from tests.models.test_cache import live_run, write_candidates, write_goldens

GOLDENS = [
    {"id": "capital", "input": "What is the capital of France?", "asserts": ["contains:France"]},
    {"id": "stop", "input": "Say hi.", "asserts": ["natural-stop"]},
]


def test_json_results_carry_the_answer_and_finish_reason(tmp_path: Path) -> None:
    with fake_openai() as server:
        goldens = write_goldens(tmp_path, GOLDENS)
        document = live_run(tmp_path, goldens, write_candidates(tmp_path, server))
    by_id = {r["id"]: r for r in document["results"]}
    assert by_id["capital"]["output"] == echo_text("Q: What is the capital of France?")
    assert by_id["capital"]["finish_reason"] == "stop"
    assert by_id["stop"]["status"] == "pass"


def test_a_truncated_answer_is_noted_and_fails_natural_stop(tmp_path: Path) -> None:
    with fake_openai() as server:
        goldens = write_goldens(tmp_path, GOLDENS)
        candidates = write_candidates(tmp_path, server, model="truncated")
        document = live_run(tmp_path, goldens, candidates)
    by_id = {r["id"]: r for r in document["results"]}
    assert by_id["capital"]["finish_reason"] == "length"
    assert "truncated: the model stopped at its length limit (length)" in by_id["capital"]["notes"]
    [check] = by_id["stop"]["checks"]
    assert check["passed"] is False
    assert check["evidence"] == {"reason": "truncated", "finish_reason": "length"}


def test_a_truncated_answer_is_noted_in_the_text_rows(tmp_path: Path) -> None:
    # The note was only in --json: the text row of a passing answer cut short said nothing.
    with fake_openai() as server:
        goldens = write_goldens(tmp_path, GOLDENS[:1])
        candidates = write_candidates(tmp_path, server, model="truncated")
        code, out, err = run_cli(["eval", goldens, "--candidates", candidates], tmp_path)
    assert code == 0, err
    [row] = [line for line in out.splitlines() if " capital " in line]
    assert row.startswith("  PASS")
    assert row.endswith("[truncated: the model stopped at its length limit (length)]")


def test_natural_stop_fails_closed_on_a_static_output(tmp_path: Path) -> None:
    goldens = write_goldens(tmp_path, GOLDENS[1:])
    (tmp_path / "out.json").write_text(json.dumps({"stop": "hi"}), encoding="utf-8")
    code, out, _ = run_cli(["gate", goldens, "--outputs", "out.json", "--json"], tmp_path)
    assert code == 0
    [result] = json.loads(out)["results"]
    assert result["checks"][0]["evidence"] == {"reason": "no_finish_reason"}


def test_format_outputs_writes_a_file_outputs_reads_back(tmp_path: Path) -> None:
    with fake_openai() as server:
        goldens = write_goldens(tmp_path, GOLDENS[:1])
        candidates = write_candidates(
            tmp_path, server, (("brief", "Q: {{ input }}"), ("polite", "Please: {{ input }}"))
        )
        args = ["eval", goldens, "--candidates", candidates, "--format", "outputs"]
        code, out, err = run_cli([*args, "--output", "answers.jsonl"], tmp_path)
        assert code == 0, err
        calls = server.total
    rows = [json.loads(line) for line in (tmp_path / "answers.jsonl").read_text().splitlines()]
    assert rows == [
        {
            "id": "capital",
            "candidate": "brief",
            "output": echo_text("Q: What is the capital of France?"),
        },
        {
            "id": "capital",
            "candidate": "polite",
            "output": echo_text("Please: What is the capital of France?"),
        },
    ]
    assert calls == 2
    # Re-scored from the file: the same verdicts, no model call.
    code, out, err = run_cli(["gate", goldens, "--outputs", "answers.jsonl", "--json"], tmp_path)
    assert code == 0, err
    assert {(r["candidate"], r["status"]) for r in json.loads(out)["results"]} == {
        ("brief", "pass"),
        ("polite", "pass"),
    }


def test_format_outputs_to_a_json_file_writes_json_outputs_reads_back(tmp_path: Path) -> None:
    # It wrote JSON Lines into answers.json, which --outputs then refused as invalid JSON.
    with fake_openai() as server:
        goldens = write_goldens(tmp_path, GOLDENS[:1])
        candidates = write_candidates(
            tmp_path, server, (("brief", "Q: {{ input }}"), ("polite", "Please: {{ input }}"))
        )
        args = ["eval", goldens, "--candidates", candidates, "-f", "outputs", "-o", "answers.json"]
        code, _, err = run_cli(args, tmp_path)
        assert code == 0, err
    assert json.loads((tmp_path / "answers.json").read_text()) == {
        "brief": {"capital": echo_text("Q: What is the capital of France?")},
        "polite": {"capital": echo_text("Please: What is the capital of France?")},
    }
    code, out, err = run_cli(["gate", goldens, "--outputs", "answers.json", "--json"], tmp_path)
    assert code == 0, err
    assert {(r["candidate"], r["status"]) for r in json.loads(out)["results"]} == {
        ("brief", "pass"),
        ("polite", "pass"),
    }


def test_the_default_candidates_outputs_as_json_are_the_plain_object(tmp_path: Path) -> None:
    goldens = write_goldens(tmp_path, GOLDENS[:1])
    (tmp_path / "out.json").write_text(json.dumps({"capital": "Paris, France"}), encoding="utf-8")
    args = ["gate", goldens, "--outputs", "out.json", "-f", "outputs", "-o", "again.json"]
    code, _, err = run_cli(args, tmp_path)
    assert code == 0, err
    assert json.loads((tmp_path / "again.json").read_text()) == {"capital": "Paris, France"}


def test_format_outputs_refuses_an_agent_run(tmp_path: Path) -> None:
    from tests.helpers.telemetry import smoke_telemetry

    smoke_telemetry(tmp_path / "tel")
    args = ["bench", "--telemetry", "tel", "--tier", "smoke", "--no-save", "--format", "outputs"]
    code, _, err = run_cli(args, tmp_path)
    assert code == 1
    assert err.splitlines()[-1] == (
        "assay: error: --format outputs applies to goldens runs, which have outputs"
    )
