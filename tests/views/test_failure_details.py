"""Readable failures: every report shows what a failing golden said (trimmed) and how it differs
from the expected answer; the JSON document carries the output, never the expected answer."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers.cli import run_cli

EXPECTED_LINES = "line one\nline two\nline three"


def _project(root: Path) -> list[str]:
    goldens = [
        {
            "id": "capital",
            "input": "Capital of France?",
            "expected": "Paris",
            "asserts": ["equals:Paris"],
        },
        {
            "id": "poem",
            "input": "Three lines",
            "expected": EXPECTED_LINES,
            "asserts": ["contains:line three"],
        },
        {"id": "long", "input": "Say a lot", "asserts": ["contains:zebra"]},
        {"id": "fine", "input": "ok", "expected": "ok", "asserts": ["equals:ok"]},
    ]
    (root / "g.jsonl").write_text("".join(json.dumps(g) + "\n" for g in goldens))
    outputs = {
        "capital": "Lyon",
        "poem": "line one\nline 2\nline four",
        "long": "word " * 200,
        "fine": "ok",
    }
    (root / "out.json").write_text(json.dumps(outputs))
    return ["gate", "g.jsonl", "--outputs", "out.json"]


def test_text_shows_the_output_and_the_expected_answer_or_a_diff(tmp_path: Path) -> None:
    code, out, err = run_cli(_project(tmp_path), tmp_path)
    assert code == 0, err
    lines = out.splitlines()
    capital = lines.index(next(line for line in lines if " capital " in line))
    assert lines[capital + 1].strip() == "output: Lyon"
    assert lines[capital + 2].strip() == "expected: Paris"
    assert "diff (expected → output):" in out
    for line in ("-line two", "+line 2", "-line three", "+line four"):
        assert f"  {line}" in out
    # A long output is cut, saying how long it was; a pass shows nothing more.
    long = next(line for line in lines if line.strip().startswith("output: word word"))
    assert long.endswith("… (1000 characters)") and len(long.strip()) < 200
    fine = lines.index(next(line for line in lines if " fine " in line))
    assert not lines[fine + 1].strip().startswith("output:")


def test_markdown_and_junit_show_it_too(tmp_path: Path) -> None:
    args = _project(tmp_path)
    _, markdown, _ = run_cli([*args, "-f", "markdown"], tmp_path)
    assert "| output: Lyon; expected: Paris |" in markdown
    _, junit, _ = run_cli([*args, "-f", "junit"], tmp_path)
    assert "output: Lyon\nexpected: Paris</failure>" in junit


def test_json_has_the_failing_output_and_never_the_expected_answer(tmp_path: Path) -> None:
    _, out, _ = run_cli([*_project(tmp_path), "--json"], tmp_path)
    results = {r["id"]: r for r in json.loads(out)["results"]}
    assert results["capital"]["output"] == "Lyon"
    assert "output" not in results["fine"]  # static outputs: only those that did not pass
    assert "Paris" not in out.replace('"equals:Paris"', "").replace("equal 'Paris'", "")
    assert "line three" not in out.replace("contains:line three", "").replace(
        "contain 'line three'", ""
    )


def test_a_lone_surrogate_in_an_output_is_shown_escaped_not_a_crash(tmp_path: Path) -> None:
    args = _project(tmp_path)
    (tmp_path / "out.json").write_text('{"capital": "bad \\ud800 x"}', encoding="utf-8")
    code, out, err = run_cli(args, tmp_path)
    assert code == 0, err
    assert "output: bad \\ud800 x" in out and "Traceback" not in err
    code, out, err = run_cli([*args, "--json"], tmp_path)
    assert code == 0, err
    results = {r["id"]: r for r in json.loads(out)["results"]}
    assert results["capital"]["output"] == "bad \ud800 x"  # the JSON escape keeps it exact
