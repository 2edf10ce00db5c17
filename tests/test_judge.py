"""The tier 3 judge: verdict parsing, and judging through run_gate and the CLI against a real
OpenAI-compatible server on loopback (scores vs thresholds, one retry for an unparseable verdict,
judge-error, caching, the verified switch)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from assay.cascade._judge import judge, judge_prompt, parse_verdict
from assay.config import JudgeSettings, load_config
from assay.errors import ConfigError
from assay.gate._run import GateOptions, run_gate
from tests.helpers.cli import run_cli
from tests.helpers.fake_openai import GARBAGE, FakeOpenAI, fake_openai


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with fake_openai() as s:
        yield s


# --------------------------------------------------------------------------- parse_verdict


@pytest.mark.parametrize(
    "text, score, reason",
    [
        ('{"score": 0.8, "reason": "mostly right"}', 0.8, "mostly right"),
        ('  {"score": 1, "reason": "perfect"}\n', 1.0, "perfect"),
        ('{"score": 0}', 0.0, ""),
        ('{"reason": "meh", "score": 0.25}', 0.25, "meh"),
        ('{"score": 0.6, "reason": 42}', 0.6, ""),
        ('```json\n{"score": 0.7, "reason": "fenced"}\n```', 0.7, "fenced"),
        ('Verdict:\n```\n{"score": 0.55, "reason": "plain fence"}\n```\nbye', 0.55, "plain fence"),
        ('Here you go:\n```JSON\n{"score": 0.9, "reason": "upper"}\n```', 0.9, "upper"),
        ('I think {"score": 0.4, "reason": "in prose"} is fair.', 0.4, "in prose"),
        ('Scores: {"score": 5} no wait {"score": 0.3, "reason": "second"}', 0.3, "second"),
        ('{"verdict": {"score": 2}} then {"score": 0.45}', 0.45, ""),
        ("0.75", 0.75, ""),
        ("  1 \n", 1.0, ""),
        ("0", 0.0, ""),
        ("0.5.", 0.5, ""),
        ("Score: 0.35", 0.35, ""),
        ("score=0.2", 0.2, ""),
    ],
)
def test_parse_verdict_finds_the_score(text: str, score: float, reason: str) -> None:
    assert parse_verdict(text) == {"score": score, "reason": reason}


@pytest.mark.parametrize(
    "text",
    [
        GARBAGE,
        "",
        "   ",
        '{"score": 1.5, "reason": "too high"}',
        '{"score": -0.1}',
        '{"score": "0.9"}',
        '{"score": true}',
        '{"score": null}',
        '{"score": NaN}',
        '{"score": Infinity}',
        '{"reason": "no score"}',
        "[0.5]",
        "7",
        "1.01",
        "-0.5",
        "I'd give it 0.9 out of 1",
        '```json\n{"score": 3}\n```',
        '{"score": 0.9',
    ],
)
def test_parse_verdict_rejects_what_is_not_a_verdict(text: str) -> None:
    assert parse_verdict(text) is None


@pytest.mark.parametrize(
    ("block", "field", "message"),
    [
        ("verfied = true", "judge.verfied", "unknown setting"),
        ('verified = "yes"', "judge.verified", "must be true or false"),
        ("rubric_prompt = 3", "judge.rubric_prompt", "must be a string"),
        ("provider = 3", "judge.provider", "must be a table"),
        ('provider = {type = "python"}', "judge.provider.function", "needs 'function'"),
        ('provider = {type = "nope"}', "judge.provider.type", "provider type"),
    ],
)
def test_judge_settings_are_validated_when_the_config_loads(
    tmp_path: Path, block: str, field: str, message: str
) -> None:
    (tmp_path / "assay.toml").write_text(f"[judge]\n{block}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=message) as info:
        load_config(tmp_path)
    assert info.value.field == field
    assert info.value.source == str(tmp_path / "assay.toml")


def test_judge_settings_defaults_and_values(tmp_path: Path) -> None:
    assert load_config(tmp_path).judge == JudgeSettings()
    (tmp_path / "assay.toml").write_text(
        '[judge]\nverified = true\n[judge.provider]\ntype = "echo"\n', encoding="utf-8"
    )
    settings = load_config(tmp_path).judge
    assert settings.verified is True
    assert settings.provider is not None and settings.provider.type == "echo"
    assert settings.rubric_prompt is None  # the built-in prompt
    assert settings.source == str(tmp_path / "assay.toml")


def test_judge_errors_name_pyproject_when_the_settings_live_there(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        "[tool.assay.judge]\nverified = true\n", encoding="utf-8"
    )
    settings = load_config(tmp_path).judge
    with pytest.raises(ConfigError, match=r"\[judge\.provider\]") as info:
        judge("an answer", "a rubric", settings)
    assert info.value.source == f"{tmp_path / 'pyproject.toml'} [tool.assay]"
    assert "assay.toml" not in str(info.value)


def test_judge_prompt_fills_placeholders_and_keeps_literal_braces() -> None:
    settings = JudgeSettings(rubric_prompt='R={rubric} O={output} E={expected} -> {{"score": n}}')
    assert judge_prompt(settings, "out {x}", "be kind", "ref") == (
        'R=be kind O=out {x} E=ref -> {"score": n}'
    )


def test_a_placeholder_inside_the_output_is_not_filled_again() -> None:
    settings = JudgeSettings(rubric_prompt="O={output} R={rubric}")
    # An output quoting the template's placeholders must reach the judge exactly as written.
    assert judge_prompt(settings, "{rubric} {expected}", "secret rubric", "ref") == (
        "O={rubric} {expected} R=secret rubric"
    )


def test_the_built_in_prompt_asks_for_a_json_verdict() -> None:
    prompt = judge_prompt(JudgeSettings(), "the answer", "the rubric", "the reference")
    assert "the answer" in prompt and "the rubric" in prompt and "the reference" in prompt
    assert '{"score": <number from 0 to 1>' in prompt


# --------------------------------------------------------------------------- project helpers


def toml_judge(server: FakeOpenAI, model: str, *, verified: bool = False, **provider: Any) -> str:
    lines = ["[judge]", f"verified = {'true' if verified else 'false'}", "", "[judge.provider]"]
    settings_ = {"type": "openai", "base_url": server.url, "model": model, **provider}
    for key, value in settings_.items():
        lines.append(f"{key} = {json.dumps(value)}")
    return "\n".join(lines) + "\n"


RUBRIC_GOLDENS: list[dict[str, Any]] = [
    {"id": "high", "input": "Explain caching.", "rubric": "Accurate and concise."},
    {"id": "low", "input": "Explain retries.", "rubric": "Mentions backoff."},
    {"id": "edge", "input": "Explain jitter.", "rubric": "Mentions randomness.", "threshold": 0.7},
    {"id": "exact", "input": "Explain WAL.", "rubric": "Mentions the log."},
]
# The fake judge scores by the 'SCORE=x' the graded output carries.
RUBRIC_OUTPUTS = {
    "high": "Caching keeps answers. SCORE=0.9",
    "low": "Retries happen. SCORE=0.3",
    "edge": "Jitter is random. SCORE=0.75",  # threshold 0.7: pass
    "exact": "WAL is a log. SCORE=0.8",  # default threshold 0.8: pass (>=)
}
EXPECTED_DECISIONS = {
    "high": ("pass", 0.9),
    "low": ("fail", 0.3),
    "edge": ("pass", 0.75),
    "exact": ("pass", 0.8),
}


def make_project(
    root: Path,
    toml: str | None,
    goldens: Sequence[Mapping[str, Any]] = RUBRIC_GOLDENS,
    outputs: Mapping[str, Any] = RUBRIC_OUTPUTS,
) -> tuple[Path, Path]:
    if toml is not None:
        (root / "assay.toml").write_text(toml, encoding="utf-8")
    goldens_path = root / "goldens.jsonl"
    goldens_path.write_text("".join(json.dumps(g) + "\n" for g in goldens), encoding="utf-8")
    outputs_path = root / "outputs.json"
    outputs_path.write_text(json.dumps(outputs), encoding="utf-8")
    return goldens_path, outputs_path


def judged_run(
    root: Path, goldens: Path, outputs: Path, *extra: str, exit_code: int = 0
) -> dict[str, Any]:
    """``assay gate GOLDENS --outputs FILE --json``: the exit code expected (1 when a judge
    error is more than max_error_rate allows, in every mode) and the parsed document."""
    code, out, err = run_cli(
        ["gate", goldens, "--outputs", outputs, "--json", *extra], root, timeout=60
    )
    assert code == exit_code, f"exit {code}\nstdout: {out}\nstderr: {err}"
    assert "Traceback" not in err
    return json.loads(out)


def results_by_id(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["id"]: r for r in document["results"]}


# --------------------------------------------------------------------------- judging


@pytest.mark.parametrize("model", ["judge-json", "judge-fenced", "judge-prose", "judge-number"])
def test_judge_decides_rubric_goldens_by_score_vs_threshold(
    server: FakeOpenAI, tmp_path: Path, model: str
) -> None:
    goldens, outputs = make_project(tmp_path, toml_judge(server, model))
    document = judged_run(tmp_path, goldens, outputs, "--judge")
    results = results_by_id(document)
    for gid, (status, score) in EXPECTED_DECISIONS.items():
        result = results[gid]
        assert (result["status"], result["score"]) == (status, score), gid
        assert result["passed"] is (status == "pass")
        assert result["decided_by"] == "tier3-judge"
        reason = "" if model == "judge-number" else " (scripted verdict)"
        assert result["notes"] == [f"judge: {score:.2f}{reason}"]
    assert document["summary"]["counts"]["pass"] == 3
    assert document["summary"]["counts"]["fail"] == 1
    assert document["summary"]["counts"]["needs-judge"] == 0
    assert server.count(model=model) == 4
    assert server.total == 4
    # Each request carried the rubric and the output to grade, never as the system's own words.
    for prompt in server.prompts():
        assert "Rubric:" in prompt
        assert "Answer to grade:" in prompt
    [high_prompt] = [p for p in server.prompts() if "SCORE=0.9" in p]
    assert "Accurate and concise." in high_prompt


def test_judge_through_run_gate(server: FakeOpenAI, tmp_path: Path) -> None:
    goldens, outputs = make_project(tmp_path, toml_judge(server, "judge-json"))
    run = run_gate(GateOptions(path=goldens, outputs=outputs, judge=True), load_config(tmp_path))
    decided = {r.id: (r.status, r.score, r.decided_by) for r in run.results}
    assert decided == {
        gid: (status, score, "tier3-judge") for gid, (status, score) in EXPECTED_DECISIONS.items()
    }
    assert server.total == 4
    assert run.exit_code == 0


def test_unparseable_verdict_twice_is_a_judge_error_never_a_pass(
    server: FakeOpenAI, tmp_path: Path
) -> None:
    goldens, outputs = make_project(
        tmp_path,
        toml_judge(server, "judge-garbage"),
        RUBRIC_GOLDENS[:1],
        {"high": "A great answer. SCORE=1.0"},
    )
    document = judged_run(tmp_path, goldens, outputs, "--judge", exit_code=1)
    [result] = document["results"]
    assert result["status"] == "error"
    assert result["passed"] is False
    assert result["score"] is None
    assert result["decided_by"] == "tier3-judge"
    assert len(result["notes"]) == 1
    assert "judge-error" in result["notes"][0]
    assert "could not be parsed" in result["notes"][0]
    assert server.total == 2  # the first ask and exactly one more
    assert len(set(server.prompts())) == 1  # the same question both times
    assert document["summary"]["counts"]["error"] == 1
    assert document["summary"]["pass_rate"] == 0.0


def test_unparseable_verdict_once_then_valid_is_decided(server: FakeOpenAI, tmp_path: Path) -> None:
    goldens, outputs = make_project(
        tmp_path,
        toml_judge(server, "judge-garbage-once"),
        RUBRIC_GOLDENS[:2],
        {"high": "SCORE=0.9", "low": "SCORE=0.3"},
    )
    document = judged_run(tmp_path, goldens, outputs, "--judge")
    results = results_by_id(document)
    assert (results["high"]["status"], results["high"]["score"]) == ("pass", 0.9)
    assert (results["low"]["status"], results["low"]["score"]) == ("fail", 0.3)
    assert server.total == 4  # two asks per golden
    for prompt in set(server.prompts()):
        assert server.count(prompt=prompt) == 2


def test_a_failing_judge_call_is_a_judge_error(server: FakeOpenAI, tmp_path: Path) -> None:
    goldens, outputs = make_project(
        tmp_path,
        toml_judge(server, "always-500", max_retries=1),
        RUBRIC_GOLDENS[:1],
        {"high": "SCORE=0.9"},
    )
    document = judged_run(tmp_path, goldens, outputs, "--judge", exit_code=1)
    [result] = document["results"]
    assert result["status"] == "error"
    assert result["passed"] is False
    assert "judge-error" in result["notes"][0]
    assert "server error (500)" in result["notes"][0]
    assert server.total == 2  # the first attempt and max_retries = 1, no verdict re-ask


def test_judge_calls_are_cached(server: FakeOpenAI, tmp_path: Path) -> None:
    goldens, outputs = make_project(tmp_path, toml_judge(server, "judge-json"))
    first = judged_run(tmp_path, goldens, outputs, "--judge")
    assert server.total == 4
    second = judged_run(tmp_path, goldens, outputs, "--judge")
    assert server.total == 4  # every verdict came from the cache
    assert second["results"] == first["results"]
    third = judged_run(tmp_path, goldens, outputs, "--judge", "--no-cache")
    assert server.total == 8
    assert third["results"] == first["results"]


def test_the_judge_is_given_the_question(server: FakeOpenAI, tmp_path: Path) -> None:
    # Issue 27: the judge prompt left out the golden's input, so "answers the question" could
    # not be graded. A tier 3 golden and a judge assert both carry it.
    goldens: list[dict[str, Any]] = [
        {"id": "high", "input": "Explain caching.", "rubric": "Accurate and concise."},
        {
            "id": "graded",
            "input": {"question": "Explain WAL."},
            "asserts": [{"op": "judge", "rubric": "Mentions the log."}],
        },
    ]
    outputs = {"high": "Caching keeps answers. SCORE=0.9", "graded": "A log. SCORE=0.9"}
    paths = make_project(tmp_path, toml_judge(server, "judge-json"), goldens, outputs)
    judged_run(tmp_path, *paths, "--judge")
    [high] = [p for p in server.prompts() if "Caching keeps" in p]
    assert "Question or input the answer responds to (may be empty):\nExplain caching.\n" in high
    [graded] = [p for p in server.prompts() if "A log." in p]
    assert '{"question":"Explain WAL."}' in graded


def test_a_changed_input_is_judged_again(server: FakeOpenAI, tmp_path: Path) -> None:
    # The input is in the judge's prompt, so in its cache key: a verdict on the answer to
    # another question is not reused.
    goldens, outputs = make_project(tmp_path, toml_judge(server, "judge-json"))
    judged_run(tmp_path, goldens, outputs, "--judge")
    assert server.total == 4
    changed = [
        {**g, "input": "Explain it again."} if g["id"] == "high" else g for g in RUBRIC_GOLDENS
    ]
    make_project(tmp_path, None, changed)
    judged_run(tmp_path, goldens, outputs, "--judge")
    assert server.total == 5  # only the golden whose input changed


def test_a_custom_prompt_may_name_the_input() -> None:
    settings = JudgeSettings(rubric_prompt="Q={input} R={rubric} O={output}")
    assert judge_prompt(settings, "out", "be kind", "ref", "why?") == "Q=why? R=be kind O=out"
    assert judge_prompt(settings, "out", "be kind", "ref") == "Q= R=be kind O=out"


def test_a_changed_output_is_judged_again(server: FakeOpenAI, tmp_path: Path) -> None:
    goldens, outputs = make_project(tmp_path, toml_judge(server, "judge-json"))
    judged_run(tmp_path, goldens, outputs, "--judge")
    assert server.total == 4
    outputs.write_text(json.dumps({**RUBRIC_OUTPUTS, "low": "Better now. SCORE=0.95"}))
    document = judged_run(tmp_path, goldens, outputs, "--judge")
    assert server.total == 5
    assert results_by_id(document)["low"]["status"] == "pass"


def test_without_judge_flag_and_unverified_the_golden_needs_judge(
    server: FakeOpenAI, tmp_path: Path
) -> None:
    goldens, outputs = make_project(tmp_path, toml_judge(server, "judge-json", verified=False))
    document = judged_run(tmp_path, goldens, outputs)
    for result in document["results"]:
        assert result["status"] == "needs-judge"
        assert result["passed"] is None
        assert result["score"] is None
    assert document["summary"]["counts"]["needs-judge"] == 4
    assert server.total == 0


def test_verified_judge_runs_without_the_flag(server: FakeOpenAI, tmp_path: Path) -> None:
    goldens, outputs = make_project(tmp_path, toml_judge(server, "judge-json", verified=True))
    document = judged_run(tmp_path, goldens, outputs)
    results = results_by_id(document)
    assert {gid: (r["status"], r["score"]) for gid, r in results.items()} == EXPECTED_DECISIONS
    assert server.total == 4


def test_goldens_decided_by_asserts_or_similarity_never_reach_the_judge(
    server: FakeOpenAI, tmp_path: Path
) -> None:
    goldens = [
        {"id": "asserted", "input": "x", "rubric": "r", "asserts": ["contains:ok"]},
        {"id": "similar", "input": "y", "rubric": "r", "expected": "the same words"},
        {"id": "judged", "input": "z", "rubric": "r"},
    ]
    outputs = {
        "asserted": "ok SCORE=0.1",
        "similar": "the same words",
        "judged": "SCORE=0.85",
    }
    goldens_path, outputs_path = make_project(
        tmp_path, toml_judge(server, "judge-json"), goldens, outputs
    )
    document = judged_run(
        tmp_path, goldens_path, outputs_path, "--judge", "--similarity", "difflib"
    )
    results = results_by_id(document)
    assert (results["asserted"]["status"], results["asserted"]["decided_by"]) == (
        "pass",
        "tier1-asserts",
    )
    assert (results["similar"]["status"], results["similar"]["decided_by"]) == (
        "pass",
        "tier2-difflib",
    )
    assert (results["judged"]["status"], results["judged"]["decided_by"]) == (
        "pass",
        "tier3-judge",
    )
    assert server.total == 1
    assert "SCORE=0.85" in server.prompts()[0]


def test_judge_without_a_provider_is_a_config_error(tmp_path: Path) -> None:
    goldens, outputs = make_project(tmp_path, "[judge]\nverified = false\n")
    code, out, err = run_cli(["gate", goldens, "--outputs", outputs, "--json", "--judge"], tmp_path)
    assert code == 1
    assert out == ""
    assert "Traceback" not in err
    assert "judge.provider" in err


def test_judge_with_a_bad_provider_setting_names_the_field(
    server: FakeOpenAI, tmp_path: Path
) -> None:
    goldens, outputs = make_project(tmp_path, toml_judge(server, "judge-json", max_retries=-2))
    code, out, err = run_cli(["gate", goldens, "--outputs", outputs, "--json", "--judge"], tmp_path)
    assert code == 1
    assert out == ""
    assert "Traceback" not in err
    assert "judge.provider.max_retries" in err
    assert server.total == 0


def test_custom_rubric_prompt_is_what_the_judge_receives(
    server: FakeOpenAI, tmp_path: Path
) -> None:
    toml = toml_judge(server, "judge-json").replace(
        "verified = false\n",
        "verified = false\n"
        'rubric_prompt = "RUBRIC[{rubric}] OUTPUT[{output}] REF[{expected}] {{\\"score\\": x}}"\n',
    )
    goldens, outputs = make_project(
        tmp_path,
        toml,
        [{"id": "one", "input": "q", "rubric": "Be brief."}],
        {"one": "Short. SCORE=0.9"},
    )
    document = judged_run(tmp_path, goldens, outputs, "--judge")
    assert document["results"][0]["status"] == "pass"
    assert server.prompts() == ['RUBRIC[Be brief.] OUTPUT[Short. SCORE=0.9] REF[] {"score": x}']


def test_judge_grades_live_candidate_outputs_and_both_are_cached(
    server: FakeOpenAI, tmp_path: Path
) -> None:
    # Candidates answer through the fake server's echo model; the judge grades those answers.
    (tmp_path / "assay.toml").write_text(toml_judge(server, "judge-json"), encoding="utf-8")
    goldens = tmp_path / "goldens.jsonl"
    goldens.write_text(
        json.dumps({"id": "rub", "input": "Summarise WAL.", "rubric": "Mentions the log."}) + "\n",
        encoding="utf-8",
    )
    candidates = tmp_path / "candidates.yaml"
    candidates.write_text(
        f"provider: {{type: openai, base_url: '{server.url}', model: echo}}\n"
        "candidates:\n"
        "  - {id: good, prompt: 'SCORE=0.9 {{ input }}'}\n"
        "  - {id: bad, prompt: 'SCORE=0.1 {{ input }}'}\n",
        encoding="utf-8",
    )
    args = ["eval", goldens, "--candidates", candidates, "--judge", "--json"]
    code, out, err = run_cli(args, tmp_path, timeout=60)
    assert code == 0, err
    document = json.loads(out)
    statuses = {r["candidate"]: (r["status"], r["score"]) for r in document["results"]}
    assert statuses == {"good": ("pass", 0.9), "bad": ("fail", 0.1)}
    assert server.count(model="echo") == 2
    assert server.count(model="judge-json") == 2
    code, out2, err = run_cli(args, tmp_path, timeout=60)
    assert code == 0, err
    assert server.total == 4  # outputs and verdicts both came from the cache
    assert json.loads(out2)["results"] == document["results"]


def test_judge_calls_are_counted_apart_from_candidate_calls(
    server: FakeOpenAI, tmp_path: Path
) -> None:
    goldens, outputs = make_project(tmp_path, toml_judge(server, "judge-json"))
    first = judged_run(tmp_path, goldens, outputs, "--judge")["summary"]["model_calls"]
    judge = first["judge"]
    assert (judge["made"], judge["cache_hits"], judge["errors"]) == (4, 0, 0)
    assert judge["input_tokens"] > 0 and judge["output_tokens"] > 0
    assert "made" not in first  # static outputs: no candidate calls were made
    second = judged_run(tmp_path, goldens, outputs, "--judge")["summary"]["model_calls"]
    assert (second["judge"]["made"], second["judge"]["cache_hits"]) == (0, 4)
    code, out, _ = run_cli(["gate", goldens, "--outputs", outputs, "--judge"], tmp_path)
    assert code == 0
    assert "judge calls: 0 made (0 failed), 4 from the cache" in out


def test_an_openai_judge_is_asked_for_a_schema_constrained_verdict(
    server: FakeOpenAI, tmp_path: Path
) -> None:
    goldens, outputs = make_project(tmp_path, toml_judge(server, "judge-json"))
    judged_run(tmp_path, goldens, outputs, "--judge", "--no-cache")
    formats = {json.dumps(seen.body.get("response_format"), sort_keys=True) for seen in server.seen}
    [only] = formats
    sent = json.loads(only)
    assert sent["type"] == "json_schema"
    assert sent["json_schema"]["schema"]["required"] == ["score", "reason"]


def test_structured_false_sends_no_response_format(server: FakeOpenAI, tmp_path: Path) -> None:
    toml = toml_judge(server, "judge-json").replace(
        "verified = false", "verified = false\nstructured = false"
    )
    goldens, outputs = make_project(tmp_path, toml)
    judged_run(tmp_path, goldens, outputs, "--judge", "--no-cache")
    assert all("response_format" not in seen.body for seen in server.seen)


def test_a_judge_without_max_tokens_gets_a_bounded_reply(
    server: FakeOpenAI, tmp_path: Path
) -> None:
    from assay.cascade._judge import JUDGE_MAX_TOKENS

    goldens, outputs = make_project(tmp_path, toml_judge(server, "judge-json"))
    judged_run(tmp_path, goldens, outputs, "--judge", "--no-cache")
    assert {seen.body.get("max_tokens") for seen in server.seen} == {JUDGE_MAX_TOKENS}
    goldens, outputs = make_project(tmp_path, toml_judge(server, "judge-json", max_tokens=40))
    judged_run(tmp_path, goldens, outputs, "--judge", "--no-cache")
    assert server.seen[-1].body["max_tokens"] == 40
