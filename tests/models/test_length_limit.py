"""A provider with no max_tokens gets the default, and the run says so (a model that missed its
stop token generated until the timeout: 40 s a golden); output_strip trims padded answers."""

from __future__ import annotations

import json
from pathlib import Path

from assay.models import load_candidates_file
from assay.models._candidates_file import DEFAULT_MAX_TOKENS
from tests.helpers.fake_openai import fake_openai
from tests.models.test_cache import live_run, write_candidates, write_goldens


def test_a_missing_max_tokens_is_filled_in_and_noted(tmp_path: Path) -> None:
    with fake_openai() as server:
        goldens = write_goldens(tmp_path, [{"id": "g", "input": "hi", "asserts": ["contains:hi"]}])
        document = live_run(tmp_path, goldens, write_candidates(tmp_path, server))
    notes = document["summary"]["notes"]
    assert any(
        n.startswith(f"no max_tokens set for brief: {DEFAULT_MAX_TOKENS} used") for n in notes
    )
    spec = load_candidates_file(tmp_path / "candidates.yaml")
    assert spec.candidates[0].provider.max_tokens == DEFAULT_MAX_TOKENS


def test_a_given_max_tokens_is_kept_without_a_note(tmp_path: Path) -> None:
    with fake_openai() as server:
        goldens = write_goldens(tmp_path, [{"id": "g", "input": "hi", "asserts": ["contains:hi"]}])
        document = live_run(tmp_path, goldens, write_candidates(tmp_path, server, max_tokens=8))
    assert not any("max_tokens" in n for n in document["summary"].get("notes", []))


def test_output_strip_trims_surrounding_whitespace(tmp_path: Path) -> None:
    module = "def padded(prompt):\n    return '  Paris\\n'\n"
    (tmp_path / "padprov.py").write_text(module, encoding="utf-8")
    goldens = write_goldens(tmp_path, [{"id": "g", "input": "q", "asserts": ["starts-with:Paris"]}])
    document = {
        "provider": {"type": "python", "function": "padprov:padded"},
        "candidates": [{"id": "a", "prompt": "{{ input }}"}],
    }
    cands = tmp_path / "cands.yaml"
    cands.write_text(json.dumps(document), encoding="utf-8")
    [result] = live_run(tmp_path, goldens, cands, "--no-cache")["results"]
    assert result["status"] == "fail"
    cands.write_text(json.dumps({**document, "output_strip": True}), encoding="utf-8")
    [result] = live_run(tmp_path, goldens, cands, "--no-cache")["results"]
    assert result["status"] == "pass"
    assert result["output"] == "Paris"
