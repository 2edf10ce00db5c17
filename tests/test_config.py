"""Project configuration: assay.toml, [tool.assay] in pyproject.toml, defaults, validation."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.config import DEFAULT_BASELINE, DEFAULT_GOLDENS, Config, load_config
from assay.errors import AssayError, ConfigError


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_defaults_when_no_file(tmp_path: Path) -> None:
    config = load_config(tmp_path)
    assert isinstance(config, Config)
    assert config.root == tmp_path
    assert config.goldens == tmp_path / "goldens"
    assert config.baseline == tmp_path / "assay-baseline.json"
    assert DEFAULT_GOLDENS == "goldens"
    assert DEFAULT_BASELINE == "assay-baseline.json"
    assert config.similarity == "none"
    assert config.regex_timeout_s == 0.1
    assert config.min_pass_rate is None
    assert dict(config.judge) == {}
    assert dict(config.bench) == {}
    assert config.source is None


def test_default_root_is_working_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path / "assay.toml", 'goldens = "cases"\n')
    monkeypatch.chdir(tmp_path)
    config = load_config()
    assert config.root == Path.cwd()
    assert config.goldens == Path.cwd() / "cases"


def test_assay_toml_values(tmp_path: Path) -> None:
    path = write(
        tmp_path / "assay.toml",
        'goldens = "evals/goldens"\n'
        'baseline = "ci/baseline.json"\n'
        'similarity = "difflib"\n'
        "regex_timeout_s = 0.5\n"
        "min_pass_rate = 0.75\n"
        '\n[judge]\nverified = false\nmodel = "x"\n'
        "\n[bench]\nruns = 3\n",
    )
    config = load_config(tmp_path)
    assert config.goldens == tmp_path / "evals" / "goldens"
    assert config.baseline == tmp_path / "ci" / "baseline.json"
    assert config.similarity == "difflib"
    assert config.regex_timeout_s == 0.5
    assert config.min_pass_rate == 0.75
    assert dict(config.judge) == {"verified": False, "model": "x"}
    assert dict(config.bench) == {"runs": 3}
    assert config.source == str(path)


def test_integer_numbers_become_floats(tmp_path: Path) -> None:
    write(tmp_path / "assay.toml", "regex_timeout_s = 2\nmin_pass_rate = 1\n")
    config = load_config(tmp_path)
    assert config.regex_timeout_s == 2.0
    assert isinstance(config.regex_timeout_s, float)
    assert config.min_pass_rate == 1.0
    assert isinstance(config.min_pass_rate, float)


def test_empty_assay_toml_is_defaults(tmp_path: Path) -> None:
    path = write(tmp_path / "assay.toml", "")
    config = load_config(tmp_path)
    assert config.goldens == tmp_path / "goldens"
    assert config.min_pass_rate is None
    assert config.source == str(path)


def test_pyproject_tool_assay(tmp_path: Path) -> None:
    path = write(
        tmp_path / "pyproject.toml",
        '[project]\nname = "demo"\n\n'
        "[tool.ruff]\nline-length = 100\n\n"
        '[tool.assay]\ngoldens = "tests/goldens"\nmin_pass_rate = 0.9\n',
    )
    config = load_config(tmp_path)
    assert config.goldens == tmp_path / "tests" / "goldens"
    assert config.min_pass_rate == 0.9
    assert config.source is not None
    assert str(path) in config.source


def test_pyproject_without_tool_assay_is_defaults(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", '[project]\nname = "demo"\n\n[tool.other]\nx = 1\n')
    config = load_config(tmp_path)
    assert config.goldens == tmp_path / "goldens"
    assert config.source is None


def test_assay_toml_wins_over_pyproject(tmp_path: Path) -> None:
    toml = write(tmp_path / "assay.toml", 'goldens = "from-assay-toml"\n')
    write(
        tmp_path / "pyproject.toml",
        '[tool.assay]\ngoldens = "from-pyproject"\nmin_pass_rate = 0.5\n',
    )
    config = load_config(tmp_path)
    assert config.goldens == tmp_path / "from-assay-toml"
    assert config.min_pass_rate is None
    assert config.source == str(toml)


def test_assay_toml_wins_even_over_broken_pyproject_block(tmp_path: Path) -> None:
    write(tmp_path / "assay.toml", 'goldens = "ok"\n')
    write(tmp_path / "pyproject.toml", "[tool.assay]\nnot_a_setting = 1\n")
    assert load_config(tmp_path).goldens == tmp_path / "ok"


def test_unknown_key_in_assay_toml(tmp_path: Path) -> None:
    path = write(tmp_path / "assay.toml", 'golden = "typo"\n')
    with pytest.raises(ConfigError) as excinfo:
        load_config(tmp_path)
    assert excinfo.value.field == "golden"
    assert str(path) in str(excinfo.value)
    assert "golden" in str(excinfo.value)


def test_unknown_key_in_pyproject(tmp_path: Path) -> None:
    path = write(tmp_path / "pyproject.toml", "[tool.assay]\nmin_passrate = 0.5\n")
    with pytest.raises(ConfigError) as excinfo:
        load_config(tmp_path)
    assert excinfo.value.field == "min_passrate"
    assert str(path) in str(excinfo.value)


@pytest.mark.parametrize(
    ("line", "field"),
    [
        ("goldens = 3", "goldens"),
        ("baseline = true", "baseline"),
        ('similarity = ["difflib"]', "similarity"),
        ('regex_timeout_s = "fast"', "regex_timeout_s"),
        ("min_pass_rate = true", "min_pass_rate"),
        ('min_pass_rate = "0.9"', "min_pass_rate"),
        ("min_pass_rate = nan", "min_pass_rate"),
        ("regex_timeout_s = inf", "regex_timeout_s"),
        ('judge = "openai"', "judge"),
        ("bench = 1", "bench"),
    ],
)
def test_wrong_types(tmp_path: Path, line: str, field: str) -> None:
    path = write(tmp_path / "assay.toml", line + "\n")
    with pytest.raises(ConfigError) as excinfo:
        load_config(tmp_path)
    assert excinfo.value.field == field
    assert str(path) in str(excinfo.value)


def test_wrong_type_in_pyproject(tmp_path: Path) -> None:
    path = write(tmp_path / "pyproject.toml", "[tool.assay]\nbaseline = 5\n")
    with pytest.raises(ConfigError) as excinfo:
        load_config(tmp_path)
    assert excinfo.value.field == "baseline"
    assert str(path) in str(excinfo.value)


@pytest.mark.parametrize("value", ["1.5", "-0.1", "2"])
def test_min_pass_rate_out_of_range(tmp_path: Path, value: str) -> None:
    path = write(tmp_path / "assay.toml", f"min_pass_rate = {value}\n")
    with pytest.raises(ConfigError) as excinfo:
        load_config(tmp_path)
    assert excinfo.value.field == "min_pass_rate"
    assert str(path) in str(excinfo.value)


@pytest.mark.parametrize("value", ["0", "0.0", "1", "1.0", "0.5"])
def test_min_pass_rate_bounds_accepted(tmp_path: Path, value: str) -> None:
    write(tmp_path / "assay.toml", f"min_pass_rate = {value}\n")
    assert load_config(tmp_path).min_pass_rate == float(value)


@pytest.mark.parametrize("value", ["0", "-1"])
def test_regex_timeout_must_be_positive(tmp_path: Path, value: str) -> None:
    path = write(tmp_path / "assay.toml", f"regex_timeout_s = {value}\n")
    with pytest.raises(ConfigError) as excinfo:
        load_config(tmp_path)
    assert excinfo.value.field == "regex_timeout_s"
    assert str(path) in str(excinfo.value)


def test_invalid_toml_names_file(tmp_path: Path) -> None:
    path = write(tmp_path / "assay.toml", 'goldens = "unclosed\n')
    with pytest.raises(ConfigError) as excinfo:
        load_config(tmp_path)
    assert str(path) in str(excinfo.value)
    assert "TOML" in str(excinfo.value)


def test_invalid_pyproject_toml_names_file(tmp_path: Path) -> None:
    path = write(tmp_path / "pyproject.toml", "[tool.assay\ngoldens = 'x'\n")
    with pytest.raises(ConfigError) as excinfo:
        load_config(tmp_path)
    assert str(path) in str(excinfo.value)


def test_non_utf8_assay_toml(tmp_path: Path) -> None:
    path = tmp_path / "assay.toml"
    path.write_bytes(b'goldens = "caf\xe9"\n')
    with pytest.raises(ConfigError) as excinfo:
        load_config(tmp_path)
    assert str(path) in str(excinfo.value)


def test_tool_assay_not_a_table(tmp_path: Path) -> None:
    path = write(tmp_path / "pyproject.toml", '[tool]\nassay = "yes"\n')
    with pytest.raises(ConfigError) as excinfo:
        load_config(tmp_path)
    assert str(path) in str(excinfo.value)


def test_tool_not_a_table_in_pyproject(tmp_path: Path) -> None:
    # `tool` should be a table; a malformed pyproject must be a ConfigError, not a crash
    path = write(tmp_path / "pyproject.toml", 'tool = "oops"\n')
    with pytest.raises(ConfigError) as excinfo:
        load_config(tmp_path)
    assert str(path) in str(excinfo.value)


def test_assay_toml_folder_is_not_a_config_file(tmp_path: Path) -> None:
    (tmp_path / "assay.toml").mkdir()
    # not a file: there is no assay.toml config; defaults apply
    config = load_config(tmp_path)
    assert config.source is None


def test_config_is_frozen(tmp_path: Path) -> None:
    config = load_config(tmp_path)
    with pytest.raises(AttributeError):
        config.goldens = tmp_path  # type: ignore[misc]


def test_config_error_is_assay_error() -> None:
    assert issubclass(ConfigError, AssayError)
