"""Project configuration: ``assay.toml`` or ``[tool.assay]`` in ``pyproject.toml``.

Every setting has a default; unknown keys are errors (a typo must not silently change a gate).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from assay.errors import ConfigError

DEFAULT_GOLDENS: Final = "goldens"
DEFAULT_BASELINE: Final = "assay-baseline.json"

_SIMILARITY: Final = ("none", "difflib", "rapidfuzz", "embedding")
_KEYS: Final = {
    "goldens": str,
    "baseline": str,
    "similarity": str,
    "regex_timeout_s": float,
    "min_pass_rate": float,
    "judge": dict,
    "bench": dict,
}


@dataclass(frozen=True, slots=True)
class Config:
    """Resolved settings.

    Attributes:
        root: the project root (where the config file is, else the working directory).
        goldens: the project's goldens folder.
        baseline: the committed baseline file.
        similarity: the tier 2 backend name.
        regex_timeout_s: time budget of one regex search.
        min_pass_rate: when set, a run whose pass rate is below it fails the gate (exit 2).
        judge: the [judge] block (the adapter's settings; ``verified`` among them).
        bench: the [bench] block (agent benchmark settings).
        source: the file the settings came from, if any.
    """

    root: Path
    goldens: Path
    baseline: Path
    similarity: str = "none"
    regex_timeout_s: float = 0.1
    min_pass_rate: float | None = None
    judge: Mapping[str, Any] = field(default_factory=dict)
    bench: Mapping[str, Any] = field(default_factory=dict)
    source: str | None = None


def _read_toml(path: Path) -> dict[str, Any]:
    import tomllib

    try:
        with open(path, "rb") as handle:
            return tomllib.load(handle)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"invalid TOML: {exc}", source=str(path)) from None
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"not valid UTF-8 (bad byte at offset {exc.start})", source=str(path)
        ) from None
    except OSError as exc:
        raise ConfigError(f"cannot read: {exc.strerror}", source=str(path)) from None


def _validate(raw: Mapping[str, Any], source: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in raw.items():
        kind = _KEYS.get(key)
        if kind is None:
            raise ConfigError(
                f"unknown setting (known: {', '.join(sorted(_KEYS))})", source=source, field=key
            )
        if kind is float:
            if (
                isinstance(value, bool)
                or not isinstance(value, int | float)
                or not math.isfinite(value)
            ):
                raise ConfigError("must be a number", source=source, field=key)
            value = float(value)
        elif not isinstance(value, kind):
            raise ConfigError(f"must be a {kind.__name__}", source=source, field=key)
        out[key] = value
    backend = out.get("similarity")
    if backend is not None and backend not in _SIMILARITY:
        raise ConfigError(
            f"unknown similarity backend {backend!r} (use one of {', '.join(_SIMILARITY)})",
            source=source,
            field="similarity",
        )
    rate = out.get("min_pass_rate")
    if rate is not None and not 0 <= rate <= 1:
        raise ConfigError("must be between 0 and 1", source=source, field="min_pass_rate")
    if out.get("regex_timeout_s", 1) <= 0:
        raise ConfigError("must be > 0", source=source, field="regex_timeout_s")
    return out


def load_config(root: Path | None = None) -> Config:
    """Read the configuration of the project at ``root`` (default: the working directory)."""
    root = Path.cwd() if root is None else root
    settings: dict[str, Any] = {}
    source: str | None = None
    toml = root / "assay.toml"
    pyproject = root / "pyproject.toml"
    if toml.is_file():
        source = str(toml)
        settings = _validate(_read_toml(toml), source)
    elif pyproject.is_file():
        tool = _read_toml(pyproject).get("tool", {})
        if not isinstance(tool, dict):
            raise ConfigError("[tool] must be a table", source=str(pyproject), field="tool")
        block = tool.get("assay")
        if block is not None:
            source = f"{pyproject} [tool.assay]"
            if not isinstance(block, dict):
                raise ConfigError("[tool.assay] must be a table", source=str(pyproject))
            settings = _validate(block, source)
    return Config(
        root=root,
        goldens=root / settings.get("goldens", DEFAULT_GOLDENS),
        baseline=root / settings.get("baseline", DEFAULT_BASELINE),
        similarity=settings.get("similarity", "none"),
        regex_timeout_s=settings.get("regex_timeout_s", 0.1),
        min_pass_rate=settings.get("min_pass_rate"),
        judge=settings.get("judge", {}),
        bench=settings.get("bench", {}),
        source=source,
    )
