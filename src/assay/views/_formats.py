"""Report format plugins: the contract a ``pkg/name`` format from another package follows: an
entry point in the ``assay.formats`` group naming a :class:`FormatRenderer` (docs/plugins.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from assay.plugins import FORMATS_GROUP, PluginError, entry_point_of, load_plugin


@dataclass(frozen=True, slots=True)
class RenderContext:
    """What a renderer may need besides the run's document.

    Fields may be added (always with a default), so a plugin should read only those it uses.

    Attributes:
        view: which document is drawn: ``'gate'`` (goldens: ``assay gate`` or ``assay eval``),
            ``'agent'`` (an agent benchmark run: ``assay bench``), or another view's name.
        comparison: the comparison with a previous run, when the command made one.
        options: format-specific settings, when the command passes any.
    """

    view: str = "gate"
    comparison: Mapping[str, Any] | None = None
    options: Mapping[str, Any] = field(default_factory=dict)


class FormatRenderer(Protocol):
    """The function an ``assay.formats`` entry point names."""

    def __call__(self, document: Mapping[str, Any], context: RenderContext | None) -> str:
        """Render ``document`` (what ``--format json`` prints) as the whole report text."""
        ...


def render_plugin_format(
    name: str, document: Mapping[str, Any], context: RenderContext | None = None
) -> str:
    """Render ``document`` with the format plugin ``name`` (``pkg/name``, e.g. ``'myorg/csv'``).

    Raises:
        PluginError: the plugin is not installed, cannot load, raises, or returns something
            other than a string. The message names the plugin.
    """
    renderer: FormatRenderer = load_plugin(FORMATS_GROUP, name)
    where = f"format plugin {name!r} (entry point {entry_point_of(FORMATS_GROUP, name)})"
    try:
        text = renderer(document, context)
    except Exception as exc:
        raise PluginError(f"{where} raised {type(exc).__name__}: {exc}") from exc
    if not isinstance(text, str):
        raise PluginError(f"{where} returned a {type(text).__name__}, not a string")
    return text
