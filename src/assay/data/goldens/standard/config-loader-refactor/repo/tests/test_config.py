import pytest

from src.config import DEFAULTS, ConfigError, load_config


@pytest.fixture
def toml(tmp_path):
    def write(text):
        path = tmp_path / "ingest.toml"
        path.write_text(text, encoding="utf-8")
        return path

    return write


def test_missing_file_means_defaults(tmp_path):
    assert load_config(tmp_path / "none.toml", environ={}) == DEFAULTS


def test_file_values_override_defaults(toml):
    path = toml('[server]\nport = 9000\nlog_level = "debug"\n')
    assert load_config(path, environ={}) == {**DEFAULTS, "port": 9000, "log_level": "debug"}


def test_environment_overrides_the_file(toml):
    path = toml("[server]\nport = 9000\nworkers = 4\n")
    env = {"INGEST_PORT": " 9100 ", "INGEST_DEBUG": "yes", "INGEST_HOST": "0.0.0.0"}
    config = load_config(path, environ=env)
    assert config == {**DEFAULTS, "port": 9100, "workers": 4, "debug": True, "host": "0.0.0.0"}


@pytest.mark.parametrize(
    ("text", "env", "message"),
    [
        ("[server]\nport = 70000\n", {}, "port must be between 1 and 65535"),
        ("[server]\nworkers = 0\n", {}, "workers must be at least 1"),
        ('[server]\nlog_level = "loud"\n', {}, "log_level must be one of"),
        ('[server]\ncolour = "red"\n', {}, "unknown key 'colour'"),
        ("[server\n", {}, "not valid TOML"),
        ('server = "x"\n', {}, "[server] must be a table"),
        ('[server]\nport = "80"\n', {}, "port must be an integer"),
        ("", {"INGEST_WORKERS": "many"}, "INGEST_WORKERS must be an integer"),
        ("", {"INGEST_DEBUG": "maybe"}, "INGEST_DEBUG must be a boolean"),
        ("", {"INGEST_HOST": " "}, "host must be a non-empty string"),
        ("[server]\ndebug = 1\n", {}, "debug must be true or false"),
    ],
)
def test_bad_configuration_names_the_key(toml, text, env, message):
    with pytest.raises(ConfigError, match=message.replace("[", r"\[")):
        load_config(toml(text), environ=env)
