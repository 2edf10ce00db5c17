"""The public API: what ``assay`` (and ``assay.models``) export, and that it is complete.

For each package: ``__all__`` is exactly the lazily resolved names (``_EXPORTS``, plus
``__version__`` for ``assay``) and exactly the names of the ``if TYPE_CHECKING:`` block (parsed
from the source with ``ast``, each from the module ``_EXPORTS`` names); every name resolves; the
lists are written in isort-style order (as ruff's RUF022 sorts ``__all__``: SCREAMING_CASE
constants, then CamelCase classes, then the rest; code-point order within each). For ``assay``:
every class from the ``assay`` package named in the signature of an exported function or class
is itself exported.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
import types
import typing
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

import assay
import assay.models

PACKAGES = {"assay": assay, "assay.models": assay.models}
EXTRA = {"assay": {"__version__"}, "assay.models": set()}


def source(package: types.ModuleType) -> ast.Module:
    path = Path(package.__file__ or "")
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def type_checking_block(tree: ast.Module) -> ast.If:
    blocks = [
        node
        for node in tree.body
        if isinstance(node, ast.If)
        and isinstance(node.test, ast.Name)
        and node.test.id == "TYPE_CHECKING"
    ]
    assert len(blocks) == 1, "one module-level `if TYPE_CHECKING:` block"
    return blocks[0]


def type_checking_imports(package: types.ModuleType) -> list[tuple[str, str]]:
    """``(module, name)`` for every name imported under ``if TYPE_CHECKING:``, as written."""
    out = []
    for node in type_checking_block(source(package)).body:
        assert isinstance(node, ast.ImportFrom), ast.unparse(node)
        assert node.level == 0 and node.module, ast.unparse(node)
        for alias in node.names:
            assert alias.asname is None, ast.unparse(node)
            out.append((node.module, alias.name))
    return out


def exports_groups(package: types.ModuleType) -> list[tuple[str, list[str]]]:
    """``(module, names)`` of the ``_EXPORTS = exports_by_module({...})`` literal, in the order
    the source writes them."""
    for node in source(package).body:
        if isinstance(node, ast.AnnAssign | ast.Assign):
            targets = [node.target] if isinstance(node, ast.AnnAssign) else node.targets
            if any(isinstance(t, ast.Name) and t.id == "_EXPORTS" for t in targets):
                assert isinstance(node.value, ast.Call) and isinstance(node.value.args[0], ast.Dict)
                groups = ast.literal_eval(node.value.args[0])
                return [(module, names.split()) for module, names in groups.items()]
    raise AssertionError("no _EXPORTS literal")


def order_key(name: str) -> tuple[int, str]:
    """isort-style: SCREAMING_CASE constants, CamelCase classes, then the rest (functions)."""
    if len(name) > 1 and name.isupper():
        return 0, name
    return (1 if name[:1].isupper() else 2), name


def in_order(names: list[str]) -> list[tuple[str, str]]:
    """Neighbours that are out of order (or repeated): [] when the list is in order."""
    return [(a, b) for a, b in pairwise(names) if not order_key(a) < order_key(b)]


# ----------------------------------------------------------------------- __all__ vs _EXPORTS


@pytest.mark.parametrize("name", list(PACKAGES))
def test_all_is_exactly_the_lazy_exports(name: str) -> None:
    package = PACKAGES[name]
    assert len(set(package.__all__)) == len(package.__all__), "a name listed twice"
    assert set(package.__all__) == set(package._EXPORTS) | EXTRA[name]


@pytest.mark.parametrize("name", list(PACKAGES))
def test_all_is_exactly_the_type_checking_imports(name: str) -> None:
    package = PACKAGES[name]
    imported = type_checking_imports(package)
    names = [n for _, n in imported]
    assert len(set(names)) == len(names), "a name imported twice under TYPE_CHECKING"
    assert set(names) == set(package.__all__) - EXTRA[name]
    # Each name is imported (for type checkers) from the module it is resolved from at run time.
    for module, export in imported:
        resolved = f"{name}.{package._EXPORTS[export]}"
        assert module == resolved or module.startswith(resolved + "."), (export, module)


@pytest.mark.parametrize("name", list(PACKAGES))
def test_every_name_resolves_to_where_the_exports_say(name: str) -> None:
    package = PACKAGES[name]
    for export in package.__all__:
        value = getattr(package, export)
        assert value is not None, export
        if export in package._EXPORTS:
            module = importlib.import_module(f"{name}.{package._EXPORTS[export]}")
            assert getattr(module, export) is value, export
    assert sorted(dir(package)) == sorted(package.__all__)


@pytest.mark.parametrize("name", list(PACKAGES))
def test_the_lists_are_written_in_order(name: str) -> None:
    package = PACKAGES[name]
    # The actual order of each list, neighbour by neighbour (nothing is sorted here: `assay`
    # builds __all__ with sorted(), so its written lists are what this checks).
    assert in_order(list(package.__all__)) == []
    groups = exports_groups(package)
    assert [m for m, _ in groups] == sorted(m for m, _ in groups), "modules out of order"
    for module, names in groups:
        assert in_order(names) == [], module
    imported = type_checking_imports(package)
    # One statement per module (its names together), the modules in code-point order.
    modules = [m for i, (m, _) in enumerate(imported) if i == 0 or imported[i - 1][0] != m]
    assert len(modules) == len(set(modules)), "a module imported from in two places"
    assert [(a, b) for a, b in pairwise(modules) if not a < b] == [], "modules out of order"
    for module in modules:
        assert in_order([n for m, n in imported if m == module]) == [], module


def test_the_order_check_sees_disorder() -> None:
    assert in_order(["PROVIDER_TYPES", "Call", "GateRun", "__version__", "evaluate"]) == []
    assert in_order(["evaluate", "Config"]) == [("evaluate", "Config")]
    assert in_order(["Call", "PROVIDER_TYPES"]) == [("Call", "PROVIDER_TYPES")]
    assert in_order(["Config", "Config"]) == [("Config", "Config")]


def test_unknown_names_raise_attribute_error() -> None:
    for package in PACKAGES.values():
        with pytest.raises(AttributeError, match="no_such_name"):
            package.no_such_name  # noqa: B018 - the attribute access is the test


def test_the_api_names_resolve_to_their_modules() -> None:
    from assay.comparison import evaluate_deterministic_scorer, evaluate_prompt_candidates
    from assay.gate._run import run_gate

    assert assay.evaluate_prompt_candidates is evaluate_prompt_candidates
    assert assay.evaluate_deterministic_scorer is evaluate_deterministic_scorer
    assert assay.run_gate is run_gate


# ------------------------------------------------------------- types named in the signatures


def _namespace(obj: Any) -> dict[str, Any]:
    """The globals ``obj``'s annotations are written in, with the module's TYPE_CHECKING-only
    imports added (``from __future__ import annotations`` leaves them as strings)."""
    module = importlib.import_module(obj.__module__)
    namespace = dict(vars(module))
    tree = ast.parse(inspect.getsource(module))
    for node in tree.body:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            code = compile(ast.Module(body=node.body, type_ignores=[]), module.__name__, "exec")
            exec(code, namespace)
    return namespace


def hints(function: Any, owner: Any) -> dict[str, Any]:
    """``typing.get_type_hints`` of a function's parameters and return."""
    try:
        return typing.get_type_hints(function)
    except NameError:
        return typing.get_type_hints(function, globalns=_namespace(owner))


