"""``assay cache clear``: empty the model-output cache."""

from __future__ import annotations

from pathlib import Path

import click


@click.group("cache")
def cache_group() -> None:
    """The on-disk cache of model outputs and judge verdicts (.assay/cache)."""


@cache_group.command("clear")
def clear_command() -> int:
    """Delete every cached model output and judge verdict.

    A damaged cache (not a database, a folder in its place) is deleted instead: the database
    file and SQLite's -wal, -shm and -journal files beside it.
    """
    from assay.models import DamagedCacheError, OutputCache, default_cache_path, remove_cache_files

    path = default_cache_path(Path.cwd())
    if not path.exists() and not path.is_symlink():
        click.echo("the cache is empty")
        return 0
    try:
        with OutputCache(path) as cache:
            removed = cache.clear()
    except DamagedCacheError as exc:
        # Emptying needs a working database: a damaged one can only go as a whole.
        names = remove_cache_files(path)
        click.echo(f"{exc.reason}: deleted {', '.join(names)} from {path.parent}")
        return 0
    click.echo(f"removed {removed} cached output(s) from {path}")
    return 0
