#!/usr/bin/env bash
# Reference solution: load_config() becomes read_config_file() -> apply_env_overrides() ->
# validate_config(), the same checks and messages in the same order; tests untouched.
set -euo pipefail
cat > src/config.py <<'PY'
"""The server's configuration: a TOML file, environment overrides, validation."""

import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

DEFAULTS: dict[str, Any] = {
    "host": "127.0.0.1",
    "port": 8080,
    "workers": 2,
    "log_level": "info",
    "debug": False,
}
LOG_LEVELS = ("debug", "info", "warning", "error")
ENV_PREFIX = "INGEST_"
_INTEGERS = ("port", "workers")
_TRUE = ("1", "true", "yes")
_FALSE = ("0", "false", "no")


class ConfigError(ValueError):
    """A configuration that cannot be used; the message names the key."""


def load_config(path: str | Path, environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The configuration: DEFAULTS, then the file's [server] table, then INGEST_* variables.

    Raises:
        ConfigError: unreadable TOML, an unknown key, a bad value (naming the key).
    """
    config = read_config_file(path)
    config = apply_env_overrides(config, os.environ if environ is None else environ)
    return validate_config(config)


def read_config_file(path: str | Path) -> dict[str, Any]:
    """DEFAULTS updated with the file's [server] table (a missing file: the defaults)."""
    config = dict(DEFAULTS)
    path = Path(path)
    if not path.exists():
        return config
    try:
        with path.open("rb") as handle:
            document = tomllib.load(handle)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML ({exc})") from None
    server = document.get("server", {})
    if not isinstance(server, dict):
        raise ConfigError(f"{path}: [server] must be a table")
    for key, value in server.items():
        if key not in DEFAULTS:
            raise ConfigError(f"unknown key {key!r}")
        config[key] = value
    return config


def apply_env_overrides(config: Mapping[str, Any], environ: Mapping[str, str]) -> dict[str, Any]:
    """``config`` with each INGEST_<KEY> variable's value, converted to the key's type."""
    out = dict(config)
    for key in DEFAULTS:
        name = ENV_PREFIX + key.upper()
        if name in environ:
            out[key] = _env_value(key, name, environ[name].strip())
    return out


def _env_value(key: str, name: str, raw: str) -> Any:
    if key in _INTEGERS:
        try:
            return int(raw)
        except ValueError:
            raise ConfigError(f"{name} must be an integer, not {raw!r}") from None
    if key == "debug":
        if raw.lower() in _TRUE:
            return True
        if raw.lower() in _FALSE:
            return False
        raise ConfigError(f"{name} must be a boolean, not {raw!r}")
    return raw


def validate_config(config: dict[str, Any]) -> dict[str, Any]:
    """``config`` itself when every value is valid.

    Raises:
        ConfigError: the first bad value, naming its key.
    """
    if not isinstance(config["host"], str) or not config["host"]:
        raise ConfigError("host must be a non-empty string")
    for key in _INTEGERS:
        if not isinstance(config[key], int) or isinstance(config[key], bool):
            raise ConfigError(f"{key} must be an integer")
    if not 1 <= config["port"] <= 65535:
        raise ConfigError(f"port must be between 1 and 65535, not {config['port']}")
    if config["workers"] < 1:
        raise ConfigError(f"workers must be at least 1, not {config['workers']}")
    if config["log_level"] not in LOG_LEVELS:
        raise ConfigError(f"log_level must be one of {', '.join(LOG_LEVELS)}")
    if not isinstance(config["debug"], bool):
        raise ConfigError("debug must be true or false")
    return config
PY
echo "Split load_config() into read_config_file(), apply_env_overrides() and validate_config(); tests unchanged."
