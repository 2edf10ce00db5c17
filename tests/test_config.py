"""Project configuration: assay.toml, [tool.assay] in pyproject.toml, defaults, validation."""

from __future__ import annotations

from pathlib import Path

import pytest

import assay
from assay.config import (
    DEFAULT_BASELINE,
    DEFAULT_GOLDENS,
    Config,
    JudgeSettings,
    load_config,
)
from assay.errors import AssayError, ConfigError
from assay.models import ProviderConfig


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
    assert config.judge == JudgeSettings()
    assert config.judge == JudgeSettings(False, None, None, None)
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
        '\n[judge]\nverified = false\nrubric_prompt = "Grade {{ output }}"\n'
        "\n[bench]\ncost_baseline_usd = 1\n",
    )
    config = load_config(tmp_path)
    assert config.goldens == tmp_path / "evals" / "goldens"
    assert config.baseline == tmp_path / "ci" / "baseline.json"
    assert config.similarity == "difflib"
    assert config.regex_timeout_s == 0.5
    assert config.min_pass_rate == 0.75
    assert config.judge == JudgeSettings(False, None, "Grade {{ output }}", str(path))
    assert dict(config.bench) == {"cost_baseline_usd": 1.0}
    assert isinstance(config.bench["cost_baseline_usd"], float)
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


def test_an_assay_toml_saved_with_a_bom_reads_as_without(tmp_path: Path) -> None:
    # Windows editors write one; every other file assay reads drops it, so does the config.
    (tmp_path / "assay.toml").write_bytes(b"\xef\xbb\xbfkeep_runs = 7\n")
    assert load_config(tmp_path).keep_runs == 7


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


# ------------------------------------------------------------------------------ the messages


@pytest.mark.parametrize(
    ("text", "field", "message"),
    [
        ("min_pass_rate = 1.5", "min_pass_rate", "must be a number between 0 and 1"),
        ("min_pass_rate = true", "min_pass_rate", "must be a number between 0 and 1"),
        ("min_pass_rate = nan", "min_pass_rate", "must be a number between 0 and 1"),
        ("regex_timeout_s = 0", "regex_timeout_s", "must be a number > 0"),
        ("regex_timeout_s = inf", "regex_timeout_s", "must be a number > 0"),
        ("goldens = 3", "goldens", "must be a string"),
        ("judge = 1", "judge", "must be a table"),
        (
            "golden = 'x'",
            "golden",
            "unknown setting (known: agents, attestations, baseline, bench, gate, goldens, judge, "
            "keep_outputs, keep_runs, min_pass_rate, regex_timeout_s, schemas, similarity, "
            "strict): "
            "did you mean 'goldens'?",
        ),
    ],
)
def test_messages_come_from_the_one_validator(
    tmp_path: Path, text: str, field: str, message: str
) -> None:
    path = write(tmp_path / "assay.toml", text + "\n")
    with pytest.raises(ConfigError) as excinfo:
        load_config(tmp_path)
    assert excinfo.value.field == field
    assert excinfo.value.message == message
    assert excinfo.value.source == str(path)
    assert str(excinfo.value) == f"{path}:1: field '{field}': {message}"


# ---------------------------------------------------------------------------- [judge]


def test_judge_block_is_validated_settings(tmp_path: Path) -> None:
    path = write(
        tmp_path / "assay.toml",
        "[judge]\nverified = true\nrubric_prompt = 'Grade it'\n\n"
        "[judge.provider]\ntype = 'openai'\nbase_url = 'http://127.0.0.1:9/v1'\nmodel = 'm'\n"
        "timeout_s = 5\nmax_retries = 1\n",
    )
    judge = load_config(tmp_path).judge
    assert isinstance(judge, JudgeSettings)
    assert judge.verified is True
    assert judge.rubric_prompt == "Grade it"
    assert judge.source == str(path)
    assert judge.provider == ProviderConfig(
        type="openai", base_url="http://127.0.0.1:9/v1", model="m", timeout_s=5.0, max_retries=1
    )
    assert isinstance(judge.provider.timeout_s, float)


def test_judge_without_provider(tmp_path: Path) -> None:
    path = write(tmp_path / "assay.toml", "[judge]\nverified = true\n")
    assert load_config(tmp_path).judge == JudgeSettings(True, None, None, str(path))


def test_judge_settings_default_to_the_config_file(tmp_path: Path) -> None:
    path = write(tmp_path / "assay.toml", 'goldens = "g"\n')
    assert load_config(tmp_path).judge == JudgeSettings(source=str(path))


def test_judge_settings_are_frozen_and_exported(tmp_path: Path) -> None:
    assert assay.JudgeSettings is JudgeSettings
    judge = load_config(tmp_path).judge
    with pytest.raises(AttributeError):
        judge.verified = True  # type: ignore[misc]


