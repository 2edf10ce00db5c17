"""The three steps of load_config(), each usable on its own."""

import pytest

from src.config import DEFAULTS, ConfigError


def test_read_config_file_merges_the_server_table_onto_defaults(tmp_path):
    from src.config import read_config_file

    path = tmp_path / "ingest.toml"
    path.write_text("[server]\nworkers = 8\n", encoding="utf-8")
    assert read_config_file(path) == {**DEFAULTS, "workers": 8}
    assert read_config_file(tmp_path / "none.toml") == DEFAULTS


def test_apply_env_overrides_converts_types_without_validating():
    from src.config import apply_env_overrides

    config = apply_env_overrides(dict(DEFAULTS), {"INGEST_PORT": "0", "INGEST_DEBUG": "no"})
    assert config == {**DEFAULTS, "port": 0, "debug": False}
    with pytest.raises(ConfigError, match="INGEST_PORT must be an integer"):
        apply_env_overrides(dict(DEFAULTS), {"INGEST_PORT": "http"})


def test_validate_config_returns_a_valid_config_and_rejects_a_bad_one():
    from src.config import validate_config

    assert validate_config(dict(DEFAULTS)) == DEFAULTS
    with pytest.raises(ConfigError, match="port must be between"):
        validate_config({**DEFAULTS, "port": 0})
