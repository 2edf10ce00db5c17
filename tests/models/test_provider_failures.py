"""A python provider that misbehaves, through ``assay eval --candidates``.

Whatever the function does in a call (raise, ``sys.exit()``, return nonsense token counts) is an
``error`` result for that call, named in its note, and the run goes on: never assay's exit code,
never a traceback. A function that cannot even be loaded is one error line naming the candidates
file and the ``function`` field, exit 1.
"""

from __future__ import annotations

import asyncio
import errno
import json
import os
import textwrap
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.cli import run_cli

GOLDENS = '{"id": "g1", "input": "hello", "asserts": ["contains:hello"]}\n'

MODULE = textwrap.dedent(
    """
    import sys


    class Odd(BaseException):
        pass


    def exits(prompt):
        sys.exit(2)


    async def exits_async(prompt):
        raise SystemExit(2)


    def odd(prompt):
        raise Odd("not an Exception")


    def boom(prompt):
        raise RuntimeError("upstream said no\\n" + "x" * 1000)


    def returns(prompt):
        return RETURNED
    """
)


def project(tmp_path: Path, function: str, module: str = MODULE, **globals_: Any) -> list[str]:
    """A goldens file, a module ``prov`` beside it, a candidates file calling ``function``;
    returns the ``assay eval`` arguments (report written to report.json)."""
    (tmp_path / "goldens.jsonl").write_text(GOLDENS, encoding="utf-8")
    preamble = "".join(f"{name} = {value}\n" for name, value in globals_.items())
    (tmp_path / "prov.py").write_text(preamble + module, encoding="utf-8")
    (tmp_path / "cands.yaml").write_text(
        f"provider: {{type: python, function: '{function}'}}\n"
        "candidates:\n  - {id: a, prompt: '{{ input }}'}\n",
        encoding="utf-8",
    )
    return [
        "eval",
        "goldens.jsonl",
        "--candidates",
        "cands.yaml",
        "--no-cache",
        "--json",
        "--output",
        "report.json",
    ]


def only_result(tmp_path: Path) -> dict[str, Any]:
    results = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))["results"]
    assert len(results) == 1
    return results[0]  # type: ignore[no-any-return]


def assert_error_result(tmp_path: Path, args: list[str], *needles: str) -> str:
    """Exit 1 (an error result is no regression, but with max_error_rate 0 the run cannot
    decide, in every mode), no traceback, the report written, the one result an error whose
    note holds every needle."""
    code, out, err = run_cli(args, tmp_path)
    assert "Traceback" not in out + err
    assert code == 1, err
    assert "assay: error: the gate cannot decide: 1 of 1 result(s) are errors" in err
    result = only_result(tmp_path)
    assert result["status"] == "error"
    note = " ".join(result["notes"])
    for needle in needles:
        assert needle in note, note
    return note


@pytest.mark.parametrize(
    "function, needle",
    [
        ("prov:exits", "the function raised SystemExit (exit code 2)"),
        ("prov:exits_async", "the function raised SystemExit (exit code 2)"),
        ("prov:odd", "the function raised Odd: not an Exception"),
    ],
)
def test_a_function_that_exits_is_an_error_result_not_assays_exit_code(
    tmp_path: Path, function: str, needle: str
) -> None:
    assert_error_result(tmp_path, project(tmp_path, function), needle)


def test_an_exception_message_is_kept_on_one_short_line(tmp_path: Path) -> None:
    note = assert_error_result(
        tmp_path,
        project(tmp_path, "prov:boom"),
        "the function raised RuntimeError: upstream said no x",
    )
    assert "\n" not in note
    assert len(note) < 300


def test_a_function_that_exits_under_check_cannot_decide_with_a_report(tmp_path: Path) -> None:
    # The baseline passed; now the call fails: an error is no regression, so the gate cannot
    # decide (exit 1, never 2), the report says why, and assay did not take the function's
    # exit code (2).
    args = project(tmp_path, "prov:returns", RETURNED="'hello'")
    assert run_cli([*args, "--write-baseline"], tmp_path)[0] == 0
    project(tmp_path, "prov:exits")
    code, _, err = run_cli([*args, "--check"], tmp_path)
    assert "Traceback" not in err
    assert code == 1
    assert "the gate cannot decide: 1 of 1 result(s) are errors" in err
    assert only_result(tmp_path)["status"] == "error"