@pytest.mark.parametrize(
    ("block", "field", "message"),
    [
        (
            "[judge]\nmodel = 'x'",
            "judge.model",
            "unknown setting (known: provider, rubric_prompt, structured, verified)",
        ),
        ("[judge]\nverified = 'yes'", "judge.verified", "must be true or false"),
        ("[judge]\nverified = 1", "judge.verified", "must be true or false"),
        ("[judge]\nrubric_prompt = 3", "judge.rubric_prompt", "must be a string"),
        ("[judge]\nprovider = 'openai'", "judge.provider", "must be a table"),
        ("[judge.provider]\ntype = 'gpt'", "judge.provider.type", "provider type must be one of"),
        ("[judge.provider]\nmodel = 'm'", "judge.provider.type", "provider type must be one of"),
        (
            "[judge.provider]\ntype = 'echo'\ncolour = 1",
            "judge.provider.colour",
            "unknown provider setting (known: ",
        ),
        (
            "[judge.provider]\ntype = 'command'",
            "judge.provider.command",
            "the command provider needs 'command'",
        ),
        (
            "[judge.provider]\ntype = 'echo'\ntimeout_s = 0",
            "judge.provider.timeout_s",
            "must be a number > 0",
        ),
        (
            "[judge.provider]\ntype = 'echo'\ntimeout_s = nan",
            "judge.provider.timeout_s",
            "must be a number",
        ),
        (
            "[judge.provider]\ntype = 'echo'\nmax_retries = -1",
            "judge.provider.max_retries",
            "must be an integer >= 0",
        ),
        (
            "[judge.provider]\ntype = 'echo'\nmax_retries = 1.5",
            "judge.provider.max_retries",
            "must be an integer",
        ),
        (
            "[judge.provider]\ntype = 'echo'\nmax_concurrency = 0",
            "judge.provider.max_concurrency",
            "must be an integer >= 1",
        ),
        ("[judge.provider]\ntype = 'echo'\nmodel = 3", "judge.provider.model", "must be a string"),
    ],
)
def test_bad_judge_block_is_an_error_at_load(
    tmp_path: Path, block: str, field: str, message: str
) -> None:
    path = write(tmp_path / "assay.toml", block + "\n")
    with pytest.raises(ConfigError) as excinfo:
        load_config(tmp_path)
    assert excinfo.value.source == str(path)
    assert excinfo.value.field == field
    assert excinfo.value.message.startswith(message)
    assert str(excinfo.value).startswith(f"{path}:{excinfo.value.line}: field '{field}': ")


# ---------------------------------------------------------------------------- [bench]


def test_bench_block_is_a_dict_of_floats(tmp_path: Path) -> None:
    write(tmp_path / "assay.toml", "[bench]\ncost_baseline_usd = 2\nduration_baseline_s = 90.5\n")
    bench = load_config(tmp_path).bench
    assert dict(bench) == {"cost_baseline_usd": 2.0, "duration_baseline_s": 90.5}
    assert all(isinstance(v, float) for v in bench.values())


def test_bench_keeps_only_the_keys_given(tmp_path: Path) -> None:
    write(tmp_path / "assay.toml", "[bench]\nduration_baseline_s = 60\n")
    assert dict(load_config(tmp_path).bench) == {"duration_baseline_s": 60.0}


@pytest.mark.parametrize(
    ("line", "field", "message"),
    [
        (
            "runs = 3",
            "bench.runs",
            "unknown setting (known: cost_baseline_usd, duration_baseline_s)",
        ),
        ("cost_baseline_usd = 0", "bench.cost_baseline_usd", "must be a number > 0"),
        ("cost_baseline_usd = -1", "bench.cost_baseline_usd", "must be a number > 0"),
        ("cost_baseline_usd = true", "bench.cost_baseline_usd", "must be a number > 0"),
        ("duration_baseline_s = '60'", "bench.duration_baseline_s", "must be a number > 0"),
        ("duration_baseline_s = inf", "bench.duration_baseline_s", "must be a number > 0"),
        ("duration_baseline_s = nan", "bench.duration_baseline_s", "must be a number > 0"),
    ],
)
def test_bad_bench_value(tmp_path: Path, line: str, field: str, message: str) -> None:
    path = write(tmp_path / "assay.toml", f"[bench]\n{line}\n")
    with pytest.raises(ConfigError) as excinfo:
        load_config(tmp_path)
    assert (excinfo.value.source, excinfo.value.field, excinfo.value.message) == (
        str(path),
        field,
        message,
    )


# ------------------------------------------------------------- errors from [tool.assay]


