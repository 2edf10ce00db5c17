"""Modules of the project: ``package.module`` imported with the project root on ``sys.path``.

One rule for everything that names a module of the project (the ``python`` assert op's
``"package.module:function"``, the ``python`` provider's ``function``): the project root is
put first on ``sys.path`` for the import (when it is not there already) and taken off again
afterwards, so the project's own modules import without ``PYTHONPATH=.`` and the rest of the
process does not see the project folder as a source of modules.

:func:`module_digest` says which file that import loads, by its sha256, without importing the
module itself: what the output cache keys a python provider's entries by, so editing the file
is a cache miss.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import importlib.util
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

# sys.path and sys.modules are process-wide: one change of them at a time. Re-entrant: an
# import may itself ask for a module of the project (the same thread, the lock held).
_LOCK = threading.RLock()
# Module name -> (the root, the digest of its file) when this module imported it. A process
# that lives on (the pytest plugin, a library user) and is asked for the module again after
# the file was edited reloads it, and for another project's module of that name imports that
# one: the code run is then the code the cache key was made from.
_IMPORTED: dict[str, tuple[str, str | None]] = {}


@contextlib.contextmanager
def project_on_path(root: Path) -> Iterator[None]:
    """``root`` first on ``sys.path`` while the block runs, removed after it unless it was
    already there (someone else's entry is theirs to keep)."""
    entry = str(root)
    with _LOCK:
        added = entry not in sys.path
        if added:
            sys.path.insert(0, entry)
        try:
            yield
        finally:
            if added:
                # The import may have edited sys.path itself: remove our entry, not a position.
                with contextlib.suppress(ValueError):
                    sys.path.remove(entry)


def _file_digest(name: str) -> str | None:
    """The sha256 of the file ``import name`` loads (the lock held, the root on the path);
    None for a module with no file (built-in, frozen, a namespace package).

    Raises:
        ModuleNotFoundError: no such module.
        Exception: whatever a parent package raised while imported (find_spec imports them,
            as the import itself would).
    """
    spec = importlib.util.find_spec(name)
    if spec is None:
        # The same words import_module would use: one message whichever step finds it missing.
        raise ModuleNotFoundError(f"No module named {name!r}", name=name)
    if not spec.has_location or spec.origin is None:
        return None
    try:
        data = Path(spec.origin).read_bytes()
    except OSError:  # a module inside a zip file: the import reads it, we cannot
        return None
    return hashlib.sha256(data).hexdigest()


def _forget_other_project(name: str, root: Path) -> None:
    """Drop ``name`` from ``sys.modules`` when this module imported it for another project
    root, with its parent packages from that root: the import then finds this root's."""
    imported = _IMPORTED.get(name)
    if imported is None or imported[0] == str(root):
        return
    old_root = Path(imported[0])
    parts = name.split(".")
    for end in range(len(parts), 0, -1):
        dotted = ".".join(parts[:end])
        file = getattr(sys.modules.get(dotted), "__file__", None)
        if dotted == name or (file is not None and Path(file).is_relative_to(old_root)):
            sys.modules.pop(dotted, None)
    del _IMPORTED[name]


def module_digest(name: str, root: Path) -> str | None:
    """The sha256 of the file that importing ``name`` with ``root`` on ``sys.path`` loads, the
    module itself not imported (None: a module with no file of its own).

    Raises:
        ModuleNotFoundError: no such module.
        Exception: whatever a parent package raised while imported.
    """
    with project_on_path(root):
        _forget_other_project(name, root)
        return _file_digest(name)


def import_project_module(name: str, root: Path) -> ModuleType:
    """``import name`` with ``root`` first on ``sys.path`` for the import; a module this
    function imported before whose file has changed since is reloaded, one it imported for
    another root is imported afresh from this one.

    Raises:
        ImportError: no such module.
        Exception: whatever the module (or a parent package) raised while imported.
    """
    with project_on_path(root):
        _forget_other_project(name, root)
        digest = _file_digest(name)
        module = sys.modules.get(name)
        if module is not None and name in _IMPORTED and _IMPORTED[name][1] != digest:
            module = importlib.reload(module)
        elif module is None:
            module = importlib.import_module(name)
        else:
            return module  # imported already, by us from this very file or by someone else
        _IMPORTED[name] = (str(root), digest)
        return module
