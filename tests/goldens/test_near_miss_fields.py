"""A frontmatter key that is a typo of a known field is an error suggesting the field: ``assert:``
instead of ``asserts:`` used to leave a golden with no checks (needs-judge) and a self-test that
said OK. Keys from other tools, far from every field, still load (kept as metadata)."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.errors import GoldenError
from assay.goldens import build_goldens
from tests.helpers.cli import run_cli
from tests.helpers.goldens import ORIGIN, write_golden, write_json


@pytest.mark.parametrize(
    ("typo", "meant"),
    [
        ("assert", "asserts"),
        ("Asserts", "asserts"),
        ("expect", "expected"),
        ("Expected", "expected"),
        ("inputt", "input"),
        ("rubrik", "rubric"),
        ("threshhold", "threshold"),
        ("max-cost-usd", "max_cost_usd"),
        ("owned_file", "owned_files"),
    ],
)
def test_a_near_miss_of_a_known_field_is_an_error_naming_it(typo: str, meant: str) -> None:
    with pytest.raises(GoldenError) as info:
        build_goldens({"id": "g", typo: "x"}, source="g.md", default_id=None, folder_tier=None)
    assert info.value.field == typo
    assert info.value.source == "g.md"
    assert f"did you mean {meant!r}" in info.value.message


def test_keys_of_other_tools_still_load_as_metadata() -> None:
    # WikiEval's frontmatter has a type; other suites carry question/answer/context/notes.
    data = {"id": "w", "type": "eval", "question": "q", "answer": "a", "notes": "n"}
    [golden] = build_goldens(data, source="w.md", default_id=None, folder_tier=None)
    assert golden.fields == {"type": "eval", "question": "q", "answer": "a", "notes": "n"}


def test_the_cli_names_the_typo_and_the_field_it_meant(tmp_path: Path) -> None:
    frontmatter = "id: t\ninput: q\nexpected: done\nassert:\n  - contains: done\n"
    write_golden(tmp_path / "goldens", "t.md", frontmatter, ORIGIN)
    outputs = write_json(tmp_path / "outputs.json", {"t": "done"})
    for args in (["gate", "goldens", "--self-test"], ["gate", "goldens", "--outputs", outputs]):
        code, out, err = run_cli(args, tmp_path)
        assert code == 1
        assert out == ""
        assert "Traceback" not in err
        assert err.strip().splitlines() == [
            f"assay: error: {Path('goldens', 't.md')}:5: field 'assert': "
            "unknown field 'assert': did you mean 'asserts'?"
        ]


def test_a_wikieval_golden_with_a_type_loads_and_passes(tmp_path: Path) -> None:
    frontmatter = "id: wiki\ntype: eval\ninput: q\nexpected: done\nasserts:\n  - 'equals:done'\n"
    write_golden(tmp_path / "goldens", "wiki.md", frontmatter, ORIGIN)
    outputs = write_json(tmp_path / "outputs.json", {"wiki": "done"})
    code, out, err = run_cli(["gate", "goldens", "--outputs", outputs], tmp_path)
    assert code == 0, err
    assert "PASS" in out and "wiki" in out
