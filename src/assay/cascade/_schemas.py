"""Remote JSON Schemas a project registers explicitly (``[schemas]`` in the config), served from
local files: the only way a ``$ref`` to an ``https://`` URI resolves, since assay never fetches
one. The registry is built once per run, when the config names schemas at all."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay.config import Config
from assay.errors import ConfigError
from assay.validate import At

if TYPE_CHECKING:
    from assay.asserts import CheckContext


def _contents(path: Path, uri: str, source: str | None) -> Any:
    """The schema in ``path``: JSON, or YAML for a ``.yaml`` / ``.yml`` file."""
    from assay._yaml import yaml_load
    from assay.io import read_json, read_text

    if path.suffix.lower() in (".yaml", ".yml"):
        value = yaml_load(read_text(path, ConfigError), str(path), error=ConfigError)
    else:
        value = read_json(path, ConfigError)
    if not isinstance(value, dict | bool):
        at = At(source, f'schemas."{uri}"')
        at.fail(f"the schema in {path} must be an object or a boolean")
    return value


def check_context(config: Config) -> CheckContext:
    """The CheckContext of a run under ``config``: its regex budget, registered schemas (the
    offline registry plus each one under its URI) and project root (where ``python`` asserts
    find their files and modules).

    Raises:
        ConfigError: a registered file is missing, unreadable or not a schema.
    """
    from assay.asserts import CheckContext, offline_registry

    registry = None
    if config.schemas:
        from referencing import Resource
        from referencing.jsonschema import DRAFT202012

        resources = [
            (uri, Resource.from_contents(_contents(path, uri, config.source), DRAFT202012))
            for uri, path in config.schemas.items()
        ]
        registry = offline_registry().with_resources(resources)
    return CheckContext(
        regex_timeout=config.regex_timeout_s, schema_registry=registry, root=config.root
    )
