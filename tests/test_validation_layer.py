"""The one validation layer (assay.validate): every format it checks says what is wrong in one
line, ``FILE:LINE: field 'x.y': problem`` (the line where the format has lines), and names the
near miss of a misspelt key. One section per format: config (assay.toml and [tool.assay]), the
candidates file, golden frontmatter (and a folder's _defaults.yaml), telemetry, the seal's
isolation; then the layer's own pieces."""

from __future__ import annotations

import ast
import dataclasses
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from assay import validate as v
from assay.agent import load_telemetry, parse_record
from assay.attest._seal import isolation_field
from assay.config import AgentSettings, GateSettings, load_config
from assay.errors import AssayError, ConfigError, GoldenError, TelemetryError
from assay.goldens import iter_goldens
from assay.models import ProviderConfig
from assay.models._candidates_file import _PROVIDER, load_candidates_file

SRC = Path(__file__).parents[1] / "src" / "assay"


def one_line(error: AssayError, file: str | Path, line: int | None, field: str | None) -> str:
    """The error's text, checked to be the one line naming ``file``, ``line`` and ``field``."""
    text = str(error)
    where = f"{file}:{line}: " if line is not None else f"{file}: " if file else ""
    assert "\n" not in text
    assert (error.field, error.line) == (field, line), text
    assert text.startswith(where + (f"field '{field}': " if field else "")), text
    return text


# ---------------------------------------------------------------------------------- config


def config_error(tmp_path: Path, text: str, name: str = "assay.toml") -> ConfigError:
    (tmp_path / name).write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_config(tmp_path)
    return info.value


@pytest.mark.parametrize(
    ("text", "line", "field", "says"),
    [
        ('goldens = "g"\n[gate]\nalpha = "x"\n', 3, "gate.alpha", "must be a number > 0 and <= 1"),
        ("keep_runs = 1.5\n", 1, "keep_runs", "must be an integer"),
        ("[judge]\nverified = 1\n", 2, "judge.verified", "must be true or false"),
        ("[agents.mine]\ncommand = 'x'\nenv = 'KEY'\n", 3, "agents.mine.env", "must be a list"),
        ('[schemas]\n"https://x/a.json" = 3\n', 2, 'schemas."https://x/a.json"', "must be a str"),
        (
            "[judge.provider]\ntype = 'echo'\ntimeout_s = 0\n",
            3,
            "judge.provider.timeout_s",
            "must be a number > 0",
        ),
        ("[judge]\nprovider = {type = 'gpt'}\n", 2, "judge.provider.type", "provider type must"),
    ],
)
def test_a_bad_config_value_names_file_line_and_field(
    tmp_path: Path, text: str, line: int, field: str, says: str
) -> None:
    error = config_error(tmp_path, text)
    assert says in one_line(error, tmp_path / "assay.toml", line, field)
    assert error.source == str(tmp_path / "assay.toml")  # the file alone; the line apart


def test_a_missing_required_config_field_names_its_table(tmp_path: Path) -> None:
    error = config_error(tmp_path, 'goldens = "g"\n\n[agents.mine]\njournal = false\n')
    text = one_line(error, tmp_path / "assay.toml", 3, "agents.mine.command")
    assert text.endswith("an agent needs a command")


@pytest.mark.parametrize(
    ("text", "line", "field", "meant"),
    [
        (
            "[judge.provider]\ntype = 'echo'\ntemprature = 0.5\n",
            3,
            "judge.provider.temprature",
            "temperature",
        ),
        ('golden = "cases"\n', 1, "golden", "goldens"),
        ("[gate]\nalpah = 0.1\n", 2, "gate.alpah", "alpha"),
        ("[bench]\ncost_baseline = 1\n", 2, "bench.cost_baseline", "cost_baseline_usd"),
        ("[agents.a]\ncommand = 'x'\nallow-read = []\n", 3, "agents.a.allow-read", "allow_read"),
        ("[judge]\nverifed = true\n", 2, "judge.verifed", "verified"),
    ],
)
def test_an_unknown_config_key_names_its_near_miss(
    tmp_path: Path, text: str, line: int, field: str, meant: str
) -> None:
    error = config_error(tmp_path, text)
    text_ = one_line(error, tmp_path / "assay.toml", line, field)
    assert "unknown" in text_ and text_.endswith(f": did you mean {meant!r}?")


