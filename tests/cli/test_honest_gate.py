"""Exit 2 means "worse" and nothing else, through ``assay eval`` and ``assay gate``: reruns that
differ by noise pass, a broad real drop fails, broken calls cannot decide (exit 1), a subset
folder compares only itself. The live candidate is a python provider whose answers depend on a
phase file, so every run is reproducible."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers.cli import run_cli
from tests.helpers.goldens import ORIGIN, write_golden, write_json

PROVIDER = """
from pathlib import Path


def answer(prompt):
    phase = Path("phase.txt").read_text().strip()
    if phase == "down":
        raise RuntimeError("401 Invalid API Key")
    wrong = {"a": {"q3"}, "b": {"q7"}, "worse": {f"q{i}" for i in range(10)}}[phase]
    return "nope" if prompt in wrong else "done"
"""


def live_project(tmp_path: Path, goldens: int = 10) -> list[str]:
    lines = [
        json.dumps({"id": f"g{i}", "input": f"q{i}", "asserts": ["contains:done"]})
        for i in range(goldens)
    ]
    (tmp_path / "goldens.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (tmp_path / "prov.py").write_text(PROVIDER, encoding="utf-8")
    (tmp_path / "cands.yaml").write_text(
        "provider: {type: python, function: 'prov:answer'}\n"
        "candidates:\n  - {id: a, prompt: '{{ input }}'}\n",
        encoding="utf-8",
    )
    return ["eval", "goldens.jsonl", "--candidates", "cands.yaml", "--no-cache"]


def phase(tmp_path: Path, name: str) -> None:
    (tmp_path / "phase.txt").write_text(name, encoding="utf-8")


def test_a_rerun_that_differs_by_noise_passes(tmp_path: Path) -> None:
    args = live_project(tmp_path)
    phase(tmp_path, "a")
    assert run_cli([*args, "--write-baseline"], tmp_path)[0] == 0
    phase(tmp_path, "b")  # a different one of ten answers is wrong: what noise looks like
    code, out, err = run_cli([*args, "--check"], tmp_path)
    assert code == 0, out + err
    assert "gate: passed" in out
    assert "did worse without significance" in out


def test_a_broad_real_drop_fails_the_gate(tmp_path: Path) -> None:
    args = live_project(tmp_path)
    phase(tmp_path, "a")
    assert run_cli([*args, "--write-baseline"], tmp_path)[0] == 0
    phase(tmp_path, "worse")
    code, out, _ = run_cli([*args, "--check", "--json"], tmp_path)
    assert code == 2
    document = json.loads(out)
    [suite] = document["regressions"]
    assert suite["id"] == "(suite)"
    assert suite["evidence"]["worse"] == 9 and suite["evidence"]["better"] == 0
    assert suite["evidence"]["p"] == 2.0**-9


def test_every_call_rejected_cannot_decide(tmp_path: Path) -> None:
    args = live_project(tmp_path)
    phase(tmp_path, "a")
    assert run_cli([*args, "--write-baseline"], tmp_path)[0] == 0
    phase(tmp_path, "down")
    code, out, err = run_cli([*args, "--check"], tmp_path)
    assert code == 1
    assert "REGRESSED" not in out
    assert "gate: COULD NOT DECIDE (exit 1)" in out
    assert err.splitlines() == [
        "assay: error: the gate cannot decide: 10 of 10 result(s) are errors (max_error_rate 0), "
        "so 10 golden(s) were not decided; first: the function raised RuntimeError: "
        "401 Invalid API Key after 1 attempt(s)"
    ]


def test_a_baseline_is_not_written_from_a_run_that_cannot_decide(tmp_path: Path) -> None:
    args = live_project(tmp_path)
    phase(tmp_path, "down")
    code, out, err = run_cli([*args, "--write-baseline"], tmp_path)
    assert code == 1
    assert not (tmp_path / "assay-baseline.json").exists()
    assert "the gate cannot decide" in err
    # The note says it was not written; no "baseline written: None" line after it.
    assert "note: baseline not written to assay-baseline.json" in out
    assert "baseline written" not in out


def test_one_golden_is_one_golden(tmp_path: Path) -> None:
    args = live_project(tmp_path, goldens=1)
    phase(tmp_path, "a")
    code, out, _ = run_cli(args, tmp_path)
    assert code == 0
    assert out.startswith("assay: 1 golden\n")
    assert "summary: 1 golden: " in out
    assert "1 goldens" not in out


def test_max_error_rate_allows_some_errors(tmp_path: Path) -> None:
    args = live_project(tmp_path)
    phase(tmp_path, "a")
    assert run_cli([*args, "--write-baseline"], tmp_path)[0] == 0
    phase(tmp_path, "down")
    (tmp_path / "assay.toml").write_text("[gate]\nmax_error_rate = 1.0\n", encoding="utf-8")
    code, out, err = run_cli([*args, "--check"], tmp_path)
    assert code == 0, out + err
    assert "gate: passed" in out


def test_a_subset_folder_compares_only_its_goldens(tmp_path: Path) -> None:
    write_golden(
        tmp_path / "goldens" / "smoke", "a.md", "id: a\ninput: q\nasserts: ['contains:x']\n", ORIGIN
    )
    write_golden(
        tmp_path / "goldens" / "other", "b.md", "id: b\ninput: q\nasserts: ['contains:x']\n", ORIGIN
    )
    write_json(tmp_path / "out.json", {"a": "x", "b": "x"})
    code, _, err = run_cli(
        ["gate", "goldens", "--outputs", "out.json", "--write-baseline"], tmp_path
    )
    assert code == 0, err
    args = ["gate", str(Path("goldens", "smoke")), "--outputs", "out.json", "--check"]
    code, out, err = run_cli(args, tmp_path)
    assert code == 0, out + err
    assert "1 baseline golden(s) outside this selection were not compared" in out
    # The whole suite without b is a removal: a regression.
    (tmp_path / "goldens" / "other" / "b.md").unlink()
    code, out, _ = run_cli(["gate", "goldens", "--outputs", "out.json", "--check"], tmp_path)
    assert code == 2
    assert "b: passed in the baseline, now missing from the suite" in out
