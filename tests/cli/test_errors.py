"""Exit codes and error messages of ``assay gate``: 1 for every error (usage included), 2 only for
the gate, never a traceback, and the message names the file and field at fault."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.helpers.cli import CliRunner
from tests.helpers.goldens import ORIGIN, GoldensProject, write_golden, write_json


def assert_error(code: int, out: str, err: str, *needles: str) -> None:
    """Exit 1, no traceback, and stderr names every needle."""
    assert code == 1, f"exit {code}\nstdout:\n{out}\nstderr:\n{err}"
    assert "Traceback" not in err
    assert "Traceback" not in out
    for needle in needles:
        assert needle in err, f"{needle!r} not in stderr:\n{err}"


# ------------------------------------------------------------------------------- usage errors


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["gate", "goldens", "--outputs", "good.json", "--bogus"], "--bogus"),
        (["gate", "goldens", "--outputs", "good.json", "--write-baseline", "--check"], "--check"),
        (["gate", "goldens", "--outputs", "good.json", "--tier", "gold"], "--tier"),
        (["gate", "goldens", "--outputs", "good.json", "--similarity", "cosine"], "--similarity"),
        (["gate", "goldens", "--outputs"], "--outputs"),
        (["frobnicate"], "frobnicate"),
        (
            ["gate", "goldens", "--outputs", "good.json", "--format", "nope"],
            "'nope' is not a format (use text, json, markdown, junit, html, outputs or an "
            "installed plugin format 'pkg/name')",
        ),
    ],
)
def test_usage_errors_exit_1_not_2(
    cli: CliRunner, project: GoldensProject, args: list[str], needle: str
) -> None:
    code, out, err = cli(*args)
    assert_error(code, out, err, needle)


def test_write_baseline_with_check_writes_nothing(cli: CliRunner, project: GoldensProject) -> None:
    code, out, err = cli("gate", "goldens", "--outputs", "good.json", "--write-baseline", "--check")
    assert_error(code, out, err, "--write-baseline", "--check")
    assert not project.baseline.exists()


def test_help_exits_0(cli: CliRunner, project: GoldensProject) -> None:
    code, out, err = cli("gate", "--help")
    assert code == 0, err
    assert "--outputs" in out
    assert "--write-baseline" in out


# ------------------------------------------------------------------------------ outputs file


def test_missing_outputs_file(cli: CliRunner, project: GoldensProject) -> None:
    code, out, err = cli("gate", "goldens", "--outputs", "nope.json")
    assert_error(code, out, err, "nope.json")
    assert "not found" in err


def test_no_outputs_flag_at_all(cli: CliRunner, project: GoldensProject) -> None:
    code, out, err = cli("gate", "goldens")
    assert_error(code, out, err, "say what to score: --outputs FILE (or --example)")


def test_invalid_json_outputs(cli: CliRunner, project: GoldensProject) -> None:
    (project.root / "bad.json").write_text('{"sql-active-users": "SELECT', encoding="utf-8")
    code, out, err = cli("gate", "goldens", "--outputs", "bad.json")
    assert_error(code, out, err, "bad.json")
    assert "JSON" in err


def test_outputs_not_an_object(cli: CliRunner, project: GoldensProject) -> None:
    write_json(project.root / "list.json", ["SELECT 1 FROM t"])
    code, out, err = cli("gate", "goldens", "--outputs", "list.json")
    assert_error(code, out, err, "list.json")


def test_outputs_path_is_a_directory(cli: CliRunner, project: GoldensProject) -> None:
    (project.root / "outdir").mkdir()
    code, out, err = cli("gate", "goldens", "--outputs", "outdir")
    assert_error(code, out, err, "outdir")


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() == 0,
    reason="root can read a chmod 000 file (the directory case covers unreadable outputs)",
)
def test_unreadable_outputs_file(cli: CliRunner, project: GoldensProject) -> None:
    locked = write_json(project.root / "locked.json", {"sql-active-users": "SELECT 1 FROM t"})
    locked.chmod(0)
    try:
        code, out, err = cli("gate", "goldens", "--outputs", "locked.json")
    finally:
        locked.chmod(0o600)
    assert_error(code, out, err, "locked.json")


# ---------------------------------------------------------------------------------- goldens


def test_malformed_yaml_frontmatter_names_the_golden(
    cli: CliRunner, project: GoldensProject
) -> None:
    write_golden(project.goldens, "broken-yaml.md", "id: [unclosed\nexpected: x\n", ORIGIN)
    code, out, err = cli("gate", "goldens", "--outputs", "good.json")
    assert_error(code, out, err, "broken-yaml.md")
    assert "YAML" in err


@pytest.mark.parametrize(
    ("frontmatter", "kind"),
    [("- contains:a\n- contains:b\n", "list"), ("just a sentence\n", "str")],
)
def test_frontmatter_not_a_mapping(
    cli: CliRunner, project: GoldensProject, frontmatter: str, kind: str
) -> None:
    write_golden(project.goldens, "not-mapping.md", frontmatter, ORIGIN)
    code, out, err = cli("gate", "goldens", "--outputs", "good.json")
    assert_error(code, out, err, "not-mapping.md", "mapping", kind)


def test_duplicate_ids_name_both_files(cli: CliRunner, project: GoldensProject) -> None:
    write_golden(
        project.goldens / "more",
        "copy.md",
        "id: sql-active-users\nexpected: x\nasserts:\n  - 'contains:x'\n",
        ORIGIN,
    )
    code, out, err = cli("gate", "goldens", "--outputs", "good.json")
    assert_error(code, out, err, "sql-active-users.md", "copy.md", "sql-active-users")
    assert "duplicate" in err.lower()


def test_non_utf8_golden(cli: CliRunner, project: GoldensProject) -> None:
    (project.goldens / "latin1.md").write_bytes(
        b"---\nexpected: 'caf\xe9'\nasserts:\n  - 'contains:caf'\n---\n"
    )
    code, out, err = cli("gate", "goldens", "--outputs", "good.json")
    assert_error(code, out, err, "latin1.md")
    assert "UTF-8" in err


def test_utf8_bom_golden_is_accepted(cli: CliRunner, project: GoldensProject) -> None:
    (project.goldens / "bom.md").write_bytes(
        "\ufeff---\nexpected: café\nasserts:\n  - 'contains:café'\n---\n".encode()
    )
    write_json(project.root / "bom.json", {"bom": "un café"})
    code, out, err = cli("gate", "goldens", "--outputs", "bom.json", "--json")
    assert code == 0, err
    results = {r["id"]: r for r in json.loads(out)["results"]}
    assert results["bom"]["status"] == "pass"


def test_missing_goldens_folder(cli: CliRunner, project: GoldensProject) -> None:
    code, out, err = cli("gate", "no-such-folder", "--outputs", "good.json")
    assert_error(code, out, err, "no-such-folder")


# --------------------------------------------------------------------------------- baseline


def test_check_without_baseline(cli: CliRunner, project: GoldensProject) -> None:
    code, out, err = cli("gate", "goldens", "--outputs", "good.json", "--check")
    assert_error(code, out, err, "assay-baseline.json", "--write-baseline")
    assert not project.baseline.exists()


def test_baseline_with_unknown_schema_version(cli: CliRunner, project: GoldensProject) -> None:
    assert cli("gate", "goldens", "--outputs", "good.json", "--write-baseline")[0] == 0
    document = json.loads(project.baseline.read_text(encoding="utf-8"))
    document["schema_version"] = 99
    write_json(project.baseline, document)
    code, out, err = cli("gate", "goldens", "--outputs", "good.json", "--check")
    assert_error(code, out, err, "assay-baseline.json", "schema_version")


def test_baseline_not_json(cli: CliRunner, project: GoldensProject) -> None:
    project.baseline.write_text("{truncated", encoding="utf-8")
    code, out, err = cli("gate", "goldens", "--outputs", "good.json", "--check")
    assert_error(code, out, err, "assay-baseline.json")


# ------------------------------------------------------------------------ hostile outputs


def test_catastrophic_regex_is_a_failed_check(cli: CliRunner, tmp_path: Path) -> None:
    write_golden(tmp_path / "goldens", "redos.md", "asserts:\n  - 'regex:(a+)+$'\n", ORIGIN)
    write_json(tmp_path / "out.json", {"redos": "a" * 50_000 + "!"})
    code, out, err = cli("gate", "goldens", "--outputs", "out.json", "--json")  # 10 s timeout
    assert code == 0, err
    (result,) = json.loads(out)["results"]
    assert result["id"] == "redos"
    assert result["status"] == "fail"
    assert result["passed"] is False
    assert result["decided_by"] == "tier1-asserts"
    (check,) = result["checks"]
    assert "assert" not in check
    assert check["text"] == "regex:(a+)+$"
    assert check["op"] == "regex"
    assert check["passed"] is False
    assert check["reason"]
    assert check["evidence"] == {"reason": "regex_timeout"}


def test_ten_megabyte_output_is_scored(cli: CliRunner, tmp_path: Path) -> None:
    write_golden(
        tmp_path / "goldens",
        "huge.md",
        "asserts:\n  - 'contains:NEEDLE'\n  - 'not-contains:HAYSTACK'\n",
        ORIGIN,
    )
    big = "x" * (10 * 1024 * 1024) + "NEEDLE"
    write_json(tmp_path / "out.json", {"huge": big})
    code, out, err = cli("gate", "goldens", "--outputs", "out.json", "--json")
    assert code == 0, err
    (result,) = json.loads(out)["results"]
    assert result["status"] == "pass"
    assert result["score"] == 1.0
    assert [c["passed"] for c in result["checks"]] == [True, True]


# --------------------------------------------------------------------------------- assay.toml


def test_min_pass_rate_not_met_fails_the_gate(cli: CliRunner, project: GoldensProject) -> None:
    # broken.json passes 1 of 2 goldens: 50 %.
    (project.root / "assay.toml").write_text("min_pass_rate = 0.75\n", encoding="utf-8")
    code, out, err = cli("gate", "goldens", "--outputs", "broken.json")
    assert code == 2, out + err
    assert "Traceback" not in err
    assert "min_pass_rate" in out
    assert "gate: FAILED (exit 2)" in out

    code, out, err = cli("gate", "goldens", "--outputs", "broken.json", "--json")
    assert code == 2, err
    summary = json.loads(out)["summary"]
    assert summary["gate"] == "failed"
    assert summary["pass_rate"] == 0.5
    assert any("min_pass_rate" in f for f in summary["gate_failures"])


def test_min_pass_rate_met_passes(cli: CliRunner, project: GoldensProject) -> None:
    (project.root / "assay.toml").write_text("min_pass_rate = 0.5\n", encoding="utf-8")
    code, out, err = cli("gate", "goldens", "--outputs", "broken.json")
    assert code == 0, out + err
    assert "gate failed" not in out


def test_unknown_config_key(cli: CliRunner, project: GoldensProject) -> None:
    (project.root / "assay.toml").write_text("min_pass_rat = 0.5\n", encoding="utf-8")
    code, out, err = cli("gate", "goldens", "--outputs", "good.json")
    assert_error(code, out, err, "assay.toml", "min_pass_rat")


def test_invalid_toml(cli: CliRunner, project: GoldensProject) -> None:
    (project.root / "assay.toml").write_text("min_pass_rate = = 1\n", encoding="utf-8")
    code, out, err = cli("gate", "goldens", "--outputs", "good.json")
    assert_error(code, out, err, "assay.toml")


def test_config_value_out_of_range(cli: CliRunner, project: GoldensProject) -> None:
    (project.root / "assay.toml").write_text("min_pass_rate = 1.5\n", encoding="utf-8")
    code, out, err = cli("gate", "goldens", "--outputs", "good.json")
    assert_error(code, out, err, "assay.toml", "min_pass_rate")


def test_bare_assay_shows_the_commands_and_exits_0(cli: CliRunner) -> None:
    code, out, err = cli()
    assert code == 0, err
    assert "Commands:" in out and "\n  gate " in out and "\n  attest " in out
    assert "\n  run " not in out


def test_the_retired_run_command_names_the_commands_that_do_its_job(cli: CliRunner) -> None:
    code, out, err = cli("run", "goldens", "--outputs", "good.json")
    assert (code, out) == (1, "")
    assert "Traceback" not in err
    assert err.splitlines() == [
        "assay: error: assay run is retired: use assay gate (the outputs you give), assay eval "
        "(prompt candidates through their models) or assay bench (an agent on the tasks)"
    ]


def test_bad_judge_block_names_assay_toml_and_the_field(
    cli: CliRunner, project: GoldensProject
) -> None:
    (project.root / "assay.toml").write_text("[judge]\nverified = 3\n", encoding="utf-8")
    code, _out, err = cli("gate", "goldens", "--outputs", "good.json", cwd=project.root)
    assert code == 1
    assert "assay.toml" in err and "judge.verified" in err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("block", "field", "message"),
    [
        ("[judge.provider]\ntype = 'gpt'\n", "judge.provider.type", "provider type must be"),
        ("[judge.provider]\ntype = 'command'\n", "judge.provider.command", "needs 'command'"),
        ("[judge.provider]\ntype = 'echo'\ntimeout_s = 0\n", "judge.provider.timeout_s", "> 0"),
        ("[bench]\ncost_baseline_usd = -1\n", "bench.cost_baseline_usd", "must be a number > 0"),
        ("min_pass_rate = 1.5\n", "min_pass_rate", "must be a number between 0 and 1"),
    ],
)
def test_bad_settings_stop_the_run_at_load_even_without_judge(
    cli: CliRunner, project: GoldensProject, block: str, field: str, message: str
) -> None:
    # The judge never runs here (no --judge, not verified): the provider is validated anyway.
    (project.root / "assay.toml").write_text(block, encoding="utf-8")
    code, out, err = cli("gate", "goldens", "--outputs", "good.json", cwd=project.root)
    assert_error(code, out, err, str(project.root / "assay.toml"), f"field '{field}'", message)
    assert out == ""


@pytest.mark.parametrize(
    ("block", "field"),
    [
        ("[tool.assay]\nmin_pass_rate = 'high'\n", "min_pass_rate"),
        ("[tool.assay.judge]\nverified = 'yes'\n", "judge.verified"),
        ("[tool.assay.judge.provider]\ntype = 'gpt'\n", "judge.provider.type"),
        ("[tool.assay.bench]\nruns = 3\n", "bench.runs"),
    ],
)
def test_bad_tool_assay_block_names_pyproject_and_the_field(
    cli: CliRunner, project: GoldensProject, block: str, field: str
) -> None:
    pyproject = project.root / "pyproject.toml"
    pyproject.write_text('[project]\nname = "demo"\n\n' + block, encoding="utf-8")
    code, out, err = cli("gate", "goldens", "--outputs", "good.json", cwd=project.root)
    assert_error(code, out, err, str(pyproject), "[tool.assay]", f"field '{field}'")
