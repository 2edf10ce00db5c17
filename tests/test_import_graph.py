"""The modules of ``src/assay`` import each other without a cycle.

Every module is parsed with ``ast`` (nothing is imported). An edge A → B is any ``import`` or
``from … import`` in A, at module level or inside a function, of an ``assay`` module B:
``from assay.x import y`` is an edge to ``assay.x.y`` when that is a module, else to ``assay.x``;
relative imports are resolved against A's package; a package's ``__init__`` is the package's
module. Imports under ``if TYPE_CHECKING:`` are skipped (they never run).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping, Set
from functools import cache
from pathlib import Path

import assay

ROOT = Path(assay.__file__).resolve().parent  # src/assay


def module_files() -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its own name)."""
    out = {}
    for path in sorted(ROOT.rglob("*.py")):
        parts = ("assay", *path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


MODULES = module_files()


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(node: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement under ``node``, skipping ``if TYPE_CHECKING:`` bodies."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.If) and _is_type_checking(child.test):
            for other in child.orelse:  # the `else:` branch does run
                if isinstance(other, ast.Import | ast.ImportFrom):
                    yield other
                yield from _imports(other)
            continue
        if isinstance(child, ast.Import | ast.ImportFrom):
            yield child
        yield from _imports(child)


def _owner(name: str) -> str | None:
    """The module ``name`` refers to: itself, or its closest enclosing module of ours."""
    while name:
        if name in MODULES:
            return name
        name = name.rpartition(".")[0]
    return None


def imported_modules(module: str, path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    is_package = path.name == "__init__.py"
    package = module if is_package else module.rpartition(".")[0]
    found: set[str] = set()
    for node in _imports(tree):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        else:
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                prefix = ".".join([*base, node.module] if node.module else base)
            else:
                prefix = node.module or ""
            # `from assay.x import y`: assay.x.y when that is a module, else assay.x itself.
            targets = [
                f"{prefix}.{alias.name}" if f"{prefix}.{alias.name}" in MODULES else prefix
                for alias in node.names
            ]
        for target in targets:
            if target == "assay" or target.startswith("assay."):
                owner = _owner(target)
                if owner is not None and owner != module:
                    found.add(owner)
    return found


@cache
def import_graph() -> dict[str, frozenset[str]]:
    return {module: frozenset(imported_modules(module, path)) for module, path in MODULES.items()}


def find_cycle(graph: Mapping[str, Set[str]]) -> list[str] | None:
    """One cycle as a path ``[a, b, …, a]``, or None (iterative depth-first search)."""
    state: dict[str, int] = {}  # 1 = on the current path, 2 = done
    for start in sorted(graph):
        if state.get(start):
            continue
        path = [start]
        stack = [iter(sorted(graph[start]))]
        state[start] = 1
        while stack:
            nxt = next(stack[-1], None)
            if nxt is None:
                state[path.pop()] = 2
                stack.pop()
                continue
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if not state.get(nxt):
                state[nxt] = 1
                path.append(nxt)
                stack.append(iter(sorted(graph.get(nxt, ()))))
    return None


def test_the_package_has_no_import_cycle() -> None:
    graph = import_graph()
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " → ".join(cycle or [])


# ------------------------------------------------------------------- the checker itself


def test_every_module_is_parsed() -> None:
    assert {"assay", "assay.cli", "assay.gate", "assay.models", "assay.asserts._pointer"} <= set(
        MODULES
    )


def test_from_import_resolves_to_a_submodule_or_its_package() -> None:
    graph = import_graph()
    # gate.py: `from assay import baseline as baseline_mod` is the module assay.baseline;
    # `from assay.asserts import CheckContext` is the package assay.asserts.
    assert {"assay.baseline", "assay.asserts"} <= graph["assay.gate"]
    # _entry.py: `from assay.cli import main` (a function, imported inside main) is the
    # package assay.cli.
    assert graph["assay.__main__"] == {"assay._entry"}
    assert graph["assay._entry"] == {"assay.cli"}


def test_function_level_imports_count_and_type_checking_imports_do_not() -> None:
    graph = import_graph()
    # assay/__init__.py imports the public modules only under TYPE_CHECKING.
    assert "assay._version" in graph["assay"]
    assert not {"assay.gate", "assay.results", "assay.comparison"} & graph["assay"]
    # The gate imports the judge inside run_gate, only when something must be judged.
    assert "assay.judge" in graph["assay.gate"]


def test_a_cycle_is_found_and_printed() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set()}
    assert find_cycle(graph) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None
