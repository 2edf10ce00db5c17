"""The README's and the documentation's examples work as printed."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from assay.models import load_candidates_file
from assay.models.providers import PROVIDER_TYPES
from tests.helpers.cli import run_cli

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
GOLDENS_GUIDE = ROOT / "docs" / "guide" / "goldens-gate.md"
CONFIGURATION = ROOT / "docs" / "configuration.md"


def golden_example(page: Path) -> str:
    text = page.read_text(encoding="utf-8")
    start = text.index("```markdown\n---\n") + len("```markdown\n")
    return text[start : text.index("```", start)]


@pytest.mark.parametrize("page", [README, GOLDENS_GUIDE], ids=lambda p: p.name)
def test_the_golden_format_example_passes_its_own_self_test(page: Path, tmp_path: Path) -> None:
    example = golden_example(page)
    assert "asserts:" in example and "## Origin" in example
    (tmp_path / "goldens").mkdir()
    (tmp_path / "goldens" / "example.md").write_text(example, encoding="utf-8")
    code, out, err = run_cli(["gate", "goldens", "--self-test"], tmp_path)
    assert code == 0, out + err
    assert "self-test: OK" in out
    assert "warning" not in out  # it has its Origin section


def test_the_configuration_example_is_valid(tmp_path: Path) -> None:
    # docs/configuration.md shows every setting in one assay.toml; it must load as written.
    from assay.config import load_config

    text = CONFIGURATION.read_text(encoding="utf-8")
    block = text.split("```toml\n", 1)[1].split("```", 1)[0]
    (tmp_path / "assay.toml").write_text(block, encoding="utf-8")
    config = load_config(tmp_path)
    assert config.strict is False
    assert config.gate.max_repeats == 20
    assert config.schemas == {
        "https://example.com/address.json": tmp_path / "schemas" / "address.json"
    }
    assert list(config.agents) == ["claude"]


def test_the_readme_is_a_short_tour() -> None:
    # Everything else lives in docs/: the README keeps the two commands, the quick start, the
    # quick reference, a picture and where the documentation is.
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) < 300
    for part in ("## Quick start", "### Quick reference", "docs/terminal.png", "mkdocs serve"):
        assert part in text, part


def _readme_provider_lines() -> list[str]:
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## Bring your model") : text.index("## Moving from promptfoo")]
    blocks = re.findall(r"^```yaml\n(.*?)^```$", section, flags=re.MULTILINE | re.DOTALL)
    return [line for b in blocks for line in b.splitlines() if line.startswith("provider:")]


def test_the_readme_names_every_built_in_provider_type() -> None:
    shown = {yaml.safe_load(line)["provider"]["type"] for line in _readme_provider_lines()}
    section = README.read_text(encoding="utf-8").split("## Bring your model")[1]
    named = {kind for kind in PROVIDER_TYPES if f"`{kind}`" in section or kind in shown}
    assert named == set(PROVIDER_TYPES) - {"echo"}


@pytest.mark.parametrize("line", _readme_provider_lines())
def test_each_provider_line_of_the_readme_loads(line: str, tmp_path: Path) -> None:
    path = tmp_path / "candidates.yaml"
    path.write_text(f"{line}\ncandidates:\n  - {{id: a, prompt: 'Hi {{{{ q }}}}'}}\n", "utf-8")
    (tmp_path / "provider.py").write_text(
        "def call_api(prompt, options, context):\n    return {}\n"
    )
    [candidate] = load_candidates_file(path).candidates
    assert candidate.provider.type in line