def test_a_key_near_nothing_lists_the_known_ones_without_a_guess(tmp_path: Path) -> None:
    error = config_error(tmp_path, "[bench]\nruns = 3\n")
    assert error.message == "unknown setting (known: cost_baseline_usd, duration_baseline_s)"


def test_pyproject_errors_put_the_line_with_the_file(tmp_path: Path) -> None:
    text = '[project]\nname = "x"\n\n[tool.assay.judge]\nverified = "no"\n'
    error = config_error(tmp_path, text, "pyproject.toml")
    path = tmp_path / "pyproject.toml"
    assert error.source == f"{path} [tool.assay]"
    assert str(error) == f"{path}:5 [tool.assay]: field 'judge.verified': must be true or false"


# ------------------------------------------------------------------------- candidates file


def candidates_error(tmp_path: Path, text: str) -> ConfigError:
    path = tmp_path / "cands.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_candidates_file(path)
    assert info.value.source == str(path)
    return info.value


CANDIDATE = "candidates:\n  - {id: a, prompt: 'Say {{ input }}'}\n"
ONE = "provider: {type: echo}\ncandidates:\n  - id: a\n"  # then the candidate's other keys


@pytest.mark.parametrize(
    ("text", "line", "field", "says"),
    [
        (
            "provider: {type: echo}\nrepeats: two\n" + CANDIDATE,
            2,
            "repeats",
            "must be an integer >= 1",
        ),
        (
            ONE + "    prompt: 3\n",
            4,
            "candidates[0].prompt",
            "a non-empty prompt template is required",
        ),
        (
            "provider:\n  type: echo\n  max_retries: -1\n" + CANDIDATE,
            3,
            "provider.max_retries",
            "must be an integer >= 0",
        ),
        (
            ONE + "    prompt: x\n    provider:\n      top_p: 2\n",
            6,
            "candidates[0].provider.top_p",
            "must be a number between 0 and 1",
        ),
        (
            ONE + "    messages:\n      - {role: robot, content: x}\n",
            5,
            "candidates[0].messages[0].role",
            "must be one of system, user, assistant",
        ),
    ],
)
def test_a_bad_candidates_value_names_file_line_and_field(
    tmp_path: Path, text: str, line: int, field: str, says: str
) -> None:
    error = candidates_error(tmp_path, text)
    assert one_line(error, tmp_path / "cands.yaml", line, field).endswith(says)


@pytest.mark.parametrize(
    ("text", "line", "field", "says"),
    [
        (CANDIDATE, None, "provider", "a provider mapping is required"),
        (
            "provider: {type: echo}\ncandidates:\n  - prompt: x\n",
            3,
            "candidates[0].id",
            "a non-empty string id is required",
        ),
        (
            "provider: {type: command}\n" + CANDIDATE,
            1,
            "provider.command",
            "the command provider needs 'command'",
        ),
    ],
)
def test_a_missing_candidates_field_is_named(
    tmp_path: Path, text: str, line: int | None, field: str, says: str
) -> None:
    error = candidates_error(tmp_path, text)
    assert one_line(error, tmp_path / "cands.yaml", line, field).endswith(says)


