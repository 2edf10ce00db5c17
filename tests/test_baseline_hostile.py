"""A hand-edited baseline with a field of the wrong type or value, through ``assay gate --check``.

Every entry field is checked when the baseline is read: a wrong one is one line naming the
baseline file and the field, exit 1, never a traceback, and never silently misread (a "passed":
"yes" that is not true would hide the regression of that golden).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.cli import run_cli

GOLDEN = "---\nid: g\ntier: smoke\ninput: q\nasserts: ['contains:a']\n---\n## Origin\nBy hand.\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A one-golden project whose baseline has been written; returns the baseline path."""
    (tmp_path / "goldens").mkdir()
    (tmp_path / "goldens" / "g.md").write_text(GOLDEN, encoding="utf-8")
    (tmp_path / "out.json").write_text(json.dumps({"g": "a"}), encoding="utf-8")
    code, _, err = run_cli(gate("--write-baseline"), tmp_path)
    assert (code, err) == (0, ""), err
    return tmp_path / "assay-baseline.json"


def gate(*extra: str) -> list[str]:
    return ["gate", "goldens", "--outputs", "out.json", "--json", *extra]


def edit_entry(path: Path, field: str, value: Any) -> None:
    document = json.loads(path.read_text(encoding="utf-8"))
    entry = document["goldens"]["default"]["g"]
    if value is DELETE:
        del entry[field]
    else:
        entry[field] = value
    path.write_text(json.dumps(document), encoding="utf-8")


DELETE = object()


@pytest.mark.parametrize(
    "field, value, says",
    [
        ("tier", ["smoke"], "must be one of smoke, standard, stretch, adversarial (found a list)"),
        ("tier", {"name": "smoke"}, "(found an object)"),
        ("tier", 1, "(found the number 1)"),
        (
            "tier",
            "smok",
            'must be one of smoke, standard, stretch, adversarial (found the string "smok")',
        ),
        ("tier", DELETE, "is missing"),
        ("status", "passed", "must be one of pass, fail, needs-judge, no-output, error"),
        ("status", None, "(found null)"),
        ("status", DELETE, "is missing"),
        ("passed", "yes", 'must be true, false or null (found the string "yes")'),
        ("passed", 1, "(found the number 1)"),
        ("passed", DELETE, "is missing"),
        ("score", "0.9", 'must be a finite number or null (found the string "0.9")'),
        ("score", True, "(found true)"),
        ("score", [1], "(found a list)"),
        ("decided_by", 3, "must be a string or null (found the number 3)"),
        ("fingerprint", {"sha256": "x"}, "must be a string or null (found an object)"),
    ],
)
def test_a_hand_edited_entry_field_is_one_line_naming_the_file_and_field(
    project: Path, field: str, value: Any, says: str
) -> None:
    edit_entry(project, field, value)
    for extra in ((), ("--tier", "smoke")):  # --tier reads the tier of every entry too
        code, out, err = run_cli(gate("--check", *extra), project.parent)
        assert "Traceback" not in err
        assert (code, out) == (1, "")
        lines = err.splitlines()
        assert len(lines) == 1, err
        prefix = f"assay: error: {project}: field 'goldens.default.g.{field}': "
        assert lines[0].startswith(prefix), err
        assert says in lines[0]


def test_a_non_finite_score_is_refused(project: Path) -> None:
    text = project.read_text(encoding="utf-8").replace('"score": 1.0', '"score": NaN')
    assert "NaN" in text
    project.write_text(text, encoding="utf-8")
    code, _, err = run_cli(gate("--check"), project.parent)
    assert code == 1
    assert "Traceback" not in err
    assert err == (
        f"assay: error: {project}: field 'goldens.default.g.score': "
        "must be a finite number or null (found a non-finite number)\n"
    )


def test_the_written_baseline_and_null_fields_are_accepted(project: Path) -> None:
    code, _, err = run_cli(gate("--check"), project.parent)
    assert (code, err) == (0, "")
    for field in ("passed", "score", "decided_by", "fingerprint"):
        edit_entry(project, field, None)
    code, _, err = run_cli(gate("--check"), project.parent)
    assert (code, err) == (0, ""), err


TRIALS = {"trials": 3, "passes": 2, "errors": 0, "scores": [1.0, 1.0, 0.0], "random": True}


