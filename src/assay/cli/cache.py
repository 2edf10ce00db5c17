"""``assay cache clear``: empty the model-output cache."""

from __future__ import annotations

from pathlib import Path

import click


@click.group("cache")
def cache_group() -> None:
    """The on-disk cache of model outputs and judge verdicts (.assay/cache)."""


@cache_group.command("clear")
def clear_command() -> int:
    """Delete every cached model output and judge verdict."""
    from assay.models import OutputCache, default_cache_path

    path = default_cache_path(Path.cwd())
    if not path.exists():
        click.echo("the cache is empty")
        return 0
    with OutputCache(path) as cache:
        removed = cache.clear()
    click.echo(f"removed {removed} cached output(s) from {path}")
    return 0
