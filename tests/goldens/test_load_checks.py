"""What an assert can be found wrong by without any output is found when its golden is loaded:
an unknown op (with a "did you mean"), an unknown argument, a regex that does not compile, a
``python`` assert that names no function or a file the project lacks. Such an assert fails
every output alike; with no expected answer ``--self-test`` used to say OK, and a baseline that
recorded the golden as failing could never see it regress. Each is one error line naming the
file, the line and the field, from the gate, eval and ``--self-test`` alike."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.cli import run_cli
from tests.helpers.goldens import ORIGIN, write_golden, write_json

# Line 1 is "---", then id, input and asserts: the first assert is on line 5.
HEAD = "id: g\ninput: q\nasserts:\n"
ECHO = {"provider": {"type": "echo"}, "candidates": [{"id": "c", "prompt": "{{ input }}"}]}


def one_line(code: int, out: str, err: str) -> str:
    assert code == 1, (out, err)
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


def every_command(tmp_path: Path) -> list[str]:
    """The error line of the gate, eval and --self-test on the goldens in tmp_path/goldens."""
    outputs = write_json(tmp_path / "outputs.json", {"g": "x"})
    candidates = write_json(tmp_path / "candidates.json", ECHO)
    commands = [
        ["gate", "goldens", "--outputs", str(outputs), "--no-save"],
        ["eval", "goldens", "--candidates", str(candidates), "--no-save", "--no-cache"],
        ["gate", "goldens", "--self-test"],
    ]
    return [one_line(*run_cli(args, tmp_path)) for args in commands]


@pytest.mark.parametrize(
    ("asserts", "field", "message"),
    [
        ("  - 'contain:x'\n", "asserts[0]", "unknown op 'contain': did you mean 'contains'?"),
        ("  - {op: contain, value: x}\n", "asserts[0]", "did you mean 'contains'?"),
        ("  - contian: x\n", "asserts[0]", "unknown op 'contian': did you mean 'contains'?"),
        ("  - 'not-contian:x'\n", "asserts[0]", "did you mean 'not-contains'?"),
        ("  - 'regx:a+'\n", "asserts[0]", "unknown op 'regx': did you mean 'regex'?"),
        ("  - 'frobnicate'\n", "asserts[0]", "unknown op 'frobnicate'"),
        (
            "  - is-json\n  - {op: any-of, asserts: [is-json, 'equal:x']}\n",
            "asserts[1].asserts[1]",
            "unknown op 'equal': did you mean 'equals'?",
        ),
        (
            "  - {op: contains, valeu: x}\n",
            "asserts[0].valeu",
            "unknown argument 'valeu' for contains: did you mean 'value'?",
        ),
        ("  - {op: regex, value: '(unclosed'}\n", "asserts[0].value", "invalid regex '(unclosed'"),
        ("  - 'regex:[a-'\n", "asserts[0].value", "invalid regex '[a-'"),
        ("  - {op: regex, pattern: 'x)'}\n", "asserts[0].pattern", "invalid regex 'x)'"),
        ("  - {op: regex, value: a, flags: x}\n", "asserts[0].flags", "unknown regex flag 'x'"),
        (
            "  - {op: python, value: checks/nothere.py}\n",
            "asserts[0].value",
            "'checks/nothere.py' is not a function reference",
        ),
    ],
)
def test_an_assert_wrong_without_any_output_is_refused_by_every_command(
    tmp_path: Path, asserts: str, field: str, message: str
) -> None:
    write_golden(tmp_path / "goldens", "g.md", HEAD + asserts, ORIGIN)
    line_of_field = 4 + asserts.count("\n")  # the last assert's line
    for line in every_command(tmp_path):
        where = f"assay: error: {Path('goldens', 'g.md')}:{line_of_field}: field '{field}': "
        assert line.startswith(where), line
        assert message in line, line


def test_a_bad_assert_in_the_folder_defaults_names_the_defaults_file(tmp_path: Path) -> None:
    goldens = tmp_path / "goldens"
    write_golden(goldens, "g.md", "id: g\ninput: q\n", ORIGIN)
    (goldens / "_defaults.yaml").write_text("asserts:\n  - is-json\n  - 'icontain:x'\n")
    for line in every_command(tmp_path):
        assert line.startswith(
            f"assay: error: {Path('goldens', '_defaults.yaml')}:3: field 'asserts[1]': "
            "unknown op 'icontain': did you mean 'icontains'?"
        ), line


def test_a_bad_assert_in_a_yaml_list_or_jsonl_names_its_line(tmp_path: Path) -> None:
    goldens = tmp_path / "goldens"
    goldens.mkdir()
    (goldens / "suite.yaml").write_text(
        "- id: a\n  input: q\n- id: b\n  input: q\n  asserts: ['startswith:x']\n"
    )
    line = one_line(*run_cli(["gate", "goldens", "--self-test"], tmp_path))
    assert line == (
        f"assay: error: {Path('goldens', 'suite.yaml')}:5: field 'asserts[0]': "
        "unknown op 'startswith': did you mean 'starts-with'?"
    )
    (goldens / "suite.yaml").unlink()
    record = {"id": "j", "input": "q", "asserts": [{"op": "regex", "value": "*x"}]}
    (goldens / "s.jsonl").write_text("\n" + json.dumps(record) + "\n")
    line = one_line(*run_cli(["gate", "goldens", "--self-test"], tmp_path))
    assert line.startswith(
        f"assay: error: {Path('goldens', 's.jsonl')}:2: field 'asserts[0].value': invalid regex"
    )


@pytest.mark.parametrize("expected", ["", "expected: '[1]'\n"])
def test_a_python_check_whose_file_is_missing_fails_the_self_test(
    tmp_path: Path, expected: str
) -> None:
    # With or without an expected answer: the check can never run.
    frontmatter = f"id: g\ninput: q\n{expected}asserts:\n  - is-json\n"
    frontmatter += "  - {op: python, value: 'checks/nothere.py:check'}\n"
    write_golden(tmp_path / "goldens", "g.md", frontmatter, ORIGIN)
    line = one_line(*run_cli(["gate", "goldens", "--self-test"], tmp_path))
    line_of_field = 7 if expected else 6
    assert line.startswith(
        f"assay: error: {Path('goldens', 'g.md')}:{line_of_field}: field 'asserts[1].value': "
        "checks/nothere.py:check: no file "
    ), line
    (tmp_path / "checks").mkdir()
    (tmp_path / "checks" / "nothere.py").write_text("def check(output, context):\n    return 1\n")
    code, out, err = run_cli(["gate", "goldens", "--self-test"], tmp_path)
    assert code == 0, err
    assert "self-test: OK" in out


def test_valid_asserts_and_plugin_ops_still_load_and_self_test_ok(tmp_path: Path) -> None:
    # A namespaced op comes from a plugin or register_op, possibly registered after loading.
    frontmatter = HEAD + (
        "  - 'regex:^a{2}\\b'\n  - {op: regex, pattern: 'x', flags: im}\n"
        "  - {op: contains, value: a, case_insensitive: true, weight: 2, name: n}\n"
        "  - 'not-contains:z'\n  - {op: equals, path: /a, value: 1}\n"
        "  - myorg/whatever\n"
    )
    write_golden(tmp_path / "goldens", "g.md", frontmatter, ORIGIN)
    code, out, err = run_cli(["gate", "goldens", "--self-test"], tmp_path)
    assert code == 0, err
    assert "self-test: OK" in out
