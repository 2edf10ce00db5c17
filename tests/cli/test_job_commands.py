"""``assay gate``, ``assay eval`` and ``assay bench``: one command per job, each taking only the
options of its job, all of them accepted; -k / --filter, --repeats, --max-concurrency, --quiet,
--failures-only, --json as --format json (issue 17)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from assay.cli import cli
from tests.helpers.cli import run_cli
from tests.helpers.fake_openai import FakeOpenAI, fake_openai
from tests.helpers.telemetry import smoke_telemetry

# A value each option may take (none of these files needs to exist: nothing runs).
SAMPLES: dict[str, list[str]] = {
    "outputs": ["out.json"],
    "candidates": ["c.yaml"],
    "candidate_ids": ["brief"],
    "telemetry": ["telemetry/"],
    "agent": ["noop"],
    "baseline": ["b.json"],
    "tiers": ["smoke"],
    "patterns": ["smoke-*"],
    "shard_spec": ["1/2"],
    "similarity": ["difflib"],
    "alpha": ["0.1"],
    "max_repeats": ["3"],
    "repeats": ["2"],
    "max_concurrency": ["2"],
    "jobs": ["2"],
    "executor": ["ray"],
    "ray_address": ["127.0.0.1:6379"],
    "environment": ["docker"],
    "image": ["assay-task-python:local"],
    "isolation": ["none"],
    "fmt": ["markdown"],
    "output": ["report.txt"],
}
# What an option needs beside it to mean anything.
NEEDS: dict[str, list[str]] = {
    "alpha": ["--check"],
    "max_repeats": ["--check"],
    "ray_address": ["--executor", "ray"],
    "image": ["--environment", "docker"],
}
# The least each command needs, and the options that replace that least.
BASE: dict[str, tuple[list[str], dict[str, list[str]]]] = {
    "gate": (["--outputs", "out.json"], {"outputs": [], "example": [], "self_test": []}),
    "eval": (["--candidates", "c.yaml"], {"candidates": []}),
    "bench": (["--agent", "noop"], {"agent": [], "telemetry": []}),
}
FLOWS = {
    "gate": ("run_gate_flow",),
    "eval": ("run_gate_flow",),
    "bench": ("run_agent_flow",),
}


def _invocations(name: str) -> list[tuple[str, list[str]]]:
    command = cli.get_command(click.Context(cli), name)
    assert command is not None
    base, replacing = BASE[name]
    out = []
    for param in command.params:
        if not isinstance(param, click.Option) or param.name in (None, "help"):
            continue
        flag = max(param.opts, key=len)
        value = [] if param.is_flag else SAMPLES[param.name]
        args = [*replacing.get(param.name, base), *NEEDS.get(param.name, []), flag, *value]
        out.append((param.name, args))
    return out


@pytest.mark.parametrize("name", ["gate", "eval", "bench"])
def test_every_option_in_a_commands_help_is_accepted_by_it(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The job's work is replaced: what is tested is that the command takes the option.
    module = __import__(f"assay.cli.{'eval_' if name == 'eval' else name}", fromlist=["x"])
    calls: list[Any] = []
    for flow in FLOWS[name]:
        monkeypatch.setattr(module, flow, lambda *a, **k: calls.append(a) or 0)
    monkeypatch.chdir(tmp_path)
    invocations = _invocations(name)
    assert len(invocations) >= 15
    for option, args in invocations:
        result = CliRunner().invoke(cli, [name, *args])
        assert result.exit_code == 0, f"assay {name} {' '.join(args)}: {result.output}"
        assert len(calls) == 1, option
        calls.clear()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["gate"], "say what to score: --outputs FILE"),
        (["gate", "--outputs", "o.json", "--example"], "--example brings its own"),
        (["gate", "--outputs", "o.json", "--alpha", "0.1"], "--alpha applies to --check"),
        (["gate", "--outputs", "o.json", "-w", "-c"], "cannot be used together"),
        (["gate", "--outputs", "o.json", "-k", "a", "-w"], "--filter and --write-baseline"),
        (["gate", "--outputs", "o.json", "-k", "a", "--shard", "1/2"], "--shard and --filter"),
        (["gate", "--outputs", "o.json", "-q", "--json"], "--quiet shortens the text report"),
        (["gate", "--outputs", "o.json", "-q", "--failures-only"], "--quiet lists no golden"),
        (["gate", "--outputs", "o.json", "--json", "-f", "junit"], "--json and --format junit"),
        (["eval"], "Missing option '--candidates'"),
        (["eval", "--candidates", "c.yaml", "--max-repeats", "3"], "apply to --check"),
        (["bench"], "say what to score: --agent CMD"),
        (["bench", "--telemetry", "t", "-j", "2"], "--jobs: these run the agent"),
        (["bench", "-a", "noop", "--ray-address", "h:1"], "--ray-address applies to --executor"),
    ],
)
def test_a_wrong_mix_is_one_usage_line_and_exit_1(
    args: list[str], message: str, tmp_path: Path
) -> None:
    code, out, err = run_cli(args, tmp_path)
    assert code == 1
    assert message in err
    assert "Traceback" not in err and out == ""


def _example_ids(tmp_path: Path) -> list[str]:
    _, out, _ = run_cli(["gate", "--example", "--json"], tmp_path)
    return [r["id"] for r in json.loads(out)["results"]]


def test_filter_selects_by_id_and_glob_and_refuses_a_pattern_that_matches_nothing(
    tmp_path: Path,
) -> None:
    ids = _example_ids(tmp_path)
    smoke = [i for i in ids if i.startswith("smoke-")]
    code, out, _ = run_cli(["gate", "--example", "--json", "-k", "smoke-*"], tmp_path)
    assert code == 0
    assert [r["id"] for r in json.loads(out)["results"]] == smoke
    exact = ids[-1]
    code, out, _ = run_cli(["gate", "--example", "--json", "-k", exact, "-k", "smoke-*"], tmp_path)
    assert [r["id"] for r in json.loads(out)["results"]] == [*smoke, exact]
    code, out, err = run_cli(["gate", "--example", "-k", "smoke-*", "-k", "smok-*"], tmp_path)
    assert (code, out) == (1, "")
    assert err == (
        "assay: error: --filter 'smok-*': no golden id matches (give an id, or a glob such as "
        "'sql-*'; the ids are in the report)\n"
    )


def test_a_filtered_check_compares_only_the_goldens_it_selected(tmp_path: Path) -> None:
    code, _, err = run_cli(["gate", "--example", "-w"], tmp_path)
    assert code == 0, err
    # The other goldens are outside the selection, not removed: no regression.
    code, out, err = run_cli(["gate", "--example", "-c", "-k", "smoke-*", "--json"], tmp_path)
    assert code == 0, out + err
    document = json.loads(out)
    assert document["summary"]["gate"] == "passed"
    assert document["summary"]["total"] == len([i for i in _example_ids(tmp_path) if "smoke" in i])


def test_failures_only_and_quiet_shorten_the_report_not_the_summary(tmp_path: Path) -> None:
    _, whole, _ = run_cli(["gate", "--example"], tmp_path)
    _, failures, _ = run_cli(["gate", "--example", "--failures-only"], tmp_path)
    _, quiet, _ = run_cli(["gate", "--example", "-q"], tmp_path)
    # A golden's row (its details, the output and the expected answer, are indented further).
    rows = [line for line in whole.splitlines() if line.startswith("  ") and line[2] != " "]
    failing = [line for line in rows if not line.strip().startswith("PASS")]
    assert failing and len(failing) < len(rows)
    # The same rows (their columns as wide as the ids shown need).
    shown = [
        line.split() for line in failures.splitlines() if line.startswith("  ") and line[2] != " "
    ]
    assert shown == [line.split() for line in failing]
    summary = [line for line in whole.splitlines() if line.startswith("summary: ")]
    assert [line for line in failures.splitlines() if line.startswith("summary: ")] == summary
    assert quiet.splitlines()[0] == summary[0]
    assert not [line for line in quiet.splitlines() if line.startswith("  ")]
    # What the failing golden said, under its row.
    assert "               output: Jane Roe (jane.roe@example.com)" in whole
    _, document, _ = run_cli(["gate", "--example", "--json", "--failures-only"], tmp_path)
    parsed = json.loads(document)
    assert all(r["status"] != "pass" for r in parsed["results"])
    assert len(parsed["results"]) == len(failing)
    assert parsed["summary"]["total"] == len(rows)


def test_json_is_format_json(tmp_path: Path) -> None:
    assert run_cli(["gate", "--example", "--json"], tmp_path) == run_cli(
        ["gate", "--example", "-f", "json"], tmp_path
    )


@pytest.fixture
def server() -> Any:
    with fake_openai() as s:
        yield s


def _live(tmp_path: Path, server: FakeOpenAI, model: str) -> None:
    goldens = [
        {"id": f"q{i}", "input": f"question {i}", "asserts": ["contains:echo"]} for i in range(4)
    ]
    (tmp_path / "g.jsonl").write_text("".join(json.dumps(g) + "\n" for g in goldens))
    provider = {"type": "openai", "base_url": server.url, "model": model, "api_key_env": "K"}
    provider["max_tokens"] = 16
    spec = {"provider": provider, "candidates": [{"id": "c", "prompt": "{{ input }}"}]}
    (tmp_path / "c.yaml").write_text(json.dumps(spec))


def test_eval_repeats_and_max_concurrency_override_the_candidates_file(
    tmp_path: Path, server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("K", "key")
    _live(tmp_path, server, "latency-50ms")
    args = ["eval", "g.jsonl", "--candidates", "c.yaml", "--json", "--no-cache"]
    code, out, err = run_cli([*args, "-r", "3", "--max-concurrency", "1"], tmp_path)
    assert code == 0, err
    document = json.loads(out)
    assert {r["repeats"]["k"] for r in document["results"]} == {3}
    assert server.count(model="latency-50ms") == 12
    assert server.max_in_flight == 1


def test_bench_scores_telemetry_and_filters_tasks(tmp_path: Path) -> None:
    telemetry = smoke_telemetry(tmp_path / "telemetry")
    code, out, err = run_cli(
        ["bench", "--telemetry", telemetry, "-t", "smoke", "-k", "smoke-fix-*", "--json"], tmp_path
    )
    assert code == 0, err
    document = json.loads(out)
    assert [r["id"] for r in document["results"]] == [
        "smoke-fix-off-by-one",
        "smoke-fix-readme-typo",
    ]
    assert all(r["status"] == "pass" for r in document["results"])


def test_a_filter_leaves_no_stray_outputs_note(tmp_path: Path) -> None:
    code, out, err = run_cli(["gate", "--example", "--json", "-k", "smoke-*"], tmp_path)
    assert code == 0, err
    assert not [n for n in json.loads(out)["summary"].get("notes", []) if "name no selected" in n]
