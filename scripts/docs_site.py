"""The MkDocs hook of the documentation site (mkdocs.yml ``hooks:``): the "Module map" page,
generated at build time from the module docstrings under src/assay.

Each module is read with :mod:`ast`, never imported, so the map is the tree as it is when the
site is built (modules move; a committed list would go stale) and building the site runs none
of assay's code. A module is listed with the first paragraph of its docstring, a package with
its ``__init__`` docstring, grouped by package. ``src/assay/data`` is package data (the agent
tasks' fixture repositories), not assay's modules, and is left out.

Run it alone to print the page: ``python scripts/docs_site.py``.
"""

from __future__ import annotations

import ast
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "assay"
PAGE = "modules.md"
# Folders under src/assay that hold no assay module.
NOT_MODULES = frozenset({"data", "__pycache__"})

INTRO = """\
# Module map

*Generated when the site is built, from the docstring of each module under `src/assay`: a
module without one shows as such (a test requires one for every module).*

Modules are grouped by pipeline stage (goldens → outputs → cascade → results → baseline / gate
→ views). A package's `__init__.py` re-exports its public names and its `_private.py` modules
hold the implementation. The core imports no command or renderer, renderers only read the
results document, and a test walks every import in `src` to prove there is no cycle. Tests
mirror this layout under `tests/` (shared builders in `tests/helpers/`).
"""


@dataclass(frozen=True)
class Module:
    """One module of the tree: its dotted name, its file, and its docstring's summary."""

    name: str
    path: Path
    is_package: bool
    summary: str | None

    @property
    def package(self) -> str:
        """The package the map lists it under: a package under its own name."""
        return self.name if self.is_package else self.name.rpartition(".")[0]


def _dotted(path: Path, src: Path) -> str:
    parts = list(path.relative_to(src.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def summary(docstring: str | None) -> str | None:
    """The first paragraph of a docstring, on one line; None when there is none."""
    if docstring is None or not docstring.strip():
        return None
    paragraph = re.split(r"\n\s*\n", docstring.strip(), maxsplit=1)[0]
    return " ".join(line.strip() for line in paragraph.splitlines())


def _source_files(src: Path) -> list[Path]:
    return sorted(
        path
        for path in src.rglob("*.py")
        if not NOT_MODULES.intersection(path.relative_to(src).parts[:-1])
    )


def modules(src: Path = SRC) -> list[Module]:
    """Every module under ``src`` (a package folder), sorted by dotted name.

    Raises:
        SyntaxError: a module that does not parse (the map would be wrong without it).
    """
    found = []
    for path in _source_files(src):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        found.append(
            Module(
                name=_dotted(path, src),
                path=path,
                is_package=path.name == "__init__.py",
                summary=summary(ast.get_docstring(tree)),
            )
        )
    return sorted(found, key=lambda m: m.name)


def _markdown(text: str) -> str:
    """A docstring's reST-ish markup as Markdown in a table cell."""
    text = re.sub(r":[a-z]+:`~?([^`]+)`", r"`\1`", text)  # :func:`x` -> `x`
    text = re.sub(r"``(.+?)``", r"`\1`", text)
    return text.replace("|", "\\|")


def render(found: list[Module]) -> str:
    """The Module map page for these modules."""
    packages = sorted({m.package for m in found})
    lines = [INTRO]
    for package in packages:
        own = next((m for m in found if m.is_package and m.name == package), None)
        lines += ["", f"## `{package}`", ""]
        if own is not None:
            lines += [_markdown(own.summary or "*(no docstring)*"), ""]
        members = [m for m in found if not m.is_package and m.package == package]
        subpackages = [m for m in found if m.is_package and m.name.rpartition(".")[0] == package]
        if not members and not subpackages:
            continue
        lines += ["| module | what it is |", "|---|---|"]
        for m in members:
            lines.append(f"| `{m.name}` | {_markdown(m.summary or '*(no docstring)*')} |")
        for m in subpackages:
            anchor = m.name.replace(".", "")
            lines.append(f"| [`{m.name}`](#{anchor}) | package: see below |")
    return "\n".join(lines) + "\n"


def module_map(src: Path = SRC) -> str:
    """The Module map page of the tree under ``src``, as it is now."""
    return render(modules(src))


# --------------------------------------------------------------------------- the MkDocs hook


def on_files(files: Any, config: Any) -> Any:
    """Add the generated Module map page to the site's files."""
    from mkdocs.structure.files import File

    files.append(File.generated(config, PAGE, content=module_map()))
    return files


def on_serve(server: Any, config: Any, builder: Any) -> Any:
    """``mkdocs serve`` rebuilds the map when a module changes."""
    server.watch(str(SRC))
    return server


if __name__ == "__main__":
    sys.stdout.write(module_map())
