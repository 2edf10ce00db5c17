"""The documentation site (mkdocs.yml, docs/): the module map generated from the source tree,
every page in the nav, every command and assert op documented, and a strict build that makes
no external request."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
SRC = ROOT / "src" / "assay"
MKDOCS_YML = ROOT / "mkdocs.yml"


def _load_hook() -> ModuleType:
    spec = importlib.util.spec_from_file_location("docs_site", ROOT / "scripts" / "docs_site.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("docs_site", module)
    spec.loader.exec_module(module)
    return module


docs_site = _load_hook()


def _source_modules() -> list[str]:
    """Every module under src/assay, found without the generator (package data left out)."""
    names = []
    for path in SRC.rglob("*.py"):
        parts = path.relative_to(SRC).parts
        if parts[0] == "data" or "__pycache__" in parts:
            continue
        dotted = ("assay", *path.relative_to(SRC).with_suffix("").parts)
        names.append(".".join(dotted[:-1] if dotted[-1] == "__init__" else dotted))
    return sorted(names)


# --------------------------------------------------------------------------- the module map


def test_every_module_under_src_is_in_the_generated_map() -> None:
    page = docs_site.module_map(SRC)
    listed = set(re.findall(r"`(assay(?:\.\w+)*)`", page))
    missing = [name for name in _source_modules() if name not in listed]
    assert missing == [], f"modules missing from the map: {missing}"
    assert [m.name for m in docs_site.modules(SRC)] == _source_modules()


def test_every_module_has_a_docstring() -> None:
    undocumented = [str(m.path.relative_to(ROOT)) for m in docs_site.modules(SRC) if not m.summary]
    assert undocumented == [], f"modules without a docstring: {undocumented}"


def test_the_map_holds_no_package_data() -> None:
    page = docs_site.module_map(SRC)
    assert "assay.data" not in page
    assert page.startswith("# Module map\n")


def test_the_map_groups_modules_under_their_package(tmp_path: Path) -> None:
    pkg = tmp_path / "demo"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "data").mkdir()
    (pkg / "__init__.py").write_text('"""The demo package.\n\nMore text."""\n', encoding="utf-8")
    (pkg / "_a.py").write_text('"""First line\ncontinued, with ``code`` and :func:`f`.\n\nNo."""\n')
    (pkg / "b.py").write_text("x = 1\n", encoding="utf-8")
    (pkg / "sub" / "__init__.py").write_text('"""A sub | package."""\n', encoding="utf-8")
    (pkg / "data" / "fixture.py").write_text("not python (", encoding="utf-8")
    found = docs_site.modules(pkg)
    assert [(m.name, m.summary) for m in found] == [
        ("demo", "The demo package."),
        ("demo._a", "First line continued, with ``code`` and :func:`f`."),
        ("demo.b", None),
        ("demo.sub", "A sub | package."),
    ]
    page = docs_site.render(found)
    assert "## `demo`\n\nThe demo package.\n" in page
    assert "| `demo._a` | First line continued, with `code` and `f`. |" in page
    assert "| `demo.b` | *(no docstring)* |" in page
    assert "## `demo.sub`\n\nA sub \\| package.\n" in page
    assert "| [`demo.sub`](#demosub) | package: see below |" in page


# --------------------------------------------------------------------------- the nav


class _Loader(yaml.SafeLoader):
    """mkdocs.yml with its !!python tags read as plain values (the nav is all this reads)."""


_Loader.add_multi_constructor("tag:yaml.org,2002:python/", lambda loader, suffix, node: None)


def _config() -> dict[str, Any]:
    config = yaml.load(MKDOCS_YML.read_text(encoding="utf-8"), Loader=_Loader)
    assert isinstance(config, dict)
    return config


def _nav_pages(entry: Any) -> list[str]:
    if isinstance(entry, str):
        return [entry]
    if isinstance(entry, list):
        return [page for item in entry for page in _nav_pages(item)]
    if isinstance(entry, dict):
        return [page for value in entry.values() for page in _nav_pages(value)]
    raise AssertionError(f"unexpected nav entry {entry!r}")


def test_every_page_under_docs_is_in_the_nav() -> None:
    nav = _nav_pages(_config()["nav"])
    assert len(nav) == len(set(nav)), "a page is in the nav twice"
    pages = sorted(p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md"))
    assert sorted(set(pages) - set(nav)) == [], "pages missing from mkdocs.yml's nav"
    generated = {docs_site.PAGE}
    assert sorted(set(nav) - set(pages) - generated) == [], "nav entries with no page"
    assert docs_site.PAGE in nav and not (DOCS / docs_site.PAGE).exists()


def test_the_site_is_built_offline_by_the_hook() -> None:
    config = _config()
    assert config["hooks"] == ["scripts/docs_site.py"]
    assert config["theme"]["name"] == "material"
    assert config["theme"]["font"] is False  # no web fonts fetched when the site is read
    assert [p if isinstance(p, str) else next(iter(p)) for p in config["plugins"]] == ["search"]


# --------------------------------------------------------------------------- what is documented


def test_every_command_has_a_page_showing_its_help() -> None:
    from assay.cli import COMMANDS

    index = (DOCS / "commands" / "index.md").read_text(encoding="utf-8")
    for name in COMMANDS:
        page = DOCS / "commands" / f"{name}.md"
        assert page.is_file(), f"no page for assay {name}"
        text = page.read_text(encoding="utf-8")
        assert f'--8<-- "tests/cli/help/assay-{name}.txt"' in text, name
        assert f"[`assay {name}`]({name}.md)" in index, name
    retired = {p.stem for p in (DOCS / "commands").glob("*.md")} - {"index", *COMMANDS}
    assert retired == set(), "pages of commands that do not exist"


def test_every_assert_op_is_in_the_reference() -> None:
    from assay.asserts import KNOWN_OPS

    text = (DOCS / "asserts.md").read_text(encoding="utf-8")
    missing = [op for op in KNOWN_OPS if f"| `{op}` |" not in text]
    assert missing == [], f"ops missing from docs/asserts.md: {missing}"


# --------------------------------------------------------------------------- the build


@pytest.mark.slow
def test_the_site_builds_strictly_with_no_external_request(tmp_path: Path) -> None:
    if importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("material") is None:
        pytest.skip("mkdocs-material is not installed (pip install -e '.[dev]')")
    site = tmp_path / "site"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    env.pop("PYTHONWARNINGS", None)
    command = [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(MKDOCS_YML)]
    proc = subprocess.run(
        [*command, "-d", str(site)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    modules = (site / "modules" / "index.html").read_text(encoding="utf-8")
    assert "assay.gate" in modules
    tag = r"<(?:link|script|img|iframe)\b[^>]*"
    external = re.compile(tag + r"""\b(?:href|src)=["']?(?:https?:)?//""")
    offenders = [
        str(page.relative_to(site))
        for page in site.rglob("*.html")
        if external.search(page.read_text(encoding="utf-8"))
    ]
    assert offenders == [], f"pages loading something from the network: {offenders}"
