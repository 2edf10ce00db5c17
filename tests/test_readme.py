"""The README's examples work as printed."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.cli import run_cli

README = Path(__file__).resolve().parents[1] / "README.md"


def golden_format_example() -> str:
    text = README.read_text(encoding="utf-8")
    start = text.index("```markdown\n---\n") + len("```markdown\n")
    return text[start : text.index("```", start)]


def test_the_golden_format_example_passes_its_own_self_test(tmp_path: Path) -> None:
    example = golden_format_example()
    assert "asserts:" in example and "## Origin" in example
    (tmp_path / "goldens").mkdir()
    (tmp_path / "goldens" / "example.md").write_text(example, encoding="utf-8")
    code, out, err = run_cli(["run", "goldens", "--self-test"], tmp_path)
    assert code == 0, out + err
    assert "self-test: OK" in out
    assert "warning" not in out  # it has its Origin section


def test_the_readmes_configuration_example_is_valid(tmp_path: Path) -> None:
    # The README's assay.toml shows every setting; it must load as written.
    from assay.config import load_config

    text = README.read_text(encoding="utf-8")
    section = text.split("## Configuration", 1)[1]
    block = section.split("```toml\n", 1)[1].split("```", 1)[0]
    (tmp_path / "assay.toml").write_text(block, encoding="utf-8")
    config = load_config(tmp_path)
    assert config.strict is False
    assert config.gate.max_repeats == 20
