"""assay's pytest plugin, run by pytest in a separate test project (a real ``python -m pytest``
process, the plugin loaded from its entry point): the packaged example's goldens as test items,
with its pass / fail / skip counts and exit code, ``-k`` and ``-m`` on them, the failure shown
with the check, the output and the diff, and ``--assay-check`` as the gate's verdict."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from assay.gate._run import example_paths
from tests.helpers.cli import process_env, run_cli

TIMEOUT_S = 120


def _project(tmp_path: Path) -> Path:
    goldens, outputs = example_paths()
    project = tmp_path / "project"
    shutil.copytree(goldens, project / "goldens")
    shutil.copy(outputs, project / "outputs.json")
    return project


def _pytest(project: Path, *args: str) -> tuple[int, str]:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:randomly", "-p", "no:cacheprovider", *args],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        env=process_env({"PYTEST_ADDOPTS": None}),
        check=False,
    )
    return done.returncode, done.stdout + done.stderr


ARGS = ("--assay-outputs", "outputs.json", "--assay-goldens", "goldens", "-rA")


def test_the_packaged_example_runs_as_test_items(tmp_path: Path) -> None:
    project = _project(tmp_path)
    code, out = _pytest(project, *ARGS)
    assert code == 1, out  # one golden fails
    assert "1 failed, 8 passed, 2 skipped" in out
    assert "PASSED assay::smoke-refund-policy" in out
    assert "FAILED assay::standard-summary-no-pii" in out
    # The failure: the checks that failed, the output, the diff against the expected answer.
    assert "failed not-contains:Jane: output satisfies 'contains'" in out
    assert "    Jane Roe (jane.roe@example.com) cannot reset her password since Tuesday." in out
    assert "    -A customer has been unable to reset their password since Tuesday." in out
    assert "needs a judge" in out  # why a needs-judge golden was skipped
    assert "assay: 11 results: 8 pass, 1 fail, 2 needs-judge, 0 no-output" in out


def test_k_and_m_select_goldens_by_id_and_tier(tmp_path: Path) -> None:
    project = _project(tmp_path)
    code, out = _pytest(project, *ARGS, "-k", "refund or fizzbuzz")
    assert code == 0, out
    assert "2 passed, 9 deselected" in out
    code, out = _pytest(project, *ARGS, "-m", "smoke")
    assert code == 0, out
    assert "FAILED" not in out and "deselected" in out


def test_assay_check_gates_like_the_cli(tmp_path: Path) -> None:
    project = _project(tmp_path)
    code, _, err = run_cli(["gate", "goldens", "--outputs", "outputs.json", "-w"], project)
    assert code == 0, err
    # Against its own baseline: the known failure is expected, the gate passes, exit 0.
    code, out = _pytest(project, *ARGS, "--assay-check")
    assert code == 0, out
    assert "9 passed, 2 skipped, 1 xfailed" in out
    assert "PASSED assay::assay-gate" in out and "assay gate: passed" in out
    # One answer gets worse: that golden fails, and so does the gate's item.
    answers = json.loads((project / "outputs.json").read_text(encoding="utf-8"))
    answers["smoke-refund-policy"] = "No refunds, ever."
    (project / "outputs.json").write_text(json.dumps(answers), encoding="utf-8")
    code, out = _pytest(project, *ARGS, "--assay-check")
    assert code == 1, out
    assert "FAILED assay::smoke-refund-policy" in out
    assert "FAILED assay::assay-gate" in out
    assert "1 regression(s) against" in out and "default/smoke-refund-policy" in out
    assert "assay gate: FAILED" in out


def test_without_its_options_the_plugin_does_nothing(tmp_path: Path) -> None:
    project = tmp_path / "plain"
    project.mkdir()
    (project / "test_plain.py").write_text(
        "import sys\n\ndef test_assay_is_not_loaded():\n"
        "    assert 'assay.gate._run' not in sys.modules\n",
        encoding="utf-8",
    )
    code, out = _pytest(project)
    assert code == 0, out
    assert "1 passed" in out and "assay:" not in out
    code, out = _pytest(project, "--assay-check")
    assert code == 4 and "--assay-check and --assay-baseline need --assay-outputs" in out


def test_a_bad_outputs_file_is_one_usage_error(tmp_path: Path) -> None:
    project = _project(tmp_path)
    (project / "outputs.json").write_text("{not json", encoding="utf-8")
    code, out = _pytest(project, *ARGS)
    assert code == 4, out  # pytest's usage error
    assert "assay: " in out and "outputs.json" in out and "Traceback" not in out


def test_under_check_only_a_regression_fails(tmp_path: Path) -> None:
    project = _project(tmp_path)
    code, _, err = run_cli(["gate", "goldens", "--outputs", "outputs.json", "-w"], project)
    assert code == 0, err
    # A new golden that fails is no regression: the gate passes, and so does pytest.
    (project / "goldens" / "smoke" / "new-one.md").write_text(
        "---\nid: smoke-new-one\ninput: q\nasserts: ['contains:zebra']\n---\nNew.\n\n"
        "## Origin\ntests/test_pytest_plugin.py\n",
        encoding="utf-8",
    )
    answers = json.loads((project / "outputs.json").read_text(encoding="utf-8"))
    answers["smoke-new-one"] = "no stripes here"
    (project / "outputs.json").write_text(json.dumps(answers), encoding="utf-8")
    code, _, _ = run_cli(["gate", "goldens", "--outputs", "outputs.json", "-c"], project)
    assert code == 0
    code, out = _pytest(project, *ARGS, "--assay-check")
    assert code == 0, out
    assert "XFAIL assay::smoke-new-one - fail, not a regression (not in the baseline)" in out
    assert "PASSED assay::assay-gate" in out


def test_a_golden_with_no_output_is_not_said_to_be_decided_by_none(tmp_path: Path) -> None:
    project = _project(tmp_path)
    outputs = json.loads((project / "outputs.json").read_text(encoding="utf-8"))
    del outputs["smoke-refund-policy"]
    (project / "outputs.json").write_text(json.dumps(outputs), encoding="utf-8")
    _, out = _pytest(project, *ARGS)
    assert "smoke-refund-policy (default): no-output" in out, out
    assert "decided by None" not in out
