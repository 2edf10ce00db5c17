"""Adaptive repeats (``--max-repeats``): goldens whose comparison is still open get more trials,
a batch at a time; decided goldens get none. The provider's answers follow a fixed pattern per
prompt (every second call of g0 is wrong in the check phase), so every figure is exact."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.helpers.cli import run_cli

PROVIDER = """
import itertools
from pathlib import Path

_COUNTS = {}


def answer(prompt):
    count = _COUNTS.setdefault(prompt, itertools.count())
    n = next(count)
    if Path("phase.txt").read_text().strip() == "check" and prompt == "q0" and n % 2:
        return "nope"
    return "done"
"""


def project(tmp_path: Path, repeats: int, phase: str) -> list[str]:
    lines = [
        json.dumps({"id": f"g{i}", "input": f"q{i}", "asserts": ["contains:done"]})
        for i in range(10)
    ]
    (tmp_path / "goldens.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (tmp_path / "prov.py").write_text(PROVIDER, encoding="utf-8")
    (tmp_path / "phase.txt").write_text(phase, encoding="utf-8")
    (tmp_path / "cands.yaml").write_text(
        "provider: {type: python, function: 'prov:answer'}\n"
        f"repeats: {repeats}\n"
        "candidates:\n  - {id: a, prompt: '{{ input }}'}\n",
        encoding="utf-8",
    )
    return ["eval", "goldens.jsonl", "--candidates", "cands.yaml", "--no-cache"]


def check(tmp_path: Path, *extra: str) -> tuple[int, dict[str, Any]]:
    args = project(tmp_path, 4, "check")
    code, out, err = run_cli([*args, "--check", "--json", *extra], tmp_path)
    assert code in (0, 2), err
    return code, json.loads(out)


def test_an_open_comparison_gets_more_trials_until_it_is_decided(tmp_path: Path) -> None:
    assert run_cli([*project(tmp_path, 20, "base"), "--write-baseline"], tmp_path)[0] == 0
    # At 4 trials g0's 20/20 -> 2/4 is open (Fisher p = 0.107); batches of 4 go to g0 alone
    # until 20/20 -> 8/16 is significant at alpha / 2 / 5 looks: p = 0.000425, Holm 0.00425.
    code, document = check(tmp_path, "--max-repeats", "20")
    assert code == 2
    assert document["summary"]["model_calls"]["made"] == 40 + 12
    [reg] = document["regressions"]
    assert reg["id"] == "g0"
    assert reg["evidence"]["after"] == {"passes": 8, "trials": 16}
    assert reg["evidence"]["level"] == 0.005
    by_id = {r["id"]: r for r in document["results"]}
    assert by_id["g0"]["repeats"]["k"] == 16
    assert by_id["g1"]["repeats"]["k"] == 4


def test_without_adaptive_repeats_the_same_drop_is_not_yet_evidence(tmp_path: Path) -> None:
    assert run_cli([*project(tmp_path, 20, "base"), "--write-baseline"], tmp_path)[0] == 0
    code, document = check(tmp_path)
    assert code == 0
    assert document["summary"]["model_calls"]["made"] == 40


def test_decided_goldens_get_no_extra_calls(tmp_path: Path) -> None:
    assert run_cli([*project(tmp_path, 20, "base"), "--write-baseline"], tmp_path)[0] == 0
    (tmp_path / "phase.txt").write_text("base", encoding="utf-8")
    args = project(tmp_path, 4, "base")
    code, out, err = run_cli([*args, "--check", "--json", "--max-repeats", "20"], tmp_path)
    assert code == 0, err
    assert json.loads(out)["summary"]["model_calls"]["made"] == 40


def test_max_repeats_is_a_check_option_for_live_runs(tmp_path: Path) -> None:
    args = project(tmp_path, 4, "base")
    code, _, err = run_cli([*args, "--max-repeats", "8"], tmp_path)
    assert code == 1 and "--alpha and --max-repeats apply to --check" in err
    # Given outputs are what they are: more trials are for live runs (assay eval) only.
    code, _, err = run_cli(["gate", "--example", "--check", "--max-repeats", "8"], tmp_path)
    assert code == 1 and "No such option '--max-repeats'" in err
