"""A project's own goldens only: assay's packaged goldens and coding-agent tasks join a run only
when asked for (``--packaged``) or when the project has no goldens at all, and then one line
says so (issue 27, item 2)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers.cli import run_cli

NOTE = "no goldens in goldens/: running assay's packaged goldens"


def prompt_project(root: Path) -> Path:
    """One golden in one tier, a passing answer, and a gate that wants 90 % passing."""
    (root / "goldens" / "smoke").mkdir(parents=True)
    (root / "goldens" / "smoke" / "greet.md").write_text(
        '---\nid: greet\ninput: "Say hi to {{ name }}"\nvars: {name: Ada}\n'
        "asserts:\n  - 'icontains:hi'\n---\n",
        encoding="utf-8",
    )
    (root / "outputs.json").write_text(json.dumps({"greet": "Hi Ada"}), encoding="utf-8")
    (root / "assay.toml").write_text("[gate]\nmin_pass_rate = 0.9\n", encoding="utf-8")
    return root


def test_a_prompt_project_gates_its_own_golden_only(tmp_path: Path) -> None:
    prompt_project(tmp_path)
    code, out, err = run_cli(["gate", "--outputs", "outputs.json", "--json"], tmp_path)
    assert code == 0, out + err  # was 2: 1 of 6 passing, the packaged smoke tasks NO-OUTPUT
    document = json.loads(out)
    assert [r["id"] for r in document["results"]] == ["greet"]
    assert NOTE not in err


def test_a_prompt_project_evals_without_the_packaged_tasks(tmp_path: Path) -> None:
    # A packaged task has no {{ name }}: it used to stop the eval before any call.
    prompt_project(tmp_path)
    spec = {"provider": {"type": "echo"}, "candidates": [{"id": "c", "prompt": "hi {{ name }}"}]}
    (tmp_path / "c.yaml").write_text(json.dumps(spec), encoding="utf-8")
    code, out, err = run_cli(["eval", "--candidates", "c.yaml", "--json", "--no-save"], tmp_path)
    assert code == 0, out + err
    assert [r["id"] for r in json.loads(out)["results"]] == ["greet"]


def test_packaged_adds_the_packaged_goldens_to_the_projects(tmp_path: Path) -> None:
    prompt_project(tmp_path)
    args = ["gate", "--outputs", "outputs.json", "--json", "--packaged", "--no-save"]
    code, out, err = run_cli(args, tmp_path)
    ids = [r["id"] for r in json.loads(out)["results"]]
    assert ids[0] == "greet" and "smoke-fix-readme-typo" in ids
    assert code == 2  # the packaged ones have no outputs here: min_pass_rate says so
    assert NOTE not in err


def test_a_project_with_no_goldens_gets_the_packaged_ones_and_one_line(tmp_path: Path) -> None:
    (tmp_path / "outputs.json").write_text("{}", encoding="utf-8")
    code, out, err = run_cli(["gate", "--outputs", "outputs.json", "--json"], tmp_path)
    assert code == 0, err
    assert "smoke-fix-readme-typo" in [r["id"] for r in json.loads(out)["results"]]
    assert err.count(NOTE) == 1
    code, _, err = run_cli(["gate", "--outputs", "outputs.json", "-w", "--no-save"], tmp_path)
    assert code == 0, err
    baseline = json.loads((tmp_path / "assay-baseline.json").read_text(encoding="utf-8"))
    assert baseline["suite"] == "packaged"  # another suite than the project's own


def test_bench_of_a_prompt_project_has_no_packaged_tasks(tmp_path: Path) -> None:
    prompt_project(tmp_path)
    (tmp_path / "telemetry").mkdir()
    args = ["bench", "--telemetry", "telemetry", "--json", "--no-save"]
    code, out, err = run_cli(args, tmp_path)
    document = json.loads(out)
    assert [r["id"] for r in document["results"]] == ["greet"], err
    assert document["selection"]["goldens"] == "project"
    assert code == 2  # no telemetry for it: min_pass_rate
