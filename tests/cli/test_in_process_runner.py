"""The in-process CLI runner (``tests.helpers.cli``) behaves like a fresh ``python -m assay``
process and puts back the process-wide state a run touches."""

from __future__ import annotations

import logging
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import assay.cli
from tests.helpers.cli import CliTimeout, run_cli, run_cli_in_process
from tests.helpers.goldens import GoldensProject


def test_a_run_puts_the_process_back(project: GoldensProject, tmp_path: Path) -> None:
    before = (
        os.getcwd(),
        dict(os.environ),
        list(sys.path),
        sys.argv,
        sys.stdin,
        sys.stdout,
        sys.stderr,
        signal.getsignal(signal.SIGINT),
        logging.getLogger().level,
        list(logging.getLogger().handlers),
    )
    code, out, err = run_cli(
        ["gate", "goldens", "--outputs", "good.json"],
        tmp_path,
        env={"GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"), "HOME": None},
    )
    assert (code, err) == (0, "")
    assert "summary:" in out
    assert (tmp_path / "summary.md").is_file()  # the override reached the run
    after = (
        os.getcwd(),
        dict(os.environ),
        list(sys.path),
        sys.argv,
        sys.stdin,
        sys.stdout,
        sys.stderr,
        signal.getsignal(signal.SIGINT),
        logging.getLogger().level,
        list(logging.getLogger().handlers),
    )
    assert after == before


def test_a_module_the_run_imports_from_the_project_is_forgotten(tmp_path: Path) -> None:
    name = f"assay_runner_probe_{os.getpid()}"
    (tmp_path / f"{name}.py").write_text("def answer(prompt):\n    return prompt\n")
    (tmp_path / "goldens.jsonl").write_text(
        '{"id": "g", "input": "hi", "asserts": ["equals:hi"]}\n'
    )
    (tmp_path / "candidates.yaml").write_text(
        f"provider: {{type: python, function: '{name}:answer'}}\n"
        "candidates:\n  - {id: a, prompt: '{{ input }}'}\n",
        encoding="utf-8",
    )
    args = ["eval", "goldens.jsonl", "--candidates", "candidates.yaml", "--no-cache", "--json"]
    code, out, err = run_cli(args, tmp_path)
    assert code == 0, err
    assert name not in sys.modules  # a later run (another project) imports its own module
    (tmp_path / f"{name}.py").write_text("def answer(prompt):\n    return 'changed'\n")
    code, out, err = run_cli(args, tmp_path)
    assert code == 0, err
    assert '"fail"' in out  # the changed module was imported afresh


def test_stdout_and_stderr_are_utf8_text_and_not_a_terminal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def fake_main(argv: list[str]) -> None:
        print(f"tty={sys.stdout.isatty()} é ✓ {argv}")
        print("line one\r\nline two", file=sys.stderr)
        sys.exit(0)

    monkeypatch.setattr(assay.cli, "main", fake_main)
    assert run_cli(["x", tmp_path], tmp_path) == (
        0,
        f"tty=False é ✓ ['x', '{tmp_path}']\n",
        "line one\nline two\n",  # as a pipe read with text=True gives it
    )


@pytest.mark.parametrize(
    ("exit_with", "code", "err"),
    [(None, 0, ""), (0, 0, ""), (2, 2, ""), (256, 0, ""), ("a message", 1, "a message\n")],
)
def test_system_exit_becomes_the_exit_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, exit_with: Any, code: int, err: str
) -> None:
    def fake_main(argv: list[str]) -> None:
        sys.exit(exit_with)

    monkeypatch.setattr(assay.cli, "main", fake_main)
    assert run_cli([], tmp_path) == (code, "", err)


def test_an_escaping_exception_is_a_traceback_and_exit_1(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def fake_main(argv: list[str]) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(assay.cli, "main", fake_main)
    code, out, err = run_cli([], tmp_path)
    assert (code, out) == (1, "")
    assert err.startswith("Traceback (most recent call last):")
    assert err.endswith("RuntimeError: boom\n")


@pytest.mark.parametrize("catches_ctrl_c", [False, True])
def test_a_run_past_its_timeout_is_interrupted_and_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, catches_ctrl_c: bool
) -> None:
    def hanging_main(argv: list[str]) -> None:
        try:
            while True:
                time.sleep(0.005)
        except KeyboardInterrupt:
            if not catches_ctrl_c:
                raise
            print("assay: interrupted", file=sys.stderr)
            sys.exit(130)

    monkeypatch.setattr(assay.cli, "main", hanging_main)
    started = time.monotonic()
    with pytest.raises(CliTimeout, match=r"did not finish within 0\.2 s"):
        run_cli_in_process([], tmp_path, timeout=0.2)
    assert time.monotonic() - started < 5
    time.sleep(0.05)  # no interrupt is left pending for the test after it


def test_a_closed_stderr_keeps_what_was_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # main() closes stderr when the reader of stdout went away (BrokenPipeError).
    def fake_main(argv: list[str]) -> None:
        print("partial", file=sys.stderr)
        sys.stderr.close()
        sys.exit(0)

    monkeypatch.setattr(assay.cli, "main", fake_main)
    assert run_cli([], tmp_path) == (0, "", "partial\n")
    assert not sys.stderr.closed


def test_main_puts_the_collectors_thresholds_back() -> None:
    import gc

    before = gc.get_threshold()
    seen: list[tuple[int, ...]] = []
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(assay.cli.cli, "main", lambda **_: seen.append(gc.get_threshold()) or 0)
        with pytest.raises(SystemExit) as stop:
            assay.cli.main(["gate"])
    assert stop.value.code == 0
    assert seen and seen[0] != before  # the run's own thresholds...
    assert gc.get_threshold() == before  # ...and the caller's after
