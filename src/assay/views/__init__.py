"""Views of a run. Every renderer reads the same results document (the ``--json`` output or a
saved run record) and only reads it; the HTML report may also show content the document never
holds (inputs, expected answers, outputs), passed as :class:`~assay.results.ReportContent`.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from importlib import import_module
from typing import TYPE_CHECKING, Any, Final

from assay._lazy import exports_by_module, lazy_exports

if TYPE_CHECKING:
    from assay.results import ReportContent
    from assay.views._formats import FormatRenderer, RenderContext, render_plugin_format
    from assay.views._history import render_history, run_label
    from assay.views._terminal import styled, use_colour
    from assay.views._text import render_failures, render_self_test, render_summary, render_verdict

FORMATS: Final = ("text", "json", "markdown", "junit", "html", "outputs")
# format -> (module, function); the function takes (document, content): content is what a
# view may show besides the document (the expected answers of failing goldens, the inputs).
_RENDERERS: Final = {
    "text": ("assay.views._text", "render_text"),
    "markdown": ("assay.views._markdown", "render_markdown"),
    "junit": ("assay.views._junit", "render_junit"),
    "html": ("assay.views._html", "render_html"),
    "outputs": ("assay.views._outputs", "render_outputs"),
}


def dump_json(document: Any) -> str:
    """Compact JSON for pipes and files (the C encoder: fast for 100k results); indented for
    a person at a terminal."""
    from assay.io import dump_json as dump

    return dump(document, compact=not sys.stdout.isatty())


def is_known_format(name: str) -> bool:
    """A built-in format, or an installed ``pkg/name`` format plugin (nothing is imported)."""
    from assay.plugins import FORMATS_GROUP, is_builtin_or_plugin

    return is_builtin_or_plugin(name, FORMATS, FORMATS_GROUP)


def render(
    fmt: str,
    document: Mapping[str, Any],
    content: ReportContent | None = None,
    *,
    quiet: bool = False,
    file: str | None = None,
) -> str:
    """``document`` drawn in ``fmt``; ``content`` reaches only the views that show content;
    ``quiet``: the text report without a row per golden (only the text format has rows to
    leave out: the others are files for tools); ``file``: where it will be written (an outputs
    file named ``.json`` is written as JSON, one named otherwise as JSON Lines).

    Raises:
        PluginError: a plugin format that cannot load, raises or returns no text.
    """
    if fmt == "json":
        return dump_json(document)
    if fmt in _RENDERERS:
        module, name = _RENDERERS[fmt]
        draw: Callable[..., str] = getattr(import_module(module), name)
        if fmt == "text":
            return draw(document, content, quiet=quiet)
        if fmt == "outputs":
            return draw(document, content, as_object=(file or "").endswith(".json"))
        return draw(document, content)
    from assay.views._formats import RenderContext, render_plugin_format

    view = str(document.get("kind", "gate"))
    return render_plugin_format(fmt, document, RenderContext(view=view))


def failures_only(document: Mapping[str, Any]) -> dict[str, Any]:
    """The document with only the results that did not pass (``--failures-only``); its
    summary, which counts every result, is unchanged."""
    kept = [r for r in document.get("results", []) if r.get("status") != "pass"]
    return {**document, "results": kept}


# The pieces the commands draw with, resolved on first use (PEP 562): each module loads only
# when a command draws with it.
_EXPORTS: Final = exports_by_module(
    {
        "_formats": "FormatRenderer RenderContext render_plugin_format",
        "_history": "render_history run_label",
        "_terminal": "styled use_colour",
        "_text": "render_failures render_self_test render_summary render_verdict",
    }
)

__all__ = [
    "FORMATS",
    "FormatRenderer",
    "RenderContext",
    "dump_json",
    "failures_only",
    "is_known_format",
    "render",
    "render_failures",
    "render_history",
    "render_plugin_format",
    "render_self_test",
    "render_summary",
    "render_verdict",
    "run_label",
    "styled",
    "use_colour",
]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)