@pytest.mark.parametrize(
    ("block", "field", "message"),
    [
        ("min_pass_rate = 2", "min_pass_rate", "must be a number between 0 and 1"),
        ("regex_timeout_s = -1", "regex_timeout_s", "must be a number > 0"),
        ("similarity = 'nope'", "similarity", "unknown similarity backend"),
        ("typo = 1", "typo", "unknown setting (known: "),
        ("[tool.assay.judge]\nverified = 'no'", "judge.verified", "must be true or false"),
        ("[tool.assay.judge]\nmodel = 'm'", "judge.model", "unknown setting"),
        ("[tool.assay.judge.provider]\ntype = 'gpt'", "judge.provider.type", "provider type"),
        (
            "[tool.assay.judge.provider]\ntype = 'python'",
            "judge.provider.function",
            "needs 'function'",
        ),
        ("[tool.assay.bench]\ncost_baseline_usd = 0", "bench.cost_baseline_usd", "> 0"),
        ("[tool.assay.bench]\nruns = 1", "bench.runs", "unknown setting"),
    ],
)
def test_errors_from_pyproject_name_that_file(
    tmp_path: Path, block: str, field: str, message: str
) -> None:
    # Settings directly under [tool.assay], or in its sub-tables.
    header = "" if block.startswith("[") else "[tool.assay]\n"
    path = write(tmp_path / "pyproject.toml", f'[project]\nname = "demo"\n\n{header}{block}\n')
    with pytest.raises(ConfigError) as excinfo:
        load_config(tmp_path)
    error = excinfo.value
    assert error.source is not None and error.source.startswith(str(path))
    assert "[tool.assay]" in error.source
    assert error.field == field
    assert message in error.message
    assert str(path) in str(error) and f"field '{field}'" in str(error)


def test_pyproject_judge_and_bench(tmp_path: Path) -> None:
    path = write(
        tmp_path / "pyproject.toml",
        "[tool.assay.judge]\nverified = true\n\n"
        "[tool.assay.judge.provider]\ntype = 'echo'\n\n"
        "[tool.assay.bench]\ncost_baseline_usd = 0.25\n",
    )
    config = load_config(tmp_path)
    assert config.judge.verified is True
    assert config.judge.provider == ProviderConfig(type="echo")
    assert config.judge.source == config.source
    assert config.source is not None and str(path) in config.source
    assert dict(config.bench) == {"cost_baseline_usd": 0.25}


def test_the_contracts_example_config_is_valid(tmp_path: Path) -> None:
    # docs/configuration.md shows every key in one assay.toml; it must load as written.
    text = (Path(__file__).parents[1] / "docs" / "configuration.md").read_text(encoding="utf-8")
    block = text.split("```toml\n", 1)[1].split("```", 1)[0]
    assert "strict" in block and "[schemas]" in block
    write(tmp_path / "assay.toml", block)
    config = load_config(tmp_path)
    assert config.strict is False
    assert config.schemas == {
        "https://example.com/address.json": tmp_path / "schemas" / "address.json"
    }


@pytest.mark.parametrize(
    ("text", "field", "message"),
    [
        ("[gate]\nalpha = 0\n", "gate.alpha", "must be a number > 0 and <= 1"),
        ("[gate]\nalpha = 1.5\n", "gate.alpha", "must be a number > 0 and <= 1"),
        (
            "[gate]\nmax_error_rate = -0.1\n",
            "gate.max_error_rate",
            "must be a number between 0 and 1",
        ),
        ("[gate]\nmax_repeats = 0\n", "gate.max_repeats", "must be an integer >= 1"),
        ("[gate]\nmax_repeats = 2.5\n", "gate.max_repeats", "must be an integer"),
        ("[gate]\nalpah = 0.1\n", "gate.alpah", None),
        (
            "min_pass_rate = 0.5\n[gate]\nmin_pass_rate = 0.6\n",
            "gate.min_pass_rate",
            "give min_pass_rate once: at the top level or in [gate], not both",
        ),
    ],
)
def test_the_gate_block_is_validated(
    tmp_path: Path, text: str, field: str, message: str | None
) -> None:
    write(tmp_path / "assay.toml", text)
    with pytest.raises(ConfigError) as excinfo:
        load_config(tmp_path)
    assert excinfo.value.field == field
    if message is not None:
        assert excinfo.value.message == message


def test_the_gate_block_and_its_alias() -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        write(root / "assay.toml", "[gate]\nalpha = 0.01\nmin_pass_rate = 0.7\nmax_repeats = 9\n")
        config = load_config(root)
        assert (config.gate.alpha, config.gate.max_repeats) == (0.01, 9)
        assert config.min_pass_rate == config.gate.min_pass_rate == 0.7
        write(root / "assay.toml", "min_pass_rate = 0.4\n")
        assert load_config(root).gate.min_pass_rate == 0.4
