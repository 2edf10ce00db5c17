"""The modules of ``src/assay`` import each other without a cycle.

Every module is parsed with ``ast`` (nothing is imported). An edge A → B is any ``import`` or
``from … import`` in A, at module level or inside a function, of an ``assay`` module B:
``from assay.x import y`` is an edge to ``assay.x.y`` when that is a module, else to ``assay.x``;
relative imports are resolved against A's package; a package's ``__init__`` is the package's
module. Imports under ``if TYPE_CHECKING:`` count too: a circle of type-only imports is still a
circle a reader has to hold in their head, and a type-only import from a lower stage of a
higher one is still the lower stage knowing the higher.

Besides no cycle, the stages are layered: each top-level unit (a shared module or a stage's
package) is in one layer of :data:`LAYERS`, and imports only from units of lower layers.
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
        if path.relative_to(ROOT).parts[0] == "data":
            continue  # the packaged tasks' fixtures: code for agents to work on, not assay's
        parts = ("assay", *path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


MODULES = module_files()


def _imports(node: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement under ``node`` (``if TYPE_CHECKING:`` bodies included)."""
    for child in ast.walk(node):
        if isinstance(child, ast.Import | ast.ImportFrom):
            yield child


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
    assert {
        "assay",
        "assay.cli",
        "assay.gate._run",
        "assay.models",
        "assay.asserts._pointer",
    } <= set(MODULES)


def test_from_import_resolves_to_a_submodule_or_its_package() -> None:
    graph = import_graph()
    # gate/_run.py: `from assay.gate import _baseline` is the module assay.gate._baseline;
    # gate/_score.py: `from assay.asserts import as_text` is the package assay.asserts.
    assert "assay.gate._baseline" in graph["assay.gate._run"]
    assert "assay.asserts" in graph["assay.gate._score"]
    # __main__.py: `from assay.cli import main` (a function) is the package assay.cli.
    assert graph["assay.__main__"] == {"assay.cli"}


def test_function_level_imports_count() -> None:
    graph = import_graph()
    # A shard's partial imports the baseline module only inside the functions that need it:
    # a plain run never loads it.
    assert "assay.gate._baseline" in graph["assay.gate._partial"]


def test_a_cycle_is_found_and_printed() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set()}
    assert find_cycle(graph) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


# ------------------------------------------------------------------- the stages, layered

# Low to high. A unit is a top-level module (shared by every stage) or a stage's package; it
# imports only from units of lower layers. The pipeline reads bottom-up: goldens hold parsed
# asserts, results are what scoring gives, models produce outputs, the cascade scores them, the
# gate compares with the baseline, the agent job builds on the gate, views and commands on top.
LAYERS: tuple[frozenset[str], ...] = tuple(
    frozenset(layer.split())
    for layer in (
        "_version _lazy errors",
        "vocabulary paths io validate _yaml _jinja plugins",
        "asserts",
        "goldens",
        "results",
        "models",
        "config",
        "cascade comparison attest importers",
        "gate",
        "agent",
        "views",
        "viewer",
        "cli pytest_plugin",
        "__main__ assay",
    )
)
# The top level holds the shared modules only; everything else is a stage's package.
SHARED = frozenset(
    {
        "_version",
        "_lazy",
        "errors",
        "vocabulary",
        "paths",
        "io",
        "validate",
        "_yaml",
        "_jinja",
        "plugins",
        "config",
    }
)


def unit_of(module: str) -> str:
    parts = module.split(".")
    return "assay" if len(parts) == 1 else parts[1]


def layer_of(unit: str) -> int:
    return next(i for i, layer in enumerate(LAYERS) if unit in layer)


def test_every_unit_has_a_layer_and_the_top_level_is_shared_modules() -> None:
    units = {unit_of(m) for m in MODULES}
    missing = sorted(u for u in units if not any(u in layer for layer in LAYERS))
    assert not missing, f"top-level units in no layer: {missing}"
    loose = sorted(
        unit_of(m)
        for m, path in MODULES.items()
        if path.parent == ROOT and path.name != "__init__.py" and unit_of(m) not in SHARED
    )
    assert loose == ["__main__"], f"top-level modules that belong in a stage's package: {loose}"


def test_no_stage_imports_a_higher_one() -> None:
    upward = sorted(
        f"{module} → {target}"
        for module, targets in import_graph().items()
        for target in targets
        if unit_of(module) != unit_of(target)
        and layer_of(unit_of(target)) >= layer_of(unit_of(module))
    )
    assert not upward, "imports of a higher (or the same) layer:\n" + "\n".join(upward)


def test_a_type_checking_import_is_an_edge() -> None:
    # assay/__init__.py imports the public names only under TYPE_CHECKING: those are edges.
    assert {"assay.gate", "assay.agent"} <= import_graph()["assay"]


# ------------------------------------------------------------------- packages' public faces


def is_private_module_of_a_package(module: str) -> bool:
    """``assay.<pkg>.….<_name>``: a module a package keeps to itself. (A top-level module such
    as ``assay._yaml`` is shared by every stage, not a package's: it is not one of these.)"""
    return any(part.startswith("_") for part in module.split(".")[2:])


def private_imports_across_packages(graph: Mapping[str, Set[str]]) -> list[tuple[str, str]]:
    """``(importer, imported)`` for every import of a package's private module from outside
    that stage's package: another package goes through the package's ``__init__``."""
    return sorted(
        (module, target)
        for module, targets in graph.items()
        for target in targets
        if is_private_module_of_a_package(target) and unit_of(module) != unit_of(target)
    )


def test_no_module_imports_another_packages_private_module() -> None:
    offending = private_imports_across_packages(import_graph())
    assert not offending, "imports of another package's private module:\n" + "\n".join(
        f"{importer} → {imported}" for importer, imported in offending
    )


def test_a_private_import_across_packages_is_found() -> None:
    graph = {
        "assay.agent._gate": {"assay.gate._verdict", "assay.gate", "assay.agent._box"},
        "assay.gate._run": {"assay.gate._baseline", "assay._yaml"},
        "assay": {"assay.cascade._cascade"},
    }
    assert private_imports_across_packages(graph) == [
        ("assay", "assay.cascade._cascade"),
        ("assay.agent._gate", "assay.gate._verdict"),
    ]
