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


class ConfigError(ValueError):
    """A configuration that cannot be used; the message names the key."""


def load_config(path: str | Path, environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The configuration: DEFAULTS, then the file's [server] table, then INGEST_* variables.

    Raises:
        ConfigError: unreadable TOML, an unknown key, a bad value (naming the key).
    """
    # 1. The file (missing: the defaults).
    config = dict(DEFAULTS)
    path = Path(path)
    if path.exists():
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
    # 2. The environment.
    environ = os.environ if environ is None else environ
    for key in DEFAULTS:
        name = ENV_PREFIX + key.upper()
        if name not in environ:
            continue
        raw = environ[name].strip()
        if key in ("port", "workers"):
            try:
                config[key] = int(raw)
            except ValueError:
                raise ConfigError(f"{name} must be an integer, not {raw!r}") from None
        elif key == "debug":
            if raw.lower() in ("1", "true", "yes"):
                config[key] = True
            elif raw.lower() in ("0", "false", "no"):
                config[key] = False
            else:
                raise ConfigError(f"{name} must be a boolean, not {raw!r}")
        else:
            config[key] = raw
    # 3. Validation.
    if not isinstance(config["host"], str) or not config["host"]:
        raise ConfigError("host must be a non-empty string")
    for key in ("port", "workers"):
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