@pytest.mark.parametrize(
    ("text", "line", "field", "meant"),
    [
        (
            "provider:\n  type: echo\n  temprature: 0.5\n" + CANDIDATE,
            3,
            "provider.temprature",
            "temperature",
        ),
        (
            ONE + "    promt: x\n",
            4,
            "candidates[0].promt",
            "prompt",
        ),
        ("provider: {type: echo}\nprompts:\n  - {id: a, prompt: x}\n", 2, "prompts", "candidates"),
        ("providers: {type: echo}\n" + CANDIDATE, 1, "providers", "provider"),
        ("provider: {type: echo}\nrepeat: 2\n" + CANDIDATE, 2, "repeat", "repeats"),
        (
            ONE + "    messages:\n      - {role: user, contnet: x}\n",
            5,
            "candidates[0].messages[0].contnet",
            "content",
        ),
    ],
)
def test_an_unknown_candidates_key_names_its_near_miss(
    tmp_path: Path, text: str, line: int, field: str, meant: str
) -> None:
    error = candidates_error(tmp_path, text)
    text_ = one_line(error, tmp_path / "cands.yaml", line, field)
    assert "unknown" in text_ and text_.endswith(f": did you mean {meant!r}?")


def test_the_provider_table_declares_every_provider_config_field() -> None:
    assert set(_PROVIDER.fields) == {f.name for f in dataclasses.fields(ProviderConfig)}


# ------------------------------------------------------------------------ golden frontmatter


def golden_error(tmp_path: Path, name: str, text: str) -> GoldenError:
    folder = tmp_path / "goldens"
    folder.mkdir(exist_ok=True)
    (folder / name).write_text(text, encoding="utf-8")
    with pytest.raises(GoldenError) as info:
        list(iter_goldens(folder))
    return info.value


@pytest.mark.parametrize(
    ("name", "text", "line", "field", "says"),
    [
        ("g.md", "---\nid: g\ntitle: 3\n---\n", 3, "title", "title must be a string"),
        (
            "g.md",
            "---\nid: g\nmax_cost_usd: -1\n---\n",
            3,
            "max_cost_usd",
            "max_cost_usd must be a number >= 0",
        ),
        (
            "g.md",
            "---\nid: g\ngate: always\n---\n",
            3,
            "gate",
            "unknown gate rule 'always' (use strict, statistical)",
        ),
        (
            "g.md",
            "---\nid: g\nthreshold: 2\n---\n",
            3,
            "threshold",
            "threshold must be a number between 0 and 1",
        ),
        (
            "l.yaml",
            "- id: a\n  input: q\n- id: b\n  tier: hard\n",
            4,
            "tier",
            "unknown tier 'hard'",
        ),
        ("l.yaml", "- id: a\n- input: q\n", 2, "id", "a golden needs a non-empty string id"),
    ],
)
def test_a_bad_golden_field_names_file_line_and_field(
    tmp_path: Path, name: str, text: str, line: int, field: str, says: str
) -> None:
    error = golden_error(tmp_path, name, text)
    path = tmp_path / "goldens" / name
    # Goldens carry the line in their source (``file:line``), as they always have.
    assert error.source == f"{path}:{line}"
    assert str(error) == f"{path}:{line}: field '{field}': " + error.message
    assert says in error.message and "\n" not in str(error)


@pytest.mark.parametrize(
    ("name", "text", "line", "field", "meant"),
    [
        ("g.md", "---\nid: g\nassert:\n  - contains: x\n---\n", 3, "assert", "asserts"),
        ("g.md", "---\nid: g\nthreshhold: 0.5\n---\n", 3, "threshhold", "threshold"),
        ("l.yaml", "- id: a\n  expect: x\n", 2, "expect", "expected"),
        ("_defaults.yaml", "assert:\n  - is-json\n", 1, "assert", "asserts"),
    ],
)
def test_an_unknown_golden_key_names_its_near_miss(
    tmp_path: Path, name: str, text: str, line: int, field: str, meant: str
) -> None:
    error = golden_error(tmp_path, name, text)
    assert error.source == f"{tmp_path / 'goldens' / name}:{line}"
    assert error.field == field
    assert error.message.startswith(f"unknown field {field!r}" if name != "_defaults.yaml" else "")
    assert error.message.endswith(f": did you mean {meant!r}?")


# -------------------------------------------------------------------------------- telemetry


def telemetry_error(path: Path, rows: list[Any]) -> TelemetryError:
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    with pytest.raises(TelemetryError) as info:
        load_telemetry(path, {"a", "b"})
    return info.value


