"""With repeats, a golden that did not pass shows the answers that did not pass (issue 27,
item 6): distinct, with how many repeats gave each, in the text report and in the --json
result, never the passing answer its first repeat happened to give; and never in the saved run
record."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers.cli import run_cli

# One call at a time, so the module's counter gives the repeats these answers in this order.
ANSWERS = ["Paris", "Lyon", "Paris", "Nice", "Lyon"]
PROVIDER = f"ANSWERS = {ANSWERS!r}\nCALLS = []\n\ndef answer(prompt):\n" + (
    "    CALLS.append(prompt)\n    return ANSWERS[(len(CALLS) - 1) % len(ANSWERS)]\n"
)


def project(tmp_path: Path) -> list[str]:
    (tmp_path / "goldens.jsonl").write_text(
        json.dumps(
            {
                "id": "capital",
                "input": "Capital of France?",
                "expected": "Paris",
                "asserts": ["contains:Paris"],
            }
        )
        + "\n",
        encoding="utf-8",
    )
    (tmp_path / "answers.py").write_text(PROVIDER, encoding="utf-8")
    (tmp_path / "cands.yaml").write_text(
        "provider: {type: python, function: 'answers:answer', max_concurrency: 1}\n"
        "candidates:\n  - {id: a, prompt: '{{ input }}'}\nrepeats: 5\nmax_concurrency: 1\n",
        encoding="utf-8",
    )
    return ["eval", "goldens.jsonl", "--candidates", "cands.yaml", "--no-cache"]


def test_the_text_report_shows_each_failing_answer_with_its_count(tmp_path: Path) -> None:
    code, out, err = run_cli(project(tmp_path), tmp_path)
    assert code == 0, err
    lines = out.splitlines()
    row = next(i for i, line in enumerate(lines) if " capital " in f" {line} ")
    assert "FAIL" in lines[row] and "[2/5 repeats, FLAKY]" in lines[row]
    shown = [line.strip() for line in lines[row + 1 : row + 4]]
    assert shown == [
        "output (2 of 5 answers): Lyon",
        "output (1 of 5 answers): Nice",
        "expected: Paris",
    ]
    assert "output: Paris" not in out  # the passing first answer is not shown as the failure


def test_the_json_result_carries_the_failing_answers(tmp_path: Path) -> None:
    code, out, err = run_cli([*project(tmp_path), "--json"], tmp_path)
    assert code == 0, err
    [result] = json.loads(out)["results"]
    assert result["repeats"]["passed"] == 2
    assert result["output"] == "Lyon"  # what the result's checks describe
    assert result["failing_outputs"] == [
        {"output": "Lyon", "count": 2},
        {"output": "Nice", "count": 1},
    ]


def test_the_saved_run_record_holds_no_answer(tmp_path: Path) -> None:
    code, _, err = run_cli(project(tmp_path), tmp_path)
    assert code == 0, err
    records = list((tmp_path / ".assay" / "runs").rglob("*.json"))
    assert records
    text = "".join(p.read_text(encoding="utf-8") for p in records)
    for answer in ("Lyon", "Nice", "failing_outputs"):
        assert answer not in text
