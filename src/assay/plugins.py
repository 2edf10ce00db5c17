"""Plugins: assert ops, provider types, similarity backends and report formats from other packages.

Every open registry in assay works the same way. A name is looked up in the built-in table
first; only on a miss, and only when the name is namespaced (``pkg/name``, one slash), are the
installed packages' entry points of the registry's group read, once per group per process.
So a run that names only built-ins never scans installed packages, a typo of a built-in
(``contians``) is never sent looking for a plugin and stays unknown, and a plugin can never
shadow a built-in, whose names have no slash.

Loading a plugin imports its module. Anything that goes wrong there (ImportError, SyntaxError,
a missing attribute, an exception raised at import, an object that is not callable) becomes a
:class:`PluginError` naming the plugin and its entry point, so the message says which package to
fix.

=====================  ==========================================================
Group                  The entry point names
=====================  ==========================================================
``assay.ops``          ``fn(output: str, value: Any) -> bool | tuple[bool, str]``
``assay.providers``    ``factory(config: ProviderConfig) -> Provider`` (or a class)
``assay.similarity``   ``factory() -> Callable[[str, str], float]``
``assay.formats``      ``render(document, context) -> str`` (see :mod:`assay.views._formats`)
=====================  ==========================================================

See docs/plugins.md for the contract of each group.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Final

from assay.errors import PluginError

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

OPS_GROUP: Final = "assay.ops"
PROVIDERS_GROUP: Final = "assay.providers"
SIMILARITY_GROUP: Final = "assay.similarity"
FORMATS_GROUP: Final = "assay.formats"
GROUPS: Final = (OPS_GROUP, PROVIDERS_GROUP, SIMILARITY_GROUP, FORMATS_GROUP)

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
    """Whether ``name`` has the namespaced ``pkg/name`` form every plugin name must have.

    Args:
        name: the name to check (anything; only strings can qualify).

    Returns:
        True for e.g. ``'myorg/ends-with'``; False for ``'contains'`` or ``'a/b/c'``.
    """
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
    """The plugin names installed for ``group``, sorted (this reads the installed packages).

    Args:
        group: an entry point group, e.g. ``'assay.ops'``.

    Returns:
        The namespaced names declared by installed packages; nothing is imported.
    """
    return tuple(sorted(_scan(group)))


def has_plugin(group: str, name: str) -> bool:
    """Whether an installed package declares plugin ``name`` in ``group`` (nothing is imported).

    A name that is not namespaced is never a plugin, and then no package is read.

    Args:
        group: an entry point group, e.g. ``'assay.providers'``.
        name: the plugin name, e.g. ``'myorg/upper'``.
    """
    return is_plugin_name(name) and name in _scan(group)


def _describe(entries: list[EntryPoint]) -> str:
    return ", ".join(
        f"{entry.value}" + (f" from {entry.dist.name}" if entry.dist is not None else "")
        for entry in entries
    )


def find_plugin(group: str, name: str) -> Any | None:
    """The loaded plugin ``name`` of ``group``, or None when no installed package declares it.

    The registries call this after a miss in their built-in table. A name that is not
    namespaced returns None without reading the installed packages.

    Args:
        group: an entry point group, e.g. ``'assay.ops'``.
        name: the plugin name, e.g. ``'myorg/ends-with'``.

    Returns:
        The callable the entry point names, or None.

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
    """Load plugin ``name`` of ``group``, which must be installed.

    For registries without a table of their own in this module (report formats): check the
    built-in names first, then call this for a namespaced name.

    Args:
        group: an entry point group, e.g. ``'assay.formats'``.
        name: the plugin name, e.g. ``'myorg/csv'``.

    Returns:
        The callable the entry point names.

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


__all__ = [
    "FORMATS_GROUP",
    "GROUPS",
    "OPS_GROUP",
    "PROVIDERS_GROUP",
    "SIMILARITY_GROUP",
    "PluginError",
    "clear_plugin_cache",
    "entry_point_of",
    "find_plugin",
    "has_plugin",
    "is_plugin_name",
    "load_plugin",
    "plugin_names",
    "track_cache",
]