@pytest.mark.parametrize(
    "returned, field",
    [
        ('{"text": "hello", "input_tokens": "many"}', "input_tokens"),
        ('{"text": "hello", "input_tokens": -3}', "input_tokens"),
        ('{"text": "hello", "output_tokens": float("nan")}', "output_tokens"),
        ('{"text": "hello", "output_tokens": 2.5}', "output_tokens"),
        ('{"text": "hello", "output_tokens": True}', "output_tokens"),
        ('{"text": "hello", "output_tokens": 10**400}', "output_tokens"),
        ('{"text": "hello", "output_tokens": 10**13}', "output_tokens"),
    ],
    ids=["string", "negative", "nan", "fraction", "bool", "huge", "too-many"],
)
def test_bad_token_counts_are_an_error_result_naming_the_field(
    tmp_path: Path, returned: str, field: str
) -> None:
    assert_error_result(
        tmp_path,
        project(tmp_path, "prov:returns", RETURNED=returned),
        f"as {field}: it must be a whole number",
    )


def test_good_token_counts_still_pass(tmp_path: Path) -> None:
    args = project(
        tmp_path,
        "prov:returns",
        RETURNED='{"text": "hello", "input_tokens": 3, "output_tokens": None}',
    )
    code, _, err = run_cli(args, tmp_path)
    assert (code, err.count("\n")) == (0, 2), err  # the verdict lines of --output
    assert only_result(tmp_path)["status"] == "pass"


@pytest.mark.parametrize(
    "module, function, needle",
    [
        ("raise RuntimeError('broken at import')\n", "prov:f", "RuntimeError: broken at import"),
        ("def f(:\n", "prov:f", "SyntaxError"),
        ("import sys\nsys.exit(3)\n", "prov:f", "SystemExit (exit code 3)"),
        ("", "assay_no_such_module_xyz:f", "No module named 'assay_no_such_module_xyz'"),
        ("def g(prompt):\n    return prompt\n", "prov:f", "module 'prov' has no 'f'"),
        ("f = 'text'\n", "prov:f", "'prov:f' is not a callable"),
        ("", "prov", "function must look like 'module:function'"),
    ],
    ids=[
        "raises",
        "syntax-error",
        "exits",
        "missing-module",
        "missing-attr",
        "not-callable",
        "no-colon",
    ],
)
def test_a_function_that_cannot_load_is_one_line_naming_the_file_and_field(
    tmp_path: Path, module: str, function: str, needle: str
) -> None:
    code, out, err = run_cli(project(tmp_path, function, module=module), tmp_path)
    assert "Traceback" not in out + err
    assert code == 1
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("assay: error: cands.yaml: field 'provider.function': "), err
    assert needle in lines[0]
    assert not (tmp_path / "report.json").exists()


# --------------------------------------------------------------------------- command provider


def command_project(tmp_path: Path, command: str) -> list[str]:
    (tmp_path / "goldens.jsonl").write_text(GOLDENS, encoding="utf-8")
    (tmp_path / "cands.yaml").write_text(
        f"provider: {{type: command, command: {json.dumps(command)}, max_retries: 0}}\n"
        "candidates:\n  - {id: a, prompt: '{{ input }}'}\n",
        encoding="utf-8",
    )
    return [
        "eval",
        "goldens.jsonl",
        "--candidates",
        "cands.yaml",
        "--no-cache",
        "--json",
        "--output",
        "report.json",
    ]


def test_a_command_that_cannot_start_is_an_error_result(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def no_processes_left(*args: Any, **kwargs: Any) -> Any:
        raise BlockingIOError(errno.EAGAIN, os.strerror(errno.EAGAIN))

    monkeypatch.setattr(asyncio, "create_subprocess_shell", no_processes_left)
    assert_error_result(tmp_path, command_project(tmp_path, "cat"), "the command could not start: ")


def test_a_command_killed_by_a_signal_says_so(tmp_path: Path) -> None:
    assert_error_result(
        tmp_path, command_project(tmp_path, "kill -9 $$"), "the command was killed by signal 9"
    )
