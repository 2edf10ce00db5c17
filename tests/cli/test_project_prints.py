"""What the project's own code prints while a run goes (a python assert, a python transform)
reaches stderr, never stdout: a ``--json`` report on stdout must stay one parseable document.
promptfoo's python-assert-external example prints from its assert, as real projects do."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers.cli import run_cli
from tests.helpers.goldens import write_golden, write_json

CHECKS = """
def loud(output, context):
    print("checking", output)
    return "blue" in output


def get_transform(output, context):
    print("transforming")
    return output.lower()
"""


def _project(root: Path) -> None:
    (root / "checks.py").write_text(CHECKS, encoding="utf-8")
    write_golden(
        root / "goldens",
        "sky.md",
        "id: sky\ninput: 'Colour of the sky?'\n"
        "transform: {python: 'file://checks.py'}\n"
        "asserts:\n  - {op: python, value: 'checks.py:loud'}\n",
    )
    write_json(root / "outputs.json", {"sky": "BLUE"})


def test_a_json_report_parses_when_the_projects_code_prints(tmp_path: Path) -> None:
    _project(tmp_path)
    args = ["gate", "--outputs", "outputs.json", "--json", "--no-save"]
    code, out, err = run_cli(args, tmp_path)
    assert code == 0, err
    document = json.loads(out)  # stdout is the report alone
    assert document["results"][0]["status"] == "pass"
    assert "checking blue" in err and "transforming" in err


def test_self_test_json_parses_when_the_projects_code_prints(tmp_path: Path) -> None:
    _project(tmp_path)
    (tmp_path / "goldens" / "sky.md").write_text(
        "---\nid: sky\ninput: 'Colour of the sky?'\nexpected: 'blue'\n"
        "asserts:\n  - {op: python, value: 'checks.py:loud'}\n---\n",
        encoding="utf-8",
    )
    code, out, err = run_cli(["gate", "--self-test", "--json"], tmp_path)
    assert code == 0, out + err
    json.loads(out)
    assert "checking blue" in err
