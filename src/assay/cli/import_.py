"""``assay import promptfoo CONFIG``: convert another tool's config into goldens and candidates.

Any construct not converted is listed and makes the exit code 1 unless ``--allow-partial``, so a
CI migration script cannot believe a half conversion is whole.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from assay.errors import ConfigError

if TYPE_CHECKING:
    from assay.importers.promptfoo import Conversion


@click.group("import")
def import_group() -> None:
    """Convert another eval tool's config into assay goldens and a candidates file."""


@import_group.command("promptfoo")
@click.argument("config", type=click.Path(path_type=Path))
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path),
    help="Folder to write goldens/ and candidates.yaml into (default: ./<config-stem>-assay).",
)
@click.option(
    "--allow-partial",
    is_flag=True,
    help="Exit 0 even when some constructs were not converted (they are still listed).",
)
@click.option("--force", is_flag=True, help="Replace files that already exist.")
def promptfoo_command(config: Path, output: Path | None, allow_partial: bool, force: bool) -> int:
    """Convert a promptfoo config (promptfooconfig.yaml) into assay goldens and candidates."""
    # Imported here: `assay gate` never pays for the importer (or jinja2) it does not use.
    from assay.importers.promptfoo import convert

    conversion = convert(config)
    folder = output if output is not None else Path(f"{conversion.stem}-assay")
    files = _files(conversion, folder, config)
    existing = [path for path in files if path.exists() or path.is_symlink()]
    if existing and not force:
        # Checked before anything is written: a refusal leaves the folder as it was.
        raise ConfigError(
            f"{existing[0]} already exists (use --force to replace it)", source=str(config)
        )
    from assay.io import atomic_write_text

    for path, text in files.items():
        atomic_write_text(path, text, ConfigError)
    goldens_file = folder / "goldens" / f"{conversion.stem}.yaml"
    candidates = conversion.candidates["candidates"]
    candidate_ids = ", ".join(c["id"] for c in candidates)
    click.echo(f"converted {config}: {len(conversion.goldens)} tests")
    click.echo(f"goldens written: {len(conversion.goldens)} in {goldens_file}")
    if conversion.defaults is not None:
        click.echo(f"defaults written: {folder / 'goldens' / '_defaults.yaml'}")
    click.echo(f"candidates: {len(candidates)} in {folder / 'candidates.yaml'} ({candidate_ids})")
    if conversion.files:
        click.echo(f"scripts copied: {', '.join(sorted(conversion.files))} (into {folder})")
    bare = sum(1 for g in conversion.goldens if not g.get("asserts"))
    if bare and not (conversion.defaults or {}).get("asserts"):
        # promptfoo passes a test without asserts; assay sends it to tier 2 / the judge.
        click.echo(
            f"note: {bare} golden(s) have no asserts: promptfoo passes such a test, assay "
            "decides it by similarity to `expected` or by the judge"
        )
    for item in conversion.skipped:
        click.echo(f"skipped: {item.line()}")
    if conversion.skipped:
        verdict = "listed above" if allow_partial else "listed above (--allow-partial to accept)"
        click.echo(f"{len(conversion.skipped)} construct(s) not converted, {verdict}", err=True)
        return 0 if allow_partial else 1
    return 0


def _files(conversion: Conversion, folder: Path, config: Path) -> dict[Path, str]:
    """Every file to write, with its text, in the order written (the goldens first)."""
    import yaml

    def dump(data: Any) -> str:
        # sort_keys=False: a golden reads id, title, input, vars, asserts, as written.
        return str(yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100))

    header = f"# Converted by `assay import promptfoo` from {config.name}"
    if conversion.description:
        header += f" ({' '.join(conversion.description.split())})"
    header += "\n"
    goldens = folder / "goldens"
    files = {goldens / f"{conversion.stem}.yaml": header + dump(conversion.goldens)}
    if conversion.defaults is not None:
        files[goldens / "_defaults.yaml"] = header + dump(conversion.defaults)
    files[folder / "candidates.yaml"] = header + dump(conversion.candidates)
    # The scripts the asserts, transforms and providers name, where the written files look.
    for relative, text in conversion.files.items():
        files[folder / relative] = text
    return files