@pytest.mark.parametrize(
    "field, value, says",
    [
        ("trials", "3", 'must be an integer >= 0 (found the string "3")'),
        ("trials", -1, "must be an integer >= 0 (found the number -1)"),
        ("passes", 4, "must not exceed trials"),
        ("passes", True, "must be an integer >= 0 (found true)"),
        ("errors", 1.5, "must be an integer >= 0 (found the number 1.5)"),
        ("scores", [1.0, "x"], "must be a list of finite numbers (found a list)"),
        ("scores", 1.0, "must be a list of finite numbers (found the number 1.0)"),
        ("random", "yes", 'must be true or false (found the string "yes")'),
        ("random", DELETE, "is missing"),
    ],
)
def test_a_hand_edited_trial_field_is_one_line_naming_it(
    project: Path, field: str, value: Any, says: str
) -> None:
    # Schema 2 keeps the evidence of a random golden's repeats: all of it is checked too.
    document = json.loads(project.read_text(encoding="utf-8"))
    document["goldens"]["default"]["g"].update(TRIALS)
    project.write_text(json.dumps(document), encoding="utf-8")
    edit_entry(project, field, value)
    code, out, err = run_cli(gate("--check"), project.parent)
    assert (code, out) == (1, "")
    assert err == (f"assay: error: {project}: field 'goldens.default.g.{field}': {says}\n"), err


def test_a_suite_that_is_not_text_is_named(project: Path) -> None:
    document = json.loads(project.read_text(encoding="utf-8"))
    document["suite"] = ["goldens"]
    project.write_text(json.dumps(document), encoding="utf-8")
    code, _, err = run_cli(gate("--check"), project.parent)
    assert code == 1
    assert "field 'suite': must be a string (found a list)" in err


@pytest.mark.parametrize(
    ("edit", "says"),
    [
        (
            lambda d: d.__setitem__("sute", "goldens"),
            "field 'sute': unknown field: did you mean 'suite'?",
        ),
        (
            lambda d: d["goldens"]["default"]["g"].__setitem__("pased", True),
            "field 'goldens.default.g.pased': unknown field: did you mean 'passed'?",
        ),
        # Evidence of repeats is all of it or none: a part of it is no random golden's.
        (
            lambda d: d["goldens"]["default"]["g"].__setitem__("passes", 1),
            "field 'goldens.default.g.trials': is missing",
        ),
    ],
)
def test_a_key_assay_does_not_write_is_refused_naming_its_near_miss(
    project: Path, edit: Any, says: str
) -> None:
    document = json.loads(project.read_text(encoding="utf-8"))
    edit(document)
    project.write_text(json.dumps(document), encoding="utf-8")
    code, _, err = run_cli(gate("--check"), project.parent)
    assert (code, err) == (1, f"assay: error: {project}: {says}\n")


@pytest.mark.parametrize(
    "field, value",
    [
        ("passed", 1),  # equal to true, and of its hash: still a number, not a boolean
        ("passed", 0),
        ("score", True),
        ("score", "1.0"),
        ("score", float("inf")),
        ("fingerprint", ["sha256:x"]),
        ("decided_by", 1),
        ("tier", DELETE),
        ("status", "pas"),
    ],
)
def test_an_entry_like_the_ones_before_it_is_still_checked_field_by_field(
    tmp_path: Path, field: str, value: Any
) -> None:
    # Most entries share their tier, status, passed and decided_by: those fields are not checked
    # again for each. An entry that differs in any way (a type included) still is.
    from assay.errors import BaselineError
    from assay.gate._baseline import load_baseline

    entry = {
        "tier": "smoke",
        "status": "pass",
        "passed": True,
        "score": 1.0,
        "decided_by": "tier1-asserts",
        "fingerprint": "sha256:0",
    }
    entries = {f"g{i}": dict(entry) for i in range(5)}
    if value is DELETE:
        del entries["g3"][field]
    else:
        entries["g3"][field] = value
    path = tmp_path / "baseline.json"
    document = {"schema_version": 2, "kind": "gate", "goldens": {"default": entries}}
    path.write_text(json.dumps(document, allow_nan=True), encoding="utf-8")
    with pytest.raises(BaselineError) as raised:
        load_baseline(path)
    assert raised.value.field == f"goldens.default.g3.{field}"
