"""A run that selects no goldens cannot pass: an empty folder or a tier with no goldens is an
error (exit 1) in every mode, never "pass rate 0.0 %, gate: passed"."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.cli import run_cli
from tests.helpers.goldens import ORIGIN, write_golden, write_json


@pytest.mark.parametrize("mode", [[], ["--check"], ["--write-baseline"]])
def test_an_empty_folder_is_an_error(tmp_path: Path, mode: list[str]) -> None:
    (tmp_path / "goldens").mkdir()
    write_json(tmp_path / "out.json", {})
    code, out, err = run_cli(["gate", "goldens", "--outputs", "out.json", *mode], tmp_path)
    assert code == 1
    assert out == ""
    assert err == (
        "assay: error: goldens: no goldens selected: a run of nothing cannot pass or fail\n"
    )


def test_a_tier_with_no_goldens_is_an_error_naming_the_tier(tmp_path: Path) -> None:
    write_golden(tmp_path / "goldens", "a.md", "id: a\ninput: q\nasserts: [is-json]\n", ORIGIN)
    write_json(tmp_path / "out.json", {"a": "{}"})
    write_json(tmp_path / "baseline.json", {})
    args = ["gate", "goldens", "--outputs", "out.json", "--tier", "stretch", "--check"]
    code, _, err = run_cli(args, tmp_path)
    assert code == 1
    assert err == (
        "assay: error: goldens: field '--tier': no goldens of tier stretch selected: "
        "a run of nothing cannot pass or fail\n"
    )
