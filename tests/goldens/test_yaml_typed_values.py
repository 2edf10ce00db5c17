"""YAML 1.1 types unquoted scalars: ``- contains: 3.10`` arrives as 3.1 and would pass on
"Python 3.1", ``- equals: yes`` as true, ``value: 2024-01-01`` as a date (a TypeError once).
The shorthand takes text only, and a date is never JSON: each is an error that says to quote."""

from __future__ import annotations

import json
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


# ---------------------------------------------------------------- YAML 1.1's yes / no / on / off
# Unquoted, YAML 1.1 reads them as booleans (YAML 1.2, JSON and promptfoo do not): `expected: No`
# was False, so with a similarity backend the answer "No" failed and "false" passed.


def gate_similar(tmp_path: Path, frontmatter: str, output: str) -> tuple[int, str, str]:
    write_golden(tmp_path / "goldens", "g.md", "id: g\n" + frontmatter, ORIGIN)
    outputs = write_json(tmp_path / "outputs.json", {"g": output})
    args = ["gate", "goldens", "--outputs", outputs, "--similarity", "difflib", "--no-save"]
    return run_cli(args, tmp_path)


@pytest.mark.parametrize(
    ("frontmatter", "field", "word", "typed"),
    [
        ("input: q\nexpected: No\n", "expected", "No", "false"),
        ("input: q\nexpected: YES\n", "expected", "YES", "true"),
        ("input: q\nexpected: {answer: off}\n", "expected.answer", "off", "false"),
        ("input: q\nexpected: [a, On]\n", "expected[1]", "On", "true"),
        ("input: yes\n", "input", "yes", "true"),
        ("input: q\nvars: {flag: no}\n", "vars.flag", "no", "false"),
        ("input: q\nvars: [{a: x}, {a: NO}]\n", "vars[1].a", "NO", "false"),
        ("input: q\nasserts:\n  - {op: equals, value: yes}\n", "asserts[0].value", "yes", "true"),
        (
            "input: q\nasserts:\n  - {op: equals, path: /ok, value: {v: Off}}\n",
            "asserts[0].value.v",
            "Off",
            "false",
        ),
        (
            "input: q\nasserts:\n  - {op: any-of, asserts: [{op: equals, value: on}]}\n",
            "asserts[0].asserts[0].value",
            "on",
            "true",
        ),
    ],
)
def test_an_unquoted_yaml_11_boolean_word_is_an_error_that_says_to_quote_it(
    tmp_path: Path, frontmatter: str, field: str, word: str, typed: str
) -> None:
    code, out, err = gate_similar(tmp_path, frontmatter, word)
    assert (code, out) == (1, ""), err
    assert "Traceback" not in err
    [line] = err.strip().splitlines()
    # Line 1 is "---", line 2 "id: g": the word is on the line after as many newlines.
    line_number = 3 + frontmatter[: frontmatter.rindex(word)].count("\n")
    assert line.startswith(f"assay: error: {Path('goldens', 'g.md')}:{line_number}: "), line
    assert f"field '{field}': YAML read the unquoted {word} of {field} as {typed}: quote it" in line
    assert f'"{word}"' in line and f"or write {typed} for the boolean" in line


def test_quoted_the_word_is_the_text_and_the_answer_no_passes(tmp_path: Path) -> None:
    code, out, err = gate_similar(tmp_path, "input: q\nexpected: 'No'\n", "No")
    assert code == 0, err
    assert "PASS" in out
    code, out, err = gate_similar(tmp_path, "input: q\nexpected: 'No'\n", "false")
    assert code == 0, err
    assert "FAIL" in out


@pytest.mark.parametrize(
    "frontmatter",
    [
        "input: q\nexpected: true\n",  # JSON's own booleans stay booleans
        "input: q\nexpected: {ok: false}\n",
        "input: q\nasserts:\n  - {op: equals, path: /ok, value: true}\n",
        "input: q\nvars: {flag: true}\n",
        "input: q\ndefaults: no\n",  # a boolean setting: the word means the boolean
        "input: q\ntitle: 'No'\n",
    ],
)
def test_true_false_and_boolean_settings_are_not_refused(tmp_path: Path, frontmatter: str) -> None:
    code, _, err = gate_similar(tmp_path, frontmatter, '{"ok": true}')
    assert code == 0, err


@pytest.mark.parametrize("field", ["rubric", "title", "role", "origin"])
def test_a_boolean_yaml_made_in_a_text_field_says_to_quote_it(tmp_path: Path, field: str) -> None:
    code, _, err = gate_similar(tmp_path, f"input: q\n{field}: No\n", "x")
    assert code == 1
    [line] = err.strip().splitlines()
    assert line == (
        f"assay: error: {Path('goldens', 'g.md')}:4: field '{field}': YAML read {field} as "
        f'false: quote it ({field}: "...") to test the text you wrote'
    )


def test_a_yaml_list_and_the_defaults_file_refuse_the_words_too(tmp_path: Path) -> None:
    goldens = tmp_path / "goldens"
    goldens.mkdir()
    (goldens / "suite.yaml").write_text("- id: a\n  input: q\n- id: b\n  expected: No\n")
    code, _, err = run_cli(["gate", "goldens", "--self-test"], tmp_path)
    assert code == 1
    assert err.startswith(
        f"assay: error: {Path('goldens', 'suite.yaml')}:4: field 'expected': "
        "YAML read the unquoted No of expected as false: quote it"
    ), err
    (goldens / "suite.yaml").write_text("- id: a\n  input: q\n")
    (goldens / "_defaults.yaml").write_text("vars:\n  polite: yes\n")
    code, _, err = run_cli(["gate", "goldens", "--self-test"], tmp_path)
    assert code == 1
    assert err.startswith(
        f"assay: error: {Path('goldens', '_defaults.yaml')}:2: field 'vars.polite': "
        "YAML read the unquoted yes of vars.polite as true: quote it"
    ), err


def test_json_booleans_in_a_jsonl_golden_are_booleans(tmp_path: Path) -> None:
    goldens = tmp_path / "goldens"
    goldens.mkdir()
    golden = {
        "id": "g",
        "input": "q",
        "expected": False,
        "asserts": [{"op": "equals", "value": False}],
    }
    (goldens / "g.jsonl").write_text(json.dumps(golden) + "\n")
    outputs = write_json(tmp_path / "outputs.json", {"g": "false"})
    code, out, err = run_cli(["gate", "goldens", "--outputs", outputs, "--no-save"], tmp_path)
    assert code == 0, err
    assert "PASS" in out
