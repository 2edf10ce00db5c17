"""``assay init``: the scaffolded project scores at once, and nothing is ever overwritten."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import click
import pytest
import yaml

from assay._version import __version__
from assay.cli import cli, main
from assay.cli.init import FILES, init_command, write_gitignore
from assay.goldens import iter_goldens
from tests.helpers.cli import CliRunner

WORKFLOW_RUN = "assay gate --outputs outputs.json --check --format junit --output assay-junit.xml"


@pytest.fixture(autouse=True)
def registered(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Make ``assay init`` reachable through the real entry point (and its exit-code mapping),
    whether or not the command group registers it yet."""
    monkeypatch.setitem(cli.commands, "init", init_command)
    yield


def run_init(*args: str) -> int:
    """``assay init *args`` in-process; return the exit code."""
    with pytest.raises(SystemExit) as exc:
        main(["init", *args])
    code = exc.value.code
    assert isinstance(code, int)
    return code


def test_scaffold_writes_every_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "new" / "project"
    assert run_init(str(root)) == 0
    for rel, text in FILES.items():
        assert (root / rel).read_text(encoding="utf-8") == text
    written = {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}
    assert written == {*FILES, ".gitignore"}  # no stray temp files
    out = capsys.readouterr().out
    assert f"created {len(FILES)} files" in out
    for rel in FILES:
        assert rel in out
    assert f"cd {root}" in out and "--write-baseline" in out and "--check" in out


def test_init_says_what_to_ignore_and_that_attestations_are_committed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from assay.config import DEFAULT_ATTESTATIONS, load_config

    assert run_init(str(tmp_path)) == 0
    last = capsys.readouterr().out.splitlines()[-1]
    assert last.startswith(".gitignore keeps .assay/ (assay's local cache and runs) out of git; ")
    assert last.endswith(f"commit {DEFAULT_ATTESTATIONS}/ (clean-run attestations)")
    # The folder it says to commit is the scaffolded project's store, and not under .assay/.
    store = load_config(tmp_path).attestations
    assert store == tmp_path / DEFAULT_ATTESTATIONS
    assert ".assay" not in store.relative_to(tmp_path).parts


def test_init_writes_the_gitignore_it_asks_for(tmp_path: Path, cli: CliRunner) -> None:
    assert run_init(str(tmp_path)) == 0
    ignore = tmp_path / ".gitignore"
    assert ".assay/" in ignore.read_text(encoding="utf-8").splitlines()
    cli("gate", "--outputs", "outputs.json")  # a run saves under .assay/: git must not see it
    assert (tmp_path / ".assay" / "runs").is_dir()
    before = ignore.read_bytes()
    assert write_gitignore(tmp_path) is None  # again: nothing to add
    assert ignore.read_bytes() == before


def test_init_adds_only_what_an_existing_gitignore_lacks(tmp_path: Path) -> None:
    ignore = tmp_path / ".gitignore"
    ignore.write_text("node_modules/\n*.pyc", encoding="utf-8")  # no newline at the end
    assert run_init(str(tmp_path)) == 0  # an existing .gitignore is no conflict
    lines = ignore.read_text(encoding="utf-8").splitlines()
    assert lines[:2] == ["node_modules/", "*.pyc"] and lines[-1] == ".assay/"
    assert lines.count(".assay/") == 1
    after = ignore.read_bytes()
    assert write_gitignore(tmp_path) is None and ignore.read_bytes() == after  # idempotent
    other = tmp_path / "other"
    other.mkdir()
    (other / ".gitignore").write_text("/.assay\n", encoding="utf-8")  # the same, spelt so
    assert run_init(str(other)) == 0
    assert (other / ".gitignore").read_text(encoding="utf-8") == "/.assay\n"


def test_goldens_cover_every_kind(tmp_path: Path) -> None:
    assert run_init(str(tmp_path)) == 0
    goldens = list(iter_goldens(tmp_path / "goldens"))
    tiers = {g.tier for g in goldens}
    assert {"smoke", "standard"} <= tiers
    assert all(g.has_origin for g in goldens)
    ops = {spec.full_op for g in goldens for spec in g.asserts}
    assert {"contains", "icontains", "regex", "not-contains", "json-schema", "equals"} <= ops
    assert any("path" in spec.args for g in goldens for spec in g.asserts)
    assert any(not g.asserts and g.has_expected for g in goldens)  # tier 2
    assert any(not g.asserts and not g.has_expected and g.rubric for g in goldens)  # judge
    outputs = json.loads((tmp_path / "outputs.json").read_text(encoding="utf-8"))
    assert set(outputs) == {g.id for g in goldens}


