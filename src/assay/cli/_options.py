"""Options several commands share: their names and checks come from the registries, so a
plugin's ``pkg/name`` format or backend is accepted exactly where a built-in one is."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Final, TypeVar

import click

from assay.views import FORMATS, is_known_format
from assay.vocabulary import BUILTIN_BACKENDS, TIERS

F = TypeVar("F", bound=Callable[..., Any])
FORCE_HELP: Final = (
    "Let --write-baseline replace a baseline that decided goldens with one that decides none."
)


def _check_format(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value is None:
        return None
    from assay.plugins import builtins_or_plugin_text

    if not is_known_format(value):
        message = f"{value!r} is not a format (use {builtins_or_plugin_text(FORMATS, 'format')})"
        raise click.BadParameter(message, ctx=ctx, param=param)
    return value


def _check_backend(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value is None:
        return None
    from assay.asserts import is_known_backend, known_backends_text

    if not is_known_backend(value):
        message = f"{value!r} is not a similarity backend (use {known_backends_text()})"
        raise click.BadParameter(message, ctx=ctx, param=param)
    return value


def format_option(help_text: str = "Report format.") -> Callable[[F], F]:
    return click.option(
        "-f",
        "--format",
        "fmt",
        callback=_check_format,
        metavar="|".join(FORMATS) + "|PKG/NAME",
        help=help_text,
    )


def similarity_option() -> Callable[[F], F]:
    return click.option(
        "--similarity",
        callback=_check_backend,
        metavar="|".join(BUILTIN_BACKENDS) + "|PKG/NAME",
        help="Tier 2 backend (default from config, else none).",
    )


def path_option(*names: str, **attrs: Any) -> Callable[[F], F]:
    return click.option(*names, type=click.Path(path_type=Path), **attrs)


def count_option(*names: str, help_text: str) -> Callable[[F], F]:
    """An option taking a whole number of at least 1 (None when not given)."""
    return click.option(*names, type=click.IntRange(min=1), help=help_text)


def json_option(help_text: str = "Print one JSON document.") -> Callable[[F], F]:
    return click.option("--json", "as_json", is_flag=True, help=help_text)


def key_file_option() -> Callable[[F], F]:
    return path_option(
        "--key-file", help="Key file (default: $ASSAY_KEY_FILE, else the user's config folder)."
    )


def apply(*decorators: Callable[[F], F]) -> Callable[[F], F]:
    """Several option decorators as one, listed in help in the order given."""

    def decorate(function: F) -> F:
        for decorator in reversed(decorators):
            function = decorator(function)
        return function

    return decorate


def selection_options() -> Callable[[F], F]:
    return apply(
        click.option(
            "-t",
            "--tier",
            "tiers",
            multiple=True,
            type=click.Choice(TIERS),
            help="Only this tier (repeatable).",
        ),
        click.option(
            "-k",
            "--filter",
            "patterns",
            multiple=True,
            metavar="PATTERN",
            help="Only the goldens whose id matches: an id or a glob such as 'sql-*' "
            "(repeatable; a pattern that matches nothing is an error).",
        ),
        click.option(
            "--packaged",
            is_flag=True,
            help="Add assay's packaged goldens and agent tasks to the project's (a project "
            "with no goldens gets them anyway).",
        ),
        click.option(
            "--shard",
            "shard_spec",
            metavar="I/N",
            help="Only the goldens whose id hashes to shard I of N; join the shards' --json "
            "documents with assay merge.",
        ),
    )


def baseline_options(*, max_repeats: bool = False) -> Callable[[F], F]:
    more_trials = count_option(
        "--max-repeats",
        help_text="With --check: give undecided goldens more trials, up to N in all.",
    )
    return apply(
        path_option("-b", "--baseline", help="Baseline file."),
        click.option(
            "-w", "--write-baseline", is_flag=True, help="Write the baseline from this run."
        ),
        click.option(
            "-c",
            "--check",
            is_flag=True,
            help="Compare with the baseline: exit 2 when a golden got worse.",
        ),
        click.option(
            "--alpha",
            type=click.FloatRange(0, 1, min_open=True),
            help="With --check: significance level for random outcomes (default 0.05).",
        ),
        *([more_trials] if max_repeats else []),
        click.option("--force", is_flag=True, help=FORCE_HELP),
    )


def report_options() -> Callable[[F], F]:
    return apply(
        format_option("Report format (default text)."),
        json_option("The same as --format json."),
        path_option(
            "-o", "--output", help="Write the report to FILE (the verdict still goes to stderr)."
        ),
        click.option(
            "-q", "--quiet", is_flag=True, help="Text report: only the summary and the verdict."
        ),
        click.option(
            "--failures-only", is_flag=True, help="List only the goldens that did not pass."
        ),
    )


REPORT_SECTION: Final = ("fmt", "as_json", "output", "quiet", "failures_only")
SELECTION_SECTION: Final = ("tiers", "patterns", "packaged", "shard_spec")
BASELINE_SECTION: Final = ("baseline", "write_baseline", "check", "alpha", "max_repeats", "force")
# The last sections of the help of gate, eval and bench.
JOB_SECTIONS: Final = (("Baseline", BASELINE_SECTION), ("Report", REPORT_SECTION))