@pytest.mark.parametrize(
    ("row", "field", "says"),
    [
        ({"task_id": "b", "turns_used": "3"}, "turns_used", "must be an integer >= 0"),
        ({"task_id": "b", "judge": {"style": "good"}}, "judge.style", "must be a number (0..5)"),
        ({"tests_failed": 1}, "task_id", "required: a non-empty string"),
        ({"task_id": "b", "test_failed": 1}, "test_failed", "did you mean 'tests_failed'?"),
        ({"task_id": "b", "judge": {"styel": 4}}, "judge.styel", "did you mean 'style'?"),
    ],
)
def test_a_bad_telemetry_row_names_file_line_and_field(
    tmp_path: Path, row: dict[str, Any], field: str, says: str
) -> None:
    path = tmp_path / "tel.jsonl"
    error = telemetry_error(path, [{"task_id": "a"}, row])
    assert error.source == f"{path}:2"  # a JSONL row's source is its line
    assert str(error) == f"{path}:2: field '{field}': {error.message}"
    assert error.message.endswith(says)


@pytest.mark.parametrize(
    ("old", "new"), [("tokens_input", "input_tokens"), ("tokens_output", "output_tokens")]
)
def test_assay_0_1_token_names_are_retired_naming_the_new_field(old: str, new: str) -> None:
    with pytest.raises(TelemetryError) as info:
        parse_record({"task_id": "a", old: 3}, "t.json")
    assert (
        str(info.value)
        == f"t.json: field '{old}': renamed to {new!r} (the old name is no longer read)"
    )
    assert getattr(parse_record({"task_id": "a", new: 3}, "t.json"), new) == 3


def test_extension_fields_are_kept_and_nulls_read_as_zero() -> None:
    record = parse_record({"task_id": "a", "x_model": "m", "crashes": None, "tests_run": 2.0}, "s")
    assert (dict(record.extra), record.crashes, record.tests_run) == ({"x_model": "m"}, 0, 2)


# -------------------------------------------------------------------------- seal: isolation


@pytest.mark.parametrize(
    ("isolation", "field", "says"),
    [
        ({"kind": 3}, "isolation.kind", "3 is not one of bubblewrap, docker, none"),
        ({"not_mounted": []}, "isolation.kind", "None is not one of bubblewrap, docker, none"),
        (
            {"kind": "none", "not_mounted": [1]},
            "isolation.not_mounted",
            "not a list of path strings",
        ),
        (
            {"kind": "none", "kinds": "x"},
            "isolation",
            "unknown key 'kinds' (kind, not_mounted): did you mean 'kind'?",
        ),
    ],
)
def test_a_malformed_isolation_names_the_field(
    isolation: dict[str, Any], field: str, says: str
) -> None:
    # Stated by the runner, not read from a file: no file, no line, the field and the problem.
    with pytest.raises(AssayError) as info:
        isolation_field(isolation)
    assert str(info.value) == f"field '{field}': {says}"


def test_an_isolation_is_written_sorted_and_complete() -> None:
    assert isolation_field({"kind": "docker", "not_mounted": ["/b", "/a", "/b"]}) == {
        "kind": "docker",
        "not_mounted": ["/a", "/b"],
    }
    assert isolation_field({"kind": "none"}) == {"kind": "none", "not_mounted": []}


# ------------------------------------------------------------------------------- the layer


def fail(spec: v.Spec, value: Any, key: v.Key = "x") -> AssayError:
    with pytest.raises(AssayError) as info:
        spec.check(value, v.At("f.toml", "t", ConfigError), key)
    return info.value