def signatures(obj: Any) -> Iterator[tuple[str, Any, Any]]:
    """(where, function, defined-in) for an exported function, or a class's constructor,
    public methods and properties (those its assay classes define)."""
    if not inspect.isclass(obj):
        yield obj.__name__, obj, obj
        return
    for klass in obj.__mro__:
        if not klass.__module__.startswith("assay"):
            continue
        for attr, member in vars(klass).items():
            if attr.startswith("_") and attr not in ("__init__", "__call__"):
                continue
            if isinstance(member, staticmethod | classmethod):
                member = member.__func__
            if isinstance(member, property):
                member = member.fget
            if inspect.isfunction(member):
                yield f"{obj.__name__}.{attr}", member, klass


def assay_types(hint: Any) -> Iterator[type]:
    """Every class of the assay package inside a hint: through ``X | None``, ``list[X]``,
    ``Sequence[X]``, ``Callable[[X], Y]``, ``Awaitable[X]``, ``Annotated[X, …]``…"""
    if isinstance(hint, list | tuple):  # Callable's parameter list
        for item in hint:
            yield from assay_types(item)
        return
    origin = typing.get_origin(hint)
    if origin is typing.Literal:
        return
    if origin is not None:
        yield from assay_types(origin)
        for arg in typing.get_args(hint):
            yield from assay_types(arg)
        return
    if isinstance(hint, type) and hint.__module__.split(".")[0] == "assay":
        yield hint


def unexported_signature_types() -> dict[str, set[str]]:
    """``{qualified type name: {where it appears}}`` for every assay type not exported."""
    exported = {id(getattr(assay, name)) for name in assay.__all__}
    missing: dict[str, set[str]] = {}
    for name in assay.__all__:
        obj = getattr(assay, name)
        if not (inspect.isclass(obj) or inspect.isfunction(obj)):
            continue
        for where, function, owner in signatures(obj):
            for hint in hints(function, owner).values():
                for t in assay_types(hint):
                    if id(t) not in exported:
                        missing.setdefault(f"{t.__module__}.{t.__qualname__}", set()).add(where)
    return missing


def test_every_assay_type_in_a_public_signature_is_exported() -> None:
    missing = unexported_signature_types()
    assert missing == {}, "\n".join(
        f"{t} (in {', '.join(sorted(w))})" for t, w in sorted(missing.items())
    )


def test_the_signature_walk_finds_nested_types() -> None:
    from assay.results import Result

    hint = typing.Optional[list[dict[str, tuple[Result, int]]]]  # noqa: UP045 - the old spelling
    assert list(assay_types(hint)) == [Result]
    assert list(assay_types(typing.Callable[[Result], typing.Awaitable[None]])) == [Result]
    assert list(assay_types(Result | None)) == [Result]
    assert list(assay_types(typing.Literal["pass"])) == []


def test_the_signature_walk_covers_constructors_methods_and_properties() -> None:
    where = {w for w, _, _ in signatures(assay.GateRun)}
    assert {"GateRun.__init__", "GateRun.to_dict", "GateRun.exit_code"} <= where
    if dataclasses.is_dataclass(assay.GateRun):
        fields = {f.name for f in dataclasses.fields(assay.GateRun)}
        init = hints(assay.GateRun.__init__, assay.GateRun)
        assert fields <= set(init)


def test_the_agent_package_lists_what_it_resolves() -> None:
    # assay.agent resolves its names on first use (a Ray worker imports one module of it):
    # every name it lists resolves, and it lists every name it resolves.
    import assay.agent as agent_package

    assert sorted(agent_package.__all__) == sorted(agent_package._EXPORTS)
    for name in agent_package.__all__:
        assert getattr(agent_package, name) is not None
