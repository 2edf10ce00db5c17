"""Bounded parsing: a YAML alias bomb, an alias that contains itself, an oversized document, a
FIFO or a symlink loop where a golden or telemetry file should be. Each is one line naming the
file, exit 1: never a hang, never a traceback, never gigabytes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from assay import _yaml
from assay._yaml import yaml_load
from assay.errors import GoldenError
from tests.helpers.cli import run_cli, run_cli_subprocess
from tests.helpers.goldens import ORIGIN, write_golden, write_json


def billion_laughs(levels: int = 9) -> str:
    """Each level is nine aliases of the one before: 9**levels strings from ~300 bytes."""
    lines = ["l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for i in range(1, levels + 1):
        lines.append(f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 9) + "]")
    return "\n".join(lines) + "\n"


def one_line_error(result: tuple[int, str, str], name: str) -> str:
    code, out, err = result
    assert code == 1, (out, err)
    assert out == ""
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert name in lines[0]
    return lines[0]


def test_an_alias_bomb_is_refused_without_expanding_it() -> None:
    with pytest.raises(GoldenError, match="alias bomb") as info:
        yaml_load(billion_laughs(), "bomb.md")
    assert info.value.source == "bomb.md"


def test_an_alias_that_contains_itself_is_refused() -> None:
    with pytest.raises(GoldenError, match="contains itself"):
        yaml_load("a: &a [1, *a]\n", "loop.md")
    with pytest.raises(GoldenError, match="contains itself"):
        yaml_load("a: &a {b: {c: *a}}\n", "loop.md")


def test_ordinary_aliases_still_work() -> None:
    value = yaml_load("base: &b {x: 1}\nuse: [*b, *b, *b]\nstar: '*not an alias*'\n", "ok.md")
    assert value == {"base": {"x": 1}, "use": [{"x": 1}] * 3, "star": "*not an alias*"}


def test_a_document_over_the_size_cap_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_yaml, "MAX_YAML_BYTES", 64)
    with pytest.raises(GoldenError, match="YAML document is over"):
        yaml_load("x: " + "a" * 100 + "\n", "big.md")


def test_deep_nesting_is_an_error_not_a_crash() -> None:
    with pytest.raises(GoldenError, match=r"nested too deeply|malformed YAML"):
        yaml_load("x: " + "[" * 50_000 + "]" * 50_000 + "\n", "deep.md")


@pytest.mark.parametrize("where", ["markdown", "yaml-list", "candidates"])
def test_the_bomb_stops_every_yaml_input_with_one_line(tmp_path: Path, where: str) -> None:
    bomb = billion_laughs()
    goldens = tmp_path / "goldens"
    goldens.mkdir()
    args: list[str | os.PathLike[str]]
    if where == "markdown":
        write_golden(goldens, "bomb.md", "id: bomb\ninput: q\n" + bomb, ORIGIN)
        name = "bomb.md"
        args = ["gate", "goldens", "--outputs", write_json(tmp_path / "o.json", {"bomb": "x"})]
    elif where == "yaml-list":
        (goldens / "suite.yaml").write_text(bomb, encoding="utf-8")
        name = "suite.yaml"
        args = ["gate", "goldens", "--outputs", write_json(tmp_path / "o.json", {})]
    else:
        write_golden(goldens, "g.md", "id: g\ninput: q\nasserts: [is-json]", ORIGIN)
        (tmp_path / "candidates.yaml").write_text(bomb, encoding="utf-8")
        name = "candidates.yaml"
        args = ["eval", "goldens", "--candidates", "candidates.yaml"]
    line = one_line_error(run_cli(args, tmp_path), name)
    assert "alias bomb" in line


@pytest.fixture
def outputs(tmp_path: Path) -> Path:
    return write_json(tmp_path / "outputs.json", {"g": "x"})


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_a_fifo_named_like_a_golden_is_refused_not_read(tmp_path: Path, outputs: Path) -> None:
    goldens = tmp_path / "goldens"
    write_golden(goldens, "g.md", "id: g\ninput: q\nasserts: [is-json]", ORIGIN)
    os.mkfifo(goldens / "x.md")
    # A real process with a timeout: a run that opened the FIFO would block forever.
    line = one_line_error(
        run_cli_subprocess(["gate", "goldens", "--outputs", outputs], tmp_path), "x.md"
    )
    assert "a FIFO" in line


@pytest.mark.parametrize("name", ["loop.yaml", "loop.jsonl", "loop.md"])
def test_a_symlink_loop_named_like_a_golden_is_named(
    tmp_path: Path, outputs: Path, name: str
) -> None:
    goldens = tmp_path / "goldens"
    goldens.mkdir()
    (goldens / name).symlink_to(name)
    line = one_line_error(run_cli(["gate", "goldens", "--outputs", outputs], tmp_path), name)
    assert "symbolic links" in line or "symlink" in line


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
@pytest.mark.parametrize("kind", ["fifo", "folder", "dangling"])
def test_a_telemetry_folder_entry_that_is_no_file_is_named(tmp_path: Path, kind: str) -> None:
    telemetry = tmp_path / "telemetry"
    telemetry.mkdir()
    entry = telemetry / "smoke-fix-readme-typo.json"
    if kind == "fifo":
        os.mkfifo(entry)
    elif kind == "folder":
        entry.mkdir()
    else:
        entry.symlink_to("nowhere.json")
    result = run_cli_subprocess(["bench", "--telemetry", "telemetry", "--no-save"], tmp_path)
    one_line_error(result, "smoke-fix-readme-typo.json")
