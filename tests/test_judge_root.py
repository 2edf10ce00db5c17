"""A python judge provider's module is found in the project's root, as the candidates' are,
also when the library is called from another working directory."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay import GateOptions, load_config, run_gate


def test_a_python_judge_is_imported_from_the_project_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "grader_here.py").write_text(
        'def grade(prompt):\n    return \'{"score": 0.9, "reason": "fine"}\'\n',
        encoding="utf-8",
    )
    (project / "assay.toml").write_text(
        '[judge]\nverified = true\n[judge.provider]\ntype = "python"\n'
        'function = "grader_here:grade"\n',
        encoding="utf-8",
    )
    golden = {"id": "g", "input": "q", "rubric": "Is fine."}
    (project / "g.jsonl").write_text(json.dumps(golden) + "\n", encoding="utf-8")
    (project / "out.json").write_text(json.dumps({"g": "an answer"}), encoding="utf-8")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # the module is not importable from here
    options = GateOptions(path=project / "g.jsonl", outputs=project / "out.json", no_cache=True)
    run = run_gate(options, load_config(project))
    [result] = run.results
    assert (result.status, result.score) == ("pass", 0.9)