def test_a_table_checks_each_declared_field_and_returns_the_values_given() -> None:
    table = v.Table({"n": v.Num(at_least=0), "s": v.Str(required=True), "l": v.List(v.Str())})
    assert table.check({"s": "a", "n": 2, "l": ["x"]}, v.At("f")) == {
        "s": "a",
        "n": 2.0,
        "l": ("x",),
    }
    assert str(fail(table, {"n": 1})) == "f.toml: field 't.x.s': is required"
    assert str(fail(table, {"s": "a", "zz": 1, "m": 2})).startswith("f.toml: field 't.x.zz': ")
    assert str(fail(table, [1])) == "f.toml: field 't.x': must be a table"


def test_unknown_keys_are_refused_before_any_value_is_checked() -> None:
    table = v.Table({"alpha": v.Num()})
    error = fail(table, {"alpha": "bad", "alpah": 1})
    assert (error.field, error.message) == (
        "t.x.alpah",
        "unknown setting (known: alpha): did you mean 'alpha'?",
    )


def test_table_options() -> None:
    kept = v.Table({"a": v.Int()}, keep=lambda k: k.startswith("x_"), null_absent=True)
    assert kept.check({"a": None, "x_b": 1}, v.At(None)) == {}
    renamed = v.Table({"new": v.Int()}, renamed={"old": "new"})
    assert fail(renamed, {"old": 1}).message == "renamed to 'new' (the old name is no longer read)"
    named = v.Table({"a": v.Int()}, unknown="unknown key {key} (a)", names_table=True)
    assert (fail(named, {"b": 1}).field, fail(named, {"b": 1}).message) == (
        "t.x",
        "unknown key 'b' (a)",
    )
    also = v.Table(
        {"candidates": v.List()}, unknown="unknown setting", also={"prompts": "candidates"}
    )
    assert fail(also, {"prompts": []}).message == "unknown setting: did you mean 'candidates'?"


def test_rows_nullable_values_and_mappings_of_values() -> None:
    row = v.Row(v.Str(), v.Int(at_least=0), v.Maybe(v.Bool()))
    assert row.check(["a", 1, None], v.At(None)) == ("a", 1, None)
    assert (fail(row, ["a", -1, True]).field, fail(row, ["a", -1, True]).message) == (
        "t.x[1]",
        "must be an integer >= 0",
    )
    assert fail(row, ["a", 1]).message == "must be a list of 3 items"
    assert fail(v.Maybe(v.Bool()), "yes").message == "must be true or false"
    values = v.Dict(v.Num())
    assert values.check({"a": 1}, v.At(None)) == {"a": 1.0}
    assert fail(values, {"a": "1"}).field == "t.x.a"


def test_messages_fill_in_the_field_the_value_and_its_json_type() -> None:
    spec = v.Str(choices=("a", "b"), message="{field} is {value}, {found}: use a or b")
    assert fail(spec, 3).message == "t.x is 3, the number 3: use a or b"
    assert fail(spec, "c").message == "t.x is 'c', the string \"c\": use a or b"
    assert fail(v.Str(choices=("a", "b")), "c").message == "'c' is not one of a, b"
    assert fail(v.Str(message="{found}"), [1]).message == "a list"
    # A message's braces that are no placeholder stay as written.
    assert fail(v.Dict(message="must be a mapping {role, content}"), 1).message.endswith("content}")


@pytest.mark.parametrize(
    ("spec", "rule"),
    [
        (v.Num(), "must be a number"),
        (v.Num(above=0), "must be a number > 0"),
        (v.Num(above=0, at_most=1), "must be a number > 0 and <= 1"),
        (v.Num(at_least=0), "must be a number >= 0"),
        (v.Num(at_most=5), "must be a number <= 5"),
        (v.Num(at_least=-2, at_most=2), "must be a number between -2 and 2"),
    ],
)
def test_a_number_says_its_whole_rule(spec: v.Num, rule: str) -> None:
    assert fail(spec, float("nan")).message == rule


