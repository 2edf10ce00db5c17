"""``assay eval --candidate ID`` picks candidates of the file, ties in the ranking say they are
in id order, and every unknown key of a candidates file (promptfoo's names among them) names its
near miss (issue 27, "also seen")."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from assay.errors import ConfigError
from assay.models import load_candidates_file
from tests.helpers.cli import run_cli
from tests.helpers.fake_openai import FakeOpenAI, fake_openai
from tests.models.test_cache import write_candidates, write_goldens

GOLDENS = [
    {"id": "g1", "input": "hello", "asserts": ["contains:hello"]},
    {"id": "g2", "input": "bye", "asserts": ["contains:bye"]},
]
CANDIDATES = (("brief", "B: {{ input }}"), ("detailed", "D: {{ input }}"), ("terse", "T"))


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with fake_openai() as s:
        yield s


def run(tmp_path: Path, server: FakeOpenAI, *extra: str) -> tuple[int, str, str]:
    write_goldens(tmp_path, GOLDENS)
    write_candidates(tmp_path, server, CANDIDATES, max_tokens=16)
    args = ["eval", "goldens.jsonl", "--candidates", "candidates.yaml", "--no-save", *extra]
    return run_cli(args, tmp_path, 30)


def test_only_the_candidates_asked_for_run(tmp_path: Path, server: FakeOpenAI) -> None:
    code, out, err = run(tmp_path, server, "--candidate", "terse", "--candidate", "brief", "--json")
    assert code == 0, err
    document = json.loads(out)
    # The file's order, whatever the flags' order; the other candidate made no call.
    assert sorted({r["candidate"] for r in document["results"]}) == ["brief", "terse"]
    assert sorted(s["candidate"] for s in document["summary"]["candidates"]) == ["brief", "terse"]
    assert server.total == 4
    assert not any(p.startswith("D: ") for p in server.prompts())


def test_an_unknown_candidate_is_one_line_with_its_near_miss(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    code, out, err = run(tmp_path, server, "--candidate", "brif")
    assert code == 1
    assert out == ""
    assert err == (
        "assay: error: candidates.yaml: field '--candidate': no candidate 'brif' in the "
        "candidates file (it has brief, detailed, terse): did you mean 'brief'?\n"
    )
    assert server.total == 0  # refused before any model call


def test_candidate_and_write_baseline_are_refused_together(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    code, _, err = run(tmp_path, server, "--candidate", "brief", "--write-baseline")
    assert code == 1
    assert "--candidate and --write-baseline cannot be used together" in err
    assert server.total == 0


def test_a_check_of_some_candidates_does_not_miss_the_others(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    code, _, err = run(tmp_path, server, "--write-baseline")
    assert code == 0, err
    code, out, err = run(tmp_path, server, "--check", "--candidate", "detailed", "--json")
    assert code == 0, err
    document = json.loads(out)
    assert document["regressions"] == []
    assert {r["candidate"] for r in document["results"]} == {"detailed"}


def test_tied_candidates_are_said_to_be_in_id_order(tmp_path: Path, server: FakeOpenAI) -> None:
    code, out, err = run(tmp_path, server)
    assert code == 0, err
    ranking = out[out.index("ranking (") :].splitlines()
    # brief and detailed both pass everything: their order is the ids', and the report says so.
    assert ranking[1].startswith("  1. brief: mean score 1.000")
    assert ranking[2].startswith("  2. detailed: mean score 1.000")
    assert "  tied (same mean score and pass rate, so in id order): brief = detailed" in ranking


def test_no_tie_line_without_a_tie(tmp_path: Path, server: FakeOpenAI) -> None:
    code, out, err = run(tmp_path, server, "--candidate", "brief", "--candidate", "terse")
    assert code == 0, err
    assert "tied" not in out


# --------------------------------------------------------------------------- candidates file


@pytest.mark.parametrize(
    ("text", "field", "meant"),
    [
        # A promptfoo config given as a candidates file: its first key points to assay's.
        (
            "prompts:\n  - 'Q: {{question}}'\nproviders: [openai:gpt-4o-mini]\ntests: []\n",
            "prompts",
            "candidates",
        ),
        (
            "provider: {type: echo}\ncandidates:\n  - {id: a, prompt: x, provider: {modle: m}}\n",
            "candidates[0].provider.modle",
            "model",
        ),
        (
            "provider: {type: echo}\ncandidates:\n  - {label: a, prompt: x}\n",
            "candidates[0].label",
            "id",
        ),
        (
            "provider: {type: echo}\ncandidates:\n  - {id: a, raw: x}\n",
            "candidates[0].raw",
            "prompt",
        ),
        (
            "provider: {type: echo}\ncandidates:\n  - {id: a, messages: 'file://chat.yaml'}\n",
            "candidates[0].messages[0].contnet",
            "content",
        ),
    ],
)
def test_an_unknown_key_anywhere_names_its_near_miss(
    tmp_path: Path, text: str, field: str, meant: str
) -> None:
    (tmp_path / "chat.yaml").write_text("- {role: user, contnet: hi}\n", encoding="utf-8")
    path = tmp_path / "cands.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_candidates_file(path)
    error = info.value
    assert (error.source, error.field) == (str(path), field)
    assert "\n" not in str(error)
    assert f"did you mean {meant!r}?" in error.message
