"""assay's exception hierarchy.

::

    AssayError                 any error a user can fix; the CLI prints it and exits 1
    ├── ConfigError            assay.toml / [tool.assay] / candidates file
    ├── GoldenError            a golden file or record
    ├── OutputsError           the --outputs file
    ├── BaselineError          the baseline file (missing, unknown schema, unreadable)
    ├── TelemetryError         a telemetry record
    ├── RunStoreError          saved runs under .assay/runs
    ├── PluginError            an installed plugin that cannot load or breaks its contract
    ├── MergeError             shard documents that are not the shards of one run
    └── ValidationError        bad arguments to the Python API

Every error carries the file (``source``), the ``line`` of the field where the file has lines
and the ``field`` at fault when there is one, so the message a user sees always says where to
look: ``FILE:LINE: field 'x.y': problem``.
"""

from __future__ import annotations


class AssayError(Exception):
    """Root of every error assay raises on purpose."""

    def __init__(
        self,
        message: str,
        *,
        source: str | None = None,
        field: str | None = None,
        line: int | None = None,
    ):
        self.message = message
        self.source = source
        self.field = field
        self.line = line
        super().__init__(self.__str__())

    def __str__(self) -> str:
        where = f"{self.source}: " if self.source else ""
        if self.source and self.line is not None:
            # The line goes with the file, before a block the source names (``[tool.assay]``).
            name, block, rest = self.source.rpartition(" [")
            whole = block and rest.endswith("]")
            where = f"{name}:{self.line} [{rest}: " if whole else f"{self.source}:{self.line}: "
        if self.field:
            where += f"field '{self.field}': "
        return f"{where}{self.message}"


class ConfigError(AssayError):
    """Bad configuration (assay.toml, [tool.assay], flags that contradict each other)."""


class GoldenError(AssayError):
    """A golden that cannot be loaded: bad frontmatter, duplicate id, bad field."""


class OutputsError(AssayError):
    """The candidate outputs file is missing, unreadable or malformed."""


class BaselineError(AssayError):
    """The baseline file is missing, unreadable or of an unknown schema version."""


class TelemetryError(AssayError):
    """A telemetry record is malformed."""


class RunStoreError(AssayError):
    """A saved run cannot be found or read."""


class PluginError(AssayError):
    """A plugin that is installed but cannot be used (it fails to import, is not callable, is
    declared twice, or breaks its contract). The message names the plugin and its entry point."""


class MergeError(AssayError):
    """Shard documents ``assay merge`` refuses: not shards, of different runs or settings,
    duplicated or missing."""


class ValidationError(AssayError, ValueError):
    """Bad arguments passed to the Python API."""
