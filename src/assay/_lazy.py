"""Names a package resolves on first use (PEP 562), so importing it costs nothing until a name
is used: ``assay``, ``assay.gate``, ``assay.agent`` and ``assay.models`` export this way, and
``assay.cascade`` (the judge) and ``assay.views`` (the pieces commands draw with) for some names."""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from importlib import import_module
from typing import Any


def lazy_exports(
    package: str, exports: Mapping[str, str], names: list[str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package``.

    ``exports`` maps each name to the module that defines it: a dotted name is absolute
    (``assay.gate._store``), a plain one is a module of the package (``_run``). ``names`` is
    the package's ``__all__``, what ``dir()`` lists.
    """

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(module if "." in module else f"{package}.{module}"), name)
        setattr(sys.modules[package], name, value)  # resolved once: later uses do not come here
        return value

    def __dir__() -> list[str]:
        return names

    return __getattr__, __dir__


def exports_by_module(groups: Mapping[str, str]) -> dict[str, str]:
    """Each exported name -> its module, from module -> the names it provides (one string,
    split on whitespace): a package lists what each of its modules gives, once."""
    return {name: module for module, names in groups.items() for name in names.split()}