def test_integers_lists_and_checks() -> None:
    assert v.Int(integral=True).check(2.0, v.At(None)) == 2
    assert fail(v.Int(), 2.0).message == "must be an integer"
    assert fail(v.Int(at_least=1), 0).message == "must be an integer >= 1"
    assert fail(v.List(v.Str(pattern=".+"), indexed=True), ["a", ""]).field == "t.x[1]"
    assert fail(v.List(v.Str()), ["a", 1]).field == "t.x"  # an item named by its list
    assert fail(v.List(non_empty=True), []).message == "must be a list"

    def even(value: Any, at: v.At, key: v.Key) -> int:
        if value % 2:
            at.fail("must be even", key)
        return int(value)

    assert fail(v.Check(even), 3).message == "must be even"


def test_the_dataclasses_declare_their_own_rules() -> None:
    for settings in (GateSettings, AgentSettings):
        fields = tuple(f.name for f in dataclasses.fields(settings))
        assert tuple(v.Table.of(settings).fields) == fields
    table = v.Table.of(GateSettings)
    assert GateSettings(**table.check({"alpha": 0.1}, v.At(None))) == GateSettings(alpha=0.1)


@pytest.mark.parametrize(
    ("key", "known", "meant"),
    [
        ("temprature", ("temperature", "top_p"), "temperature"),
        ("Asserts", ("asserts",), "asserts"),
        ("max-cost-usd", ("max_cost_usd",), "max_cost_usd"),
        ("zz", ("a", "b"), None),
        (3, ("a",), None),
    ],
)
def test_near_miss(key: Any, known: tuple[str, ...], meant: str | None) -> None:
    assert v.near_miss(key, known) == meant


TOML = """\
# a comment
goldens = "g"
[judge]
verified = 1
provider = {type = "gpt"}
[judge.provider]
timeout_s = 0
stop = ["a", 3]
[schemas]
"https://x/a.json" = 3
[agents.mine]
command = \"\"\"
timeout = 5
\"\"\"
timeout = 5
"""


@pytest.mark.parametrize(
    ("field", "line"),
    [
        ("goldens", 2),
        ("judge.verified", 4),
        ("judge.provider.type", 5),
        ("judge.provider.timeout_s", 7),
        ("judge.provider.stop[1]", 8),
        ('schemas."https://x/a.json"', 10),
        ("agents.mine.timeout", 15),  # not the line inside the multi-line string
        ("agents.mine", 11),
        ("judge.nope", 3),
        ("nope", None),
    ],
)
def test_toml_line(field: str, line: int | None) -> None:
    assert v.toml_line(TOML, field) == line


def test_toml_line_under_a_table_prefix() -> None:
    text = "[tool.assay]\nx = 1\n[tool.assay.judge]\nmodel = 1\n"
    assert v.toml_line(text, "judge.model", "tool.assay") == 4
    assert v.toml_line(text, "x", "tool.assay") == 2


def test_located_adds_the_line_once() -> None:
    error = v.located(ConfigError("bad", source="a.toml", field="x"), 3)
    assert (str(error), type(error)) == ("a.toml:3: field 'x': bad", ConfigError)
    assert v.located(error, 9) is error and v.located(error, None) is error


def test_the_layer_costs_no_import() -> None:
    # Nothing beyond the standard library, and difflib only once a key is unknown.
    code = (
        "import sys; before = set(sys.modules); import assay.validate; "
        "new = set(sys.modules) - before; "
        "assert 'difflib' not in new and not any(m.split('.')[0] in ('pydantic', 'msgspec') "
        "for m in new), sorted(new); print('ok')"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "ok"


CONVERTED = [
    "validate.py",
    "config.py",
    "models/_candidates_file.py",
    "goldens/_model.py",
    "goldens/_defaults.py",
    "agent/_telemetry.py",
    "attest/_seal.py",
    "importers/promptfoo.py",
]


@pytest.mark.parametrize("name", CONVERTED)
def test_no_function_of_a_converted_module_is_over_80_lines(name: str) -> None:
    tree = ast.parse((SRC / name).read_text(encoding="utf-8"))
    long = [
        f"{node.name} ({node.end_lineno - node.lineno + 1} lines)"
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.end_lineno is not None
        and node.end_lineno - node.lineno + 1 > 80
    ]
    assert long == []
