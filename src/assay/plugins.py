"""Plugins: assert ops, provider types, similarity backends and report formats from other packages.

Every open registry in assay works the same way. A name is looked up in the built-in table
first; only on a miss, and only when the name is namespaced (``pkg/name``, one slash), are the
installed packages' entry points of the registry's group read, once per group per process.
So a run that names only built-ins never scans installed packages, a typo of a built-in
(``contians``) is never sent looking for a plugin and stays unknown, and a plugin can never
shadow a built-in, whose names have no slash.

Anything that goes wrong loading a plugin (an import error, an object that is not callable)
is a :class:`PluginError` naming the plugin and its entry point: the package to fix. The groups
and what their entry points name: docs/plugins.md.

Modules of the project (a ``python`` assert's or provider's ``package.module``) are imported
here too, by :func:`import_project_module`.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.machinery
import importlib.util
import re
import sys
import threading
from collections.abc import Collection, Iterable, Iterator, Mapping
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, Final

from assay.errors import PluginError

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

OPS_GROUP: Final = "assay.ops"
PROVIDERS_GROUP: Final = "assay.providers"
SIMILARITY_GROUP: Final = "assay.similarity"
FORMATS_GROUP: Final = "assay.formats"

# pkg/name: each part starts with a letter or digit; ':' is excluded because the string form of
# an assert ('myorg/ends-with:!') uses it to separate the op from its value.
_PLUGIN_NAME: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*")

# group -> plugin name -> the entry points declaring it (more than one is an error on load).
_SCANNED: dict[str, dict[str, list[EntryPoint]]] = {}
# (group, name) -> the loaded object, so each plugin is imported once.
_LOADED: dict[tuple[str, str], Any] = {}
# The registries' own caches of adapted plugins, emptied with ours by clear_plugin_cache.
_DEPENDENT_CACHES: list[dict[Any, Any]] = []


def is_plugin_name(name: object) -> bool:
    """Whether ``name`` has the namespaced ``pkg/name`` form every plugin name must have:
    ``'myorg/ends-with'`` has; ``'contains'``, ``'a/b/c'`` and a non-string have not."""
    return isinstance(name, str) and _PLUGIN_NAME.fullmatch(name) is not None


def _scan(group: str) -> dict[str, list[EntryPoint]]:
    found = _SCANNED.get(group)
    if found is None:
        # importlib.metadata is imported here, not at the top: a run that only uses built-ins
        # must not pay for it (it reads every installed distribution's metadata).
        import importlib.metadata

        found = {}
        for entry in importlib.metadata.entry_points(group=group):
            # A name without a namespace could only ever be a built-in: it is never reachable.
            if is_plugin_name(entry.name):
                found.setdefault(entry.name, []).append(entry)
        _SCANNED[group] = found
    return found


def plugin_names(group: str) -> tuple[str, ...]:
    """The plugin names installed packages declare for ``group`` (e.g. ``'assay.ops'``),
    sorted; this reads the installed packages but imports nothing."""
    return tuple(sorted(_scan(group)))


def has_plugin(group: str, name: str) -> bool:
    """Whether an installed package declares plugin ``name`` in ``group`` (nothing is imported).
    A name that is not namespaced is never a plugin, and then no package is read."""
    return is_plugin_name(name) and name in _scan(group)


def is_builtin_or_plugin(name: object, builtins: Collection[str], group: str) -> bool:
    """Whether ``name`` is one of ``builtins`` or an installed ``pkg/name`` plugin of ``group``.
    Only a namespaced name makes it read the installed packages; nothing is imported."""
    return isinstance(name, str) and (name in builtins or has_plugin(group, name))


def builtins_or_plugin_text(builtins: Iterable[str], what: str) -> str:
    """The accepted names, for messages: the built-ins, then the plugin rule (nothing is read
    from the installed packages)."""
    return f"{', '.join(builtins)} or an installed plugin {what} 'pkg/name'"


def _describe(entries: list[EntryPoint]) -> str:
    return ", ".join(
        f"{entry.value}" + (f" from {entry.dist.name}" if entry.dist is not None else "")
        for entry in entries
    )


def find_plugin(group: str, name: str) -> Any | None:
    """The loaded plugin ``name`` of ``group`` (the callable its entry point names), or None
    when no installed package declares it. The registries call this after a miss in their
    built-in table; a name that is not namespaced returns None without reading the packages.

    Raises:
        PluginError: the plugin is declared twice, cannot be imported, or is not callable.
    """
    key = (group, name)
    if key in _LOADED:
        return _LOADED[key]
    if not is_plugin_name(name):
        return None
    entries = _scan(group).get(name)
    if not entries:
        return None
    if len({entry.value for entry in entries}) > 1:
        raise PluginError(
            f"plugin {name!r} is declared by more than one entry point in group {group!r}"
            f" ({_describe(entries)}): uninstall all but one"
        )
    entry = entries[0]
    try:
        loaded = entry.load()
    except (Exception, SystemExit) as exc:  # anything a broken module can do at import
        raise PluginError(
            f"plugin {name!r} (entry point {entry.value}) cannot load: {type(exc).__name__}: {exc}"
        ) from exc
    if not callable(loaded):
        raise PluginError(
            f"plugin {name!r} (entry point {entry.value}) is not callable"
            f" (it is a {type(loaded).__name__})"
        )
    _LOADED[key] = loaded
    return loaded


def load_plugin(group: str, name: str) -> Any:
    """The callable of plugin ``name`` of ``group``, which must be installed. For registries
    without a built-in table here (report formats): check the built-in names first.

    Raises:
        PluginError: no installed package declares it (the message lists those that exist), it
            is not namespaced, or it cannot load.
    """
    if not is_plugin_name(name):
        raise PluginError(f"{name!r} is not a plugin name: plugin names look like 'pkg/name'")
    loaded = find_plugin(group, name)
    if loaded is None:
        installed = plugin_names(group)
        listing = ", ".join(installed) if installed else "none"
        raise PluginError(f"no installed plugin {name!r} in group {group!r} (installed: {listing})")
    return loaded


def entry_point_of(group: str, name: str) -> str:
    """How plugin ``name`` was declared (``'module:attr'``), for messages; ``'?'`` if unknown."""
    entries = _SCANNED.get(group, {}).get(name)
    return entries[0].value if entries else "?"


def clear_plugin_cache() -> None:
    """Forget every scan and loaded plugin (after installing or removing packages at run time)."""
    _SCANNED.clear()
    _LOADED.clear()
    for cache in _DEPENDENT_CACHES:
        cache.clear()


def track_cache(cache: dict[Any, Any]) -> None:
    """Have :func:`clear_plugin_cache` also empty ``cache`` (a registry's adapted plugins)."""
    _DEPENDENT_CACHES.append(cache)


# -------------------------------------------------------------------- modules of the project
# A ``python`` assert's or provider's module is imported with the project root first on
# ``sys.path`` for the import only: no ``PYTHONPATH=.`` needed, and the rest of the process does
# not see the project folder as a source of modules. :func:`module_digest` (the sha256 of the
# file, the module not imported) keys a python provider's cached outputs: an edit is a miss.

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
    None for a module with no file (built-in, frozen, a namespace package). find_spec imports
    the parent packages, as the import itself would: what they raise is raised here.
    """
    import hashlib

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


class SourceOnlyLoader(importlib.machinery.SourceFileLoader):
    """A loader that compiles the module's file every time. A cached ``.pyc`` passes for its
    source while size and whole-second mtime match, so a file edited within a second to the
    same size (``"x"`` to ``"y"``), by anyone, would run its old code; the digest in the cache
    key is of the file, and the file is what must run."""

    def path_stats(self, path: str) -> Mapping[str, Any]:
        raise OSError(path)  # no stats: get_code neither reads nor writes a .pyc


def _exec_from_source(name: str) -> ModuleType:
    """Import ``name`` afresh (a module already imported is replaced only when this works),
    its own file compiled from source; its parent packages are imported as usual."""
    old = sys.modules.pop(name, None)
    try:
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        loader = spec.loader
        if isinstance(loader, importlib.machinery.SourceFileLoader) and spec.origin:
            loader = spec.loader = SourceOnlyLoader(spec.name, spec.origin)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        if old is not None:
            sys.modules[name] = old
        raise
    parent, _, child = name.rpartition(".")
    if parent in sys.modules:  # as an import does: pkg.mod is an attribute of pkg
        setattr(sys.modules[parent], child, module)
    return module


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
        if module is not None and (name not in _IMPORTED or _IMPORTED[name][1] == digest):
            return module  # imported already, by us from this very file or by someone else
        module = _exec_from_source(name)
        _IMPORTED[name] = (str(root), digest)
        return module


__all__ = [
    "FORMATS_GROUP",
    "OPS_GROUP",
    "PROVIDERS_GROUP",
    "SIMILARITY_GROUP",
    "PluginError",
    "builtins_or_plugin_text",
    "clear_plugin_cache",
    "entry_point_of",
    "find_plugin",
    "has_plugin",
    "import_project_module",
    "is_builtin_or_plugin",
    "is_plugin_name",
    "load_plugin",
    "module_digest",
    "plugin_names",
    "track_cache",
]
