"""Options several commands share: their names and checks come from the registries, so a
plugin's ``pkg/name`` format or backend is accepted exactly where a built-in one is."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from assay.views import FORMATS
from assay.vocabulary import BUILTIN_BACKENDS

F = TypeVar("F", bound=Callable[..., Any])


def _check_format(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value is None:
        return None
    from assay.views import is_known_format

    if not is_known_format(value):
        raise click.BadParameter(
            f"{value!r} is not a format (use {', '.join(FORMATS)} or an installed plugin "
            "format 'pkg/name')",
            ctx=ctx,
            param=param,
        )
    return value


def _check_backend(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value is None:
        return None
    from assay.similarity import is_known_backend, known_backends_text

    if not is_known_backend(value):
        raise click.BadParameter(
            f"{value!r} is not a similarity backend (use {known_backends_text()})",
            ctx=ctx,
            param=param,
        )
    return value


def format_option(help_text: str = "Report format.") -> Callable[[F], F]:
    return click.option(
        "--format",
        "fmt",
        default=None,
        callback=_check_format,
        metavar="|".join(FORMATS) + "|PKG/NAME",
        help=help_text,
    )


def similarity_option() -> Callable[[F], F]:
    return click.option(
        "--similarity",
        default=None,
        callback=_check_backend,
        metavar="|".join(BUILTIN_BACKENDS) + "|PKG/NAME",
        help="Tier 2 backend (default from config, else none).",
    )
