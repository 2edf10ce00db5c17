"""Prompt templates: ``{{ input }}``, ``{{ input.question }}``, ``{{ id }}``, ``{{ title }}``.

A deliberately tiny language (no code, no loops): a placeholder names a dotted path into the
golden's fields. Strings render as they are, other JSON values as compact JSON. An unknown
placeholder is an error naming the candidate and the placeholder (fail closed: a typo must not
send an empty prompt to a paid model).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from assay.errors import ConfigError

_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][\w-]*(?:\.[\w-]+)*)\s*\}\}")
_MISSING = object()


def _lookup(context: Mapping[str, Any], path: str) -> Any:
    value: Any = context
    for part in path.split("."):
        if isinstance(value, Mapping) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return _MISSING
    return value


def placeholders(template: str) -> list[str]:
    return _PLACEHOLDER.findall(template)


def render(template: str, context: Mapping[str, Any], *, where: str, field: str = "prompt") -> str:
    """Fill ``template`` from ``context``; ``field`` names the template in errors (``prompt``,
    ``system``, ``messages[0].content``).

    Raises:
        ConfigError: a placeholder names nothing in the context.
    """

    def fill(match: re.Match[str]) -> str:
        value = _lookup(context, match.group(1))
        if value is _MISSING:
            raise ConfigError(
                f"the {field} template names {match.group(0)!r}, which this golden does not have",
                source=where,
                field=field,
            )
        if isinstance(value, str):
            return value
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))

    return _PLACEHOLDER.sub(fill, template)
