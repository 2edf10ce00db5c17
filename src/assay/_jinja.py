"""What every sandboxed Jinja2 template of assay refuses (prompts and assert values alike)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from jinja2 import nodes


def reads_other_files(tree: nodes.Template) -> str | None:
    """The tag in ``tree`` that would read another template (include, import, extends), or
    None: a template is rendered from its own text only."""
    from jinja2 import nodes

    for kind, word in (
        (nodes.Include, "include"),
        (nodes.Import, "import"),
        (nodes.FromImport, "from ... import"),
        (nodes.Extends, "extends"),
    ):
        if tree.find(kind) is not None:
            return word
    return None
