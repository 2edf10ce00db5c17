"""A big suite of javascript asserts and transforms scored across forked workers gives what one
process gives (assay.gate._load): the engine starts no thread, so forking stays allowed after
it ran here, and each worker makes its own engine after the fork."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from assay.asserts import CheckContext, OutputView, parse_assert, run_assert
from assay.config import load_config
from assay.gate import _load as parallel
from assay.gate._run import GateOptions, load_selected, run_gate
from assay.gate._suite import LoadedSuite

needs_fork = pytest.mark.skipif(not parallel.fork_is_safe(), reason="no safe fork here")

ASSERTS: list[Any] = [
    {"op": "javascript", "value": "JSON.parse(output).n % 3 !== 0"},
    {"op": "javascript", "value": "JSON.parse(output).answer.length / 20", "threshold": 0.5},
    {
        "op": "javascript",
        # A check that counts its calls: only globals put back after each call make it pass
        # everywhere, in whatever process and order.
        "value": "globalThis.calls = (globalThis.calls || 0) + 1;\n"
        "return {pass: calls === 1, score: 0.5, reason: 'calls ' + calls};",
    },
    {"op": "not-javascript", "value": "output.includes('DROP')"},
]


def _row(i: int) -> str:
    row: dict[str, Any] = {"id": f"js{i:05d}", "input": f"question {i} " + "x" * 40}
    row["asserts"] = ASSERTS if i % 4 else ["contains:FROM"]
    if i % 5 == 0:
        row["transform"] = {
            "javascript": "JSON.stringify({...JSON.parse(output), n: JSON.parse(output).n + 1})"
        }
    return json.dumps(row)


def _suite(root: Path, rows: int = 3000) -> tuple[Path, Path]:
    goldens = root / "goldens"
    goldens.mkdir()
    (goldens / "rows.jsonl").write_text(
        "".join(_row(i) + "\n" for i in range(rows)), encoding="utf-8"
    )
    assert (goldens / "rows.jsonl").stat().st_size > 256 * 1024  # cut between processes
    outputs = {
        f"js{i:05d}": json.dumps({"n": i, "answer": "SELECT a FROM t" + "!" * (i % 9)})
        for i in range(rows)
        if i % 31
    }
    path = root / "outputs.json"
    path.write_text(json.dumps(outputs), encoding="utf-8")
    return goldens, path


@needs_fork
def test_forked_workers_score_javascript_as_one_process(tmp_path: Path, monkeypatch: Any) -> None:
    # The engine already ran in this process before the fork: the workers must not need it.
    spec = parse_assert({"op": "javascript", "value": "output === 'warm'"})
    assert run_assert(spec, OutputView("warm"), CheckContext()).passed is True
    assert parallel.fork_is_safe()  # no thread was left behind
    goldens, outputs = _suite(tmp_path)
    config = load_config()
    runs = []
    for workers in ("1", "2"):
        monkeypatch.setenv("ASSAY_WORKERS", workers)
        monkeypatch.setenv("ASSAY_PARALLEL_MIN_MS", "0")
        options = GateOptions(path=goldens, outputs=outputs)
        if workers == "2":
            loaded = load_selected(options, config)
            assert isinstance(loaded, LoadedSuite) and loaded.workers == 2
            assert loaded.prescored is not None  # javascript checks were scored in the chunks
        run = run_gate(options, config)
        runs.append((run.exit_code, run.to_dict()))
    assert runs[0] == runs[1]
    results = runs[0][1]["results"]
    assert {r["status"] for r in results} == {"pass", "fail", "no-output"}
    counted = [c for r in results for c in r["checks"] if "calls" in c["text"]]
    assert len(counted) > 2000 and all(c["passed"] for c in counted)


def test_javascript_is_for_a_worker_a_python_transform_is_not() -> None:
    from assay.asserts import runs_project_code

    assert not runs_project_code(parse_assert({"op": "javascript", "value": "true"}))
    js = {"op": "contains", "value": "x", "transform": {"javascript": "output"}}
    assert not runs_project_code(parse_assert(js))
    py = {"op": "contains", "value": "x", "transform": {"python": "output"}}
    assert runs_project_code(parse_assert(py))  # a project's Python: this process runs it
