"""With ``--output FILE`` stdout is empty, so the verdict and the regressions go to stderr: a CI
log must show why the gate failed whatever format the report was written in."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.cli import run_cli
from tests.helpers.goldens import ORIGIN, write_golden, write_json


def project(tmp_path: Path) -> None:
    write_golden(
        tmp_path / "goldens", "t.md", "id: t\ninput: q\nasserts: ['contains:done']\n", ORIGIN
    )
    write_json(tmp_path / "good.json", {"t": "done"})
    write_json(tmp_path / "bad.json", {"t": "nope"})


@pytest.mark.parametrize("fmt", ["text", "json", "markdown", "junit", "html"])
def test_a_failing_check_written_to_a_file_still_tells_the_log_why(
    tmp_path: Path, fmt: str
) -> None:
    project(tmp_path)
    code, _, err = run_cli(
        ["gate", "goldens", "--outputs", "good.json", "--write-baseline"], tmp_path
    )
    assert code == 0, err
    args = ["gate", "goldens", "--outputs", "bad.json", "--check", "--format", fmt]
    code, out, err = run_cli([*args, "--output", "report.out"], tmp_path)
    assert code == 2
    assert out == ""
    assert (tmp_path / "report.out").stat().st_size > 0
    lines = err.splitlines()
    assert lines[0] == "assay: report written to report.out"
    assert any(
        line.startswith("  REGRESSED  t: passed in the baseline, now fail") for line in lines
    )
    assert lines[-1] == "gate: FAILED (exit 2)"


def test_a_passing_check_written_to_a_file_says_it_passed(tmp_path: Path) -> None:
    project(tmp_path)
    run_cli(["gate", "goldens", "--outputs", "good.json", "--write-baseline"], tmp_path)
    args = ["gate", "goldens", "--outputs", "good.json", "--check", "--output", "r.txt"]
    code, out, err = run_cli(args, tmp_path)
    assert code == 0
    assert out == ""
    assert "1 golden: 1 pass" in err
    assert err.splitlines()[-1] == "gate: passed"


def test_without_output_stderr_stays_quiet(tmp_path: Path) -> None:
    project(tmp_path)
    code, out, err = run_cli(["gate", "goldens", "--outputs", "good.json"], tmp_path)
    assert code == 0
    assert err == ""
    assert "1 golden: 1 pass" in out
