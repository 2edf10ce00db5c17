"""Strict goldens: an error names the file, the line and the field; a text op's argument that
YAML typed as a number, boolean, null or date is an error in the full mapping form too; an
assert's keys are text; other tools' keys are kept but listed by ``--self-test``, and
``strict = true`` makes every unknown key an error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.cli import run_cli
from tests.helpers.goldens import ORIGIN, write_golden, write_json


def error_line(code: int, out: str, err: str) -> str:
    assert code == 1, (out, err)
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


def run_golden(tmp_path: Path, frontmatter: str, output: str = "x") -> tuple[int, str, str]:
    write_golden(tmp_path / "goldens", "g.md", frontmatter, ORIGIN)
    outputs = write_json(tmp_path / "outputs.json", {"g": output})
    return run_cli(["gate", "goldens", "--outputs", outputs], tmp_path)


# The frontmatter starts on the file's line 2 (line 1 is '---').
def test_an_error_in_an_assert_names_the_line_of_that_assert(tmp_path: Path) -> None:
    frontmatter = "id: g\ninput: q\nasserts:\n  - is-json\n  - {op: contains, value: 3.10}\n"
    line = error_line(*run_golden(tmp_path, frontmatter))
    assert line.startswith(f"assay: error: {Path('goldens', 'g.md')}:6: field 'asserts[1].value'")
    assert "the number 3.1" in line and "quote it" in line


def test_an_error_in_a_yaml_list_names_the_line_of_the_field(tmp_path: Path) -> None:
    goldens = tmp_path / "goldens"
    goldens.mkdir()
    (goldens / "suite.yaml").write_text(
        "- id: a\n  input: q\n- id: b\n  input: q\n  expect: done\n", encoding="utf-8"
    )
    outputs = write_json(tmp_path / "outputs.json", {"a": "x", "b": "x"})
    line = error_line(*run_cli(["gate", "goldens", "--outputs", outputs], tmp_path))
    assert line == (
        f"assay: error: {Path('goldens', 'suite.yaml')}:5: field 'expect': "
        "unknown field 'expect': did you mean 'expected'?"
    )


@pytest.mark.parametrize(
    ("assert_yaml", "typed"),
    [
        ("{op: contains, value: 3.10}", "the number 3.1"),
        ("{op: icontains, value: yes}", "true"),
        ("{op: not-contains, value: ~}", "null"),
        ("{op: starts-with, value: 2024-01-01}", "2024-01-01 as a date"),
        ("{op: regex, pattern: 1.5}", "the number 1.5"),
        ("{op: levenshtein, value: 100, threshold: 2}", "the number 100"),
        ("{op: contains-any, value: [a, 3.10]}", "the number 3.1"),
        ("{op: contains-all, value: [NO, b]}", "false"),
    ],
)
def test_a_text_op_argument_that_yaml_typed_is_an_error_saying_to_quote_it(
    tmp_path: Path, assert_yaml: str, typed: str
) -> None:
    frontmatter = f"id: g\ninput: q\nasserts:\n  - {assert_yaml}\n"
    line = error_line(*run_golden(tmp_path, frontmatter, "Python 3.1 yes no"))
    assert f"{Path('goldens', 'g.md')}:5: field 'asserts[0]." in line
    assert typed in line and "quote it" in line


def test_json_ops_keep_their_json_values(tmp_path: Path) -> None:
    frontmatter = (
        "id: g\ninput: q\nasserts:\n  - {op: equals, path: /n, value: 10}\n"
        "  - {op: equals, path: /ok, value: true}\n"
    )
    code, out, err = run_golden(tmp_path, frontmatter, '{"n": 10, "ok": true}')
    assert code == 0, err
    assert "PASS" in out


@pytest.mark.parametrize("key", ["1", "yes", "null"])
def test_an_assert_key_that_is_not_text_is_an_error(tmp_path: Path, key: str) -> None:
    frontmatter = f"id: g\ninput: q\nasserts:\n  - {{op: contains, value: x, {key}: y}}\n"
    line = error_line(*run_golden(tmp_path, frontmatter))
    assert f"{Path('goldens', 'g.md')}:5: field 'asserts[0]'" in line
    assert "an assert's keys must be text" in line and "quote it" in line


def test_self_test_lists_unknown_keys_as_warnings_and_passes(tmp_path: Path) -> None:
    frontmatter = (
        "id: w\ntype: eval\nnotes: n\ninput: q\nexpected: done\nasserts:\n  - 'equals:done'\n"
    )
    write_golden(tmp_path / "goldens", "w.md", frontmatter, ORIGIN)
    code, out, err = run_cli(["gate", "goldens", "--self-test"], tmp_path)
    assert code == 0, err
    assert (
        "warning       w: unknown field(s) 'type', 'notes' kept as metadata"
        " (strict = true in the config makes them errors)"
    ) in out
    assert "self-test: OK" in out
    code, out, err = run_cli(["gate", "goldens", "--self-test", "--json"], tmp_path)
    assert code == 0, err
    assert json.loads(out)["unknown_fields"] == {"w": ["type", "notes"]}


def test_self_test_has_no_warning_for_known_fields(tmp_path: Path) -> None:
    write_golden(tmp_path / "goldens", "k.md", "id: k\ninput: q\nexpected: a\nasserts: [is-json]\n")
    _, out, _ = run_cli(["gate", "goldens", "--self-test", "--json"], tmp_path)
    assert json.loads(out)["unknown_fields"] == {}


def test_strict_config_makes_every_unknown_key_an_error(tmp_path: Path) -> None:
    frontmatter = "id: w\ninput: q\ntype: eval\nasserts:\n  - 'contains:x'\n"
    assert run_golden(tmp_path, frontmatter)[0] == 0  # lax by default: kept as metadata
    (tmp_path / "assay.toml").write_text("strict = true\n", encoding="utf-8")
    line = error_line(*run_golden(tmp_path, frontmatter))
    assert line == (
        f"assay: error: {Path('goldens', 'g.md')}:4: field 'type': unknown field 'type'"
        " (strict = true in the config: every field must be known)"
    )
    code, _, err = run_cli(["gate", "goldens", "--self-test"], tmp_path)
    assert code == 1 and "field 'type'" in err


def test_strict_must_be_a_boolean(tmp_path: Path) -> None:
    (tmp_path / "assay.toml").write_text('strict = "yes"\n', encoding="utf-8")
    line = error_line(*run_golden(tmp_path, "id: g\ninput: q\nasserts: [is-json]\n"))
    path = tmp_path / "assay.toml"
    assert line == f"assay: error: {path}:1: field 'strict': must be true or false"


def test_packaged_goldens_load_under_strict(tmp_path: Path) -> None:
    (tmp_path / "assay.toml").write_text("strict = true\n", encoding="utf-8")
    code, _, err = run_cli(["gate", "--example"], tmp_path)
    assert code == 0, err


def test_the_gate_field_takes_strict_or_statistical(tmp_path: Path) -> None:
    frontmatter = "id: g\ninput: q\ngate: exact\nasserts: [is-json]\n"
    line = error_line(*run_golden(tmp_path, frontmatter))
    assert line == (
        f"assay: error: {Path('goldens', 'g.md')}:4: field 'gate': "
        "unknown gate rule 'exact' (use strict, statistical)"
    )
    assert run_golden(tmp_path, "id: g\ninput: q\ngate: strict\nasserts: [is-json]\n", "{}")[0] == 0