def test_scaffolded_project_scores_at_once(tmp_path: Path, cli: CliRunner) -> None:
    assert run_init(str(tmp_path)) == 0
    code, out, err = cli("gate", "--outputs", "outputs.json", "--json")
    assert code == 0, err
    results = {r["id"]: r for r in json.loads(out)["results"]}
    statuses = {r["status"] for r in results.values()}
    assert statuses == {"pass", "needs-judge"}
    assert [r["id"] for r in results.values() if r["status"] == "needs-judge"] == ["deploy-friday"]
    assert results["explain-cache"]["decided_by"] == "tier2-rapidfuzz"

    code, out, err = cli("gate", "--outputs", "outputs.json", "--write-baseline")
    assert code == 0, out + err
    assert (tmp_path / "assay-baseline.json").is_file()
    code, out, err = cli("gate", "--outputs", "outputs.json", "--check")
    assert code == 0, out + err
    assert "gate: passed" in out

    code, out, err = cli("gate", "--self-test")
    assert code == 0, out + err
    assert "self-test: OK" in out
    assert "warning" not in out  # every golden has an Origin section


def test_default_directory_is_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert run_init() == 0
    assert (tmp_path / "assay.toml").is_file()
    assert "cd " not in capsys.readouterr().out


def test_refuses_to_overwrite_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    existing = tmp_path / "goldens" / "standard" / "explain-cache.md"
    existing.parent.mkdir(parents=True)
    existing.write_text("mine", encoding="utf-8")
    assert run_init(str(tmp_path)) == 1
    err = capsys.readouterr().err
    assert str(existing) in err and "refusing to overwrite" in err
    assert "Traceback" not in err
    assert existing.read_text(encoding="utf-8") == "mine"
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == [existing]


def test_refuses_when_a_folder_on_the_way_is_a_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "goldens").write_text("not a folder", encoding="utf-8")
    assert run_init(str(tmp_path)) == 1
    assert str(tmp_path / "goldens") in capsys.readouterr().err
    assert not (tmp_path / "assay.toml").exists()


def test_refuses_a_file_as_the_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "file.txt"
    target.write_text("x", encoding="utf-8")
    assert run_init(str(target)) == 1
    assert str(target) in capsys.readouterr().err


def test_second_init_refuses(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_init(str(tmp_path)) == 0
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    capsys.readouterr()
    assert run_init(str(tmp_path)) == 1
    assert "and 4 more" in capsys.readouterr().err
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == before


def test_workflow_runs_the_gate_and_publishes_junit(tmp_path: Path) -> None:
    assert run_init(str(tmp_path)) == 0
    workflow = yaml.safe_load((tmp_path / ".github/workflows/assay.yml").read_text("utf-8"))
    steps = workflow["jobs"]["assay"]["steps"]
    uses = [s.get("uses", "") for s in steps]
    assert any(u.startswith("actions/checkout@") for u in uses)
    assert any(u.startswith("actions/setup-python@") for u in uses)
    runs = [s.get("run", "") for s in steps]
    # No index serves a bare `assay` here: pin the version that wrote the file, and say where
    # else to install it from (item 25).
    assert f'pip install "assay=={__version__}"' in runs
    text = (tmp_path / ".github/workflows/assay.yml").read_text("utf-8")
    assert "If your package index does not serve assay" in text
    assert f"assay-{__version__}-py3-none-any.whl" in text and f"@v{__version__}" in text
    assert WORKFLOW_RUN in runs
    uploads = [s for s in steps if s.get("uses", "").startswith("actions/upload-artifact@")]
    assert uploads and uploads[0]["with"]["path"] == "assay-junit.xml"
    assert uploads[0]["if"] == "always()"  # the report matters most when the gate failed


@pytest.mark.parametrize("guide", ["sharding.md", "reports-ci.md"])
def test_the_ci_guides_pin_the_assay_they_describe(guide: str) -> None:
    # The guides' workflows install what `assay init` writes: this version, pinned, never a
    # bare `pip install assay` that no index here serves.
    text = (Path(__file__).parents[2] / "docs" / "guide" / guide).read_text(encoding="utf-8")
    installs = [line.strip() for line in text.splitlines() if "pip install" in line]
    assert installs
    assert all(f'pip install "assay=={__version__}"' in line for line in installs), installs


def test_init_is_a_click_command() -> None:
    assert isinstance(init_command, click.Command)
    assert init_command.name == "init"
