"""YAML 1.1 types unquoted scalars: ``- contains: 3.10`` arrives as 3.1 and would pass on
"Python 3.1", ``- equals: yes`` as true, ``value: 2024-01-01`` as a date (a TypeError once).
The shorthand takes text only, and a date is never JSON: each is an error that says to quote."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.cli import run_cli
from tests.helpers.goldens import ORIGIN, write_golden, write_json


def run(tmp_path: Path, frontmatter: str, output: str) -> tuple[int, str, str]:
    write_golden(tmp_path / "goldens", "g.md", "id: g\ninput: q\n" + frontmatter, ORIGIN)
    outputs = write_json(tmp_path / "outputs.json", {"g": output})
    return run_cli(["gate", "goldens", "--outputs", outputs], tmp_path)


@pytest.mark.parametrize(
    ("assert_line", "typed"),
    [
        ("- contains: 3.10", "the number 3.1"),
        ("- contains: 42", "the number 42"),
        ("- equals: yes", "true"),
        ("- contains: NO", "false"),
        ("- not-contains: ~", "null"),
        ("- starts-with: 2024-01-01", "a date (2024-01-01)"),
    ],
)
def test_a_typed_shorthand_value_is_an_error_that_says_to_quote(
    tmp_path: Path, assert_line: str, typed: str
) -> None:
    code, out, err = run(tmp_path, f"asserts:\n  {assert_line}\n", "Python 3.1 yes NO")
    assert code == 1 and out == ""
    assert "Traceback" not in err
    [line] = err.strip().splitlines()
    assert "g.md" in line and "asserts[0]" in line
    assert f"as {typed}: quote it" in line


@pytest.mark.parametrize(
    ("frontmatter", "field"),
    [
        ("asserts:\n  - {op: equals, value: 2024-01-01}\n", "asserts[0].value"),
        ("asserts:\n  - {op: contains-any, value: [a, 2024-01-01]}\n", "asserts[0].value"),
        ("expected: 2024-01-01\n", "expected"),
        ("expected: {due: 2024-01-01T10:00:00}\n", "expected"),
    ],
)
def test_a_date_anywhere_is_an_error_naming_the_field(
    tmp_path: Path, frontmatter: str, field: str
) -> None:
    code, _, err = run(tmp_path, frontmatter, "x")
    assert code == 1
    assert "Traceback" not in err
    assert f"field '{field}'" in err and "as a date" in err and "quote it" in err


def test_quoted_values_test_the_text_as_written(tmp_path: Path) -> None:
    code, out, err = run(tmp_path, "asserts:\n  - contains: '3.10'\n", "Python 3.1")
    assert code == 0, err
    assert "FAIL" in out  # "3.10" is not in "Python 3.1" (as 3.1 it would have passed)
    code, out, err = run(tmp_path, "asserts:\n  - contains: '3.10'\n", "Python 3.10")
    assert code == 0 and "PASS" in out


def test_json_values_at_a_pointer_keep_their_json_type(tmp_path: Path) -> None:
    frontmatter = "asserts:\n  - {op: equals, path: /n, value: 10}\n"
    code, out, err = run(tmp_path, frontmatter, '{"n": 10}')
    assert code == 0 and "PASS" in out, err
