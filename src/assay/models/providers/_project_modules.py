"""The modules of the project that a python provider's module loaded: part of its cache key.

A module of the project is one whose file lies under the project root, outside the
environment's installed packages (a ``.venv`` inside the project) and outside assay itself.
Those of a provider's module are found two ways, once the module is imported, and both count:

- its imports, read from its file (and, transitively, from each module of the project it
  names), resolved under the root as the import resolves them with the root first on
  ``sys.path``: ``import helpers``, ``from config import MODEL`` (a constant says nothing of
  where it came from once imported), ``from . import util``, an import inside a function;
- what its namespace refers to: a module, the module of a function or class, an object's
  class (a helper imported under another name, or by ``importlib``). The walk follows
  namespaces, not ``sys.modules``: a helper a long-lived process dropped from ``sys.modules``
  is still the code the provider calls.

Only names and files: nothing here runs the project's code.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import FunctionType, MethodType, ModuleType
from typing import Any


def project_modules(module: ModuleType, root: Path) -> dict[str, Path]:
    """Module name -> file of every module of the project ``module`` loaded, transitively,
    with their parent packages; ``module`` itself left out. ``root`` is resolved."""
    excluded = _excluded(root)
    found = _walked(module, root, excluded)
    own = _project_file(vars(module), root, excluded)
    pending = [(module.__name__, own)] if own is not None else []
    pending += list(found.items())
    seen = {module.__name__, *found}
    while pending:
        name, path = pending.pop()
        for other, file in _imports_of(name, path, root, excluded):
            if other not in seen:
                seen.add(other)
                found[other] = file
                pending.append((other, file))
    return found


def _excluded(root: Path) -> list[Path]:
    """Folders under the project root that hold no module of the project: the environment's
    and assay's own package."""
    folders = {Path(p).resolve() for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    folders.add(Path(__file__).resolve().parents[2])  # the assay package
    return [p for p in folders if not root.is_relative_to(p)]


def _is_project_path(path: Path, root: Path, excluded: list[Path]) -> bool:
    if not path.is_relative_to(root) or any(path.is_relative_to(e) for e in excluded):
        return False
    return not {"site-packages", "dist-packages"} & set(path.parts)


def _project_file(namespace: Mapping[str, Any], root: Path, excluded: list[Path]) -> Path | None:
    """The file of the module whose globals are ``namespace`` when it is one of the project."""
    file = namespace.get("__file__")
    if not isinstance(file, str):
        return None
    path = Path(file).resolve()
    return path if _is_project_path(path, root, excluded) else None


# --------------------------------------------------------------------------- imports, read


def _imports_of(
    name: str, path: Path, root: Path, excluded: list[Path]
) -> Iterator[tuple[str, Path]]:
    """(name, file) of each module of the project the file ``path`` of module ``name``
    imports, with the packages on the way (``a/__init__.py`` for ``import a.b``)."""
    try:
        tree = ast.parse(path.read_bytes(), str(path))
    except (OSError, SyntaxError, ValueError):  # imported, so it compiled; it changed since
        return
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            dotted = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(node.module, node.level, package)
            if base is None:
                continue
            # ``from pkg import sub`` may name a module; a name that is not one finds no file.
            dotted = [base, *(f"{base}.{alias.name}" for alias in node.names if base)]
        else:
            continue
        for each in dotted:
            yield from _resolved(each, root, excluded)


def _absolute(module: str | None, level: int, package: str) -> str | None:
    """The absolute name of ``from <level dots><module> import``; None past the top."""
    if level == 0:
        return module
    parts = package.split(".") if package else []
    if level - 1 > len(parts) or (level - 1 == len(parts) and not module):
        return None
    base = parts[: len(parts) - (level - 1)]
    return ".".join([*base, module] if module else base)


def _resolved(dotted: str, root: Path, excluded: list[Path]) -> Iterator[tuple[str, Path]]:
    """The project's files of ``dotted`` and of each package on its way, as the import finds
    them with the root first on ``sys.path`` (a package, else a module of that name)."""
    folder = root
    parts = dotted.split(".")
    for depth, part in enumerate(parts, start=1):
        name = ".".join(parts[:depth])
        package, single = folder / part / "__init__.py", folder / f"{part}.py"
        if package.is_file():
            file = package.resolve()
            folder = folder / part
        elif single.is_file() and depth == len(parts):
            file = single.resolve()
        else:
            return  # not the project's (or a namespace package: nothing of its own runs)
        if _is_project_path(file, root, excluded):
            yield name, file


# --------------------------------------------------------------------------- namespaces, walked


def _walked(module: ModuleType, root: Path, excluded: list[Path]) -> dict[str, Path]:
    """The modules of the project ``module``'s namespace refers to, transitively."""
    found: dict[str, Path] = {}
    start = vars(module)
    pending, seen = [start], {id(start)}
    while pending:
        namespace = pending.pop()
        path = _project_file(namespace, root, excluded)
        name = namespace.get("__name__")
        if namespace is not start:
            if path is None or not isinstance(name, str):
                continue
            found[name] = path
        neighbours = []
        parent = sys.modules.get(str(name).rpartition(".")[0])
        if isinstance(parent, ModuleType):
            neighbours.append(vars(parent))
        for value in list(namespace.values()):
            neighbours.extend(_referred(value))
        for other in neighbours:
            if id(other) not in seen:
                seen.add(id(other))
                pending.append(other)
    return found


def _referred(value: Any) -> Iterator[dict[str, Any]]:
    """The module globals a value of a namespace ties it to: a module's own, a function's
    (its ``__globals__``), a class's, an object's class's."""
    if isinstance(value, ModuleType):
        yield vars(value)
    elif isinstance(value, FunctionType):
        yield value.__globals__
    elif isinstance(value, MethodType) and isinstance(value.__func__, FunctionType):
        yield value.__func__.__globals__
    elif isinstance(value, type):
        yield from _class_namespaces(value)
    elif type(value).__module__ != "builtins":
        yield from _class_namespaces(type(value))


def _class_namespaces(cls: type) -> Iterator[dict[str, Any]]:
    """The globals of the module that defines ``cls``: its methods' (right even when the module
    has left ``sys.modules``), else that module's by name."""
    for attribute in vars(cls).values():
        is_wrapped = isinstance(attribute, staticmethod | classmethod)
        function = attribute.__func__ if is_wrapped else attribute
        if isinstance(function, FunctionType):
            yield function.__globals__
            return
    module = sys.modules.get(cls.__module__)
    if isinstance(module, ModuleType):
        yield vars(module)
