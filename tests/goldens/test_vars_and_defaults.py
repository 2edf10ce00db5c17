"""Golden ``vars`` (one mapping, or a list that expands a golden) and a folder's
``_defaults.yaml`` (vars, asserts and threshold every golden of the folder gets)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from assay.errors import GoldenError
from assay.gate import _baseline as baseline
from assay.goldens import (
    DEFAULT_THRESHOLD,
    Golden,
    build_goldens,
    iter_goldens,
    load_suite,
    read_defaults,
    self_test,
)
from assay.goldens._model import KNOWN_FIELDS, RESERVED_VARS
from assay.models._template import RESERVED_NAMES
from assay.views._text import render_self_test
from tests.helpers.cli import run_cli

ORIGIN = "\n## Origin\ntests\n"


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def md(folder: Path, name: str, front: str) -> Path:
    return write(folder, name, f"---\n{front}---\nA golden.\n{ORIGIN}")


def load(root: Path) -> list[Golden]:
    return list(iter_goldens(root))


def texts(golden: Golden) -> list[str]:
    return [spec.text for spec in golden.asserts]


def error_of(root: Path) -> GoldenError:
    with pytest.raises(GoldenError) as info:
        load(root)
    return info.value


# --------------------------------------------------------------------------- vars


def test_a_vars_list_expands_in_order_with_numbered_ids_and_the_same_source(
    tmp_path: Path,
) -> None:
    md(
        tmp_path,
        "smoke/weather.md",
        "vars:\n  - {city: Rome}\n  - {city: Oslo, days: [1, 2]}\n  - {city: Lima}\n"
        "asserts: ['contains:Weather']\n",
    )
    goldens = load(tmp_path)
    assert [g.id for g in goldens] == ["weather#1", "weather#2", "weather#3"]
    assert [g.fields["vars"] for g in goldens] == [
        {"city": "Rome"},
        {"city": "Oslo", "days": [1, 2]},
        {"city": "Lima"},
    ]
    source = str(tmp_path / "smoke" / "weather.md")
    assert {(g.source, g.tier, g.input) for g in goldens} == {(source, "smoke", None)}
    # One record, parsed once: the expanded goldens share its checks.
    assert all(g.asserts is goldens[0].asserts for g in goldens)
    assert texts(goldens[0]) == ["contains:Weather"]


def test_one_vars_mapping_is_one_golden_and_input_is_optional(tmp_path: Path) -> None:
    md(tmp_path, "g.md", "id: g\nvars: {city: Rome, n: 3}\n")
    [golden] = load(tmp_path)
    assert (golden.id, golden.input, golden.fields["vars"]) == ("g", None, {"city": "Rome", "n": 3})


def test_jsonl_and_yaml_list_records_expand_keeping_line_and_item(tmp_path: Path) -> None:
    write(
        tmp_path,
        "a.jsonl",
        '{"id": "plain", "input": "q"}\n'
        '{"id": "j", "vars": [{"x": 1}, {"x": 2}], "asserts": ["is-json"]}\n',
    )
    write(tmp_path, "b.yaml", "- {id: y0, input: q}\n- id: y\n  vars: [{x: a}, {x: b}]\n")
    goldens = load(tmp_path)
    jsonl, yaml = str(tmp_path / "a.jsonl"), str(tmp_path / "b.yaml")
    assert [(g.id, g.source) for g in goldens] == [
        ("plain", f"{jsonl}:1"),
        ("j#1", f"{jsonl}:2"),
        ("j#2", f"{jsonl}:2"),
        ("y0", f"{yaml}[0]"),
        ("y#1", f"{yaml}[1]"),
        ("y#2", f"{yaml}[1]"),
    ]
    assert [g.fields["vars"]["x"] for g in goldens if "vars" in g.fields] == [1, 2, "a", "b"]


def test_build_goldens_expands_a_vars_list() -> None:
    data = {"id": "g", "vars": [{"a": 1}, {"a": 2}]}
    built = build_goldens(data, source="mem", default_id=None, folder_tier=None)
    assert [g.id for g in built] == ["g#1", "g#2"]
    # The caller's record is left as it was.
    assert data == {"id": "g", "vars": [{"a": 1}, {"a": 2}]}


def test_an_expanded_id_colliding_with_a_written_one_names_both_sources(tmp_path: Path) -> None:
    md(tmp_path, "a.md", "id: q\nvars: [{n: 1}, {n: 2}]\n")
    md(tmp_path, "b.md", "id: 'q#2'\ninput: x\n")
    error = error_of(tmp_path)
    assert "duplicate golden id 'q#2'" in error.message
    assert str(tmp_path / "a.md") in error.message
    assert error.source == str(tmp_path / "b.md")


@pytest.mark.parametrize(
    "front, field, words",
    [
        ("vars: []\n", "vars", "empty list"),
        ("vars: [{a: 1}, {b: 2}, 3]\n", "vars[2]", "mapping"),
        ("vars: [{a: 1}, [x]]\n", "vars[1]", "not a list"),
        ("vars: {1: one}\n", "vars", "var name must be a string"),
        ("vars: [{a: 1}, {2: two}]\n", "vars[1]", "var name must be a string"),
        ("vars: text\n", "vars", "not a str"),
        ("vars:\n", "vars", "not null"),
        ("vars: {day: 2024-01-01}\n", "vars.day", "as a date"),
        ("vars: {when: {d: [2024-01-01]}}\n", "vars.when", "as a date"),
        ("vars: {s: !!set {a: null}}\n", "vars.s", "a set is not a JSON value"),
        ("vars: {m: {1: x}}\n", "vars.m", "key 1 is not a string"),
        ("var: {city: Rome}\n", "var", "did you mean 'vars'?"),
        ("defaults: 'no'\n", "defaults", "true or false"),
        ("default: false\n", "default", "did you mean 'defaults'?"),
    ],
)
def test_each_bad_vars_is_one_error_naming_the_file_and_field(
    tmp_path: Path, front: str, field: str, words: str
) -> None:
    md(tmp_path, "g.md", "id: g\ninput: q\n" + front)
    error = error_of(tmp_path)
    assert error.field == field
    assert words in error.message
    # The file, and the line of the field (the frontmatter starts on line 2).
    assert error.source is not None and error.source.startswith(str(tmp_path / "g.md") + ":")


@pytest.mark.parametrize("name", RESERVED_VARS)
def test_a_var_named_like_a_golden_field_is_refused_at_load(tmp_path: Path, name: str) -> None:
    md(tmp_path, "g.md", f"id: g\nvars: {{ok: 1, {name}: shadow}}\n")
    error = error_of(tmp_path)
    assert (error.field, error.source) == (f"vars.{name}", f"{tmp_path / 'g.md'}:3")
    assert f"golden 'g' has a var named {name!r}" in error.message
    md(tmp_path / "l", "g.md", f"id: g\nvars:\n  - {{ok: 1}}\n  - {{{name}: x}}\n")
    assert error_of(tmp_path / "l").field == f"vars[1].{name}"


def test_the_reserved_names_are_the_templates_own() -> None:
    assert RESERVED_VARS == RESERVED_NAMES
    assert {"vars", "defaults"} <= KNOWN_FIELDS


def test_a_bad_item_in_a_yaml_list_names_the_item_line(tmp_path: Path) -> None:
    path = write(
        tmp_path, "b.yaml", "- {id: a, input: q}\n- id: b\n  vars:\n    - {x: 1}\n    - 7\n"
    )
    error = error_of(tmp_path)
    assert (error.source, error.field) == (f"{path}:5", "vars[1]")


# --------------------------------------------------------------------------- defaults


DEFAULTS = (
    "vars: {lang: en, city: Nowhere}\n"
    "asserts:\n  - 'not-contains:TODO'\n  - {op: icontains, value: OK}\n"
    "threshold: 0.6\n"
)


def test_defaults_come_first_vars_merge_and_the_threshold_fills_in(tmp_path: Path) -> None:
    write(tmp_path, "_defaults.yaml", DEFAULTS)
    md(tmp_path, "a.md", "input: q\nasserts: ['contains:Rome']\nvars: {city: Rome}\n")
    md(tmp_path, "b.md", "input: q\nthreshold: 0.9\n")
    md(tmp_path, "c.md", "vars: [{city: Oslo}, {extra: 1}]\nasserts: [is-json]\n")
    a, b, c1, c2 = load(tmp_path)
    assert texts(a) == ["not-contains:TODO", "icontains:OK", "contains:Rome"]
    assert a.fields["vars"] == {"lang": "en", "city": "Rome"}  # the golden's own wins
    assert (a.threshold, a.threshold_given) == (0.6, True)
    assert texts(b) == ["not-contains:TODO", "icontains:OK"]
    assert b.fields["vars"] == {"lang": "en", "city": "Nowhere"}
    assert (b.threshold, b.threshold_given) == (0.9, True)
    # A vars list: the defaults merged into each item.
    assert [c1.id, c2.id] == ["c#1", "c#2"]
    assert c1.fields["vars"] == {"lang": "en", "city": "Oslo"}
    assert c2.fields["vars"] == {"lang": "en", "city": "Nowhere", "extra": 1}
    assert texts(c2) == ["not-contains:TODO", "icontains:OK", "is-json"]
    assert {g.defaults.source for g in (a, b, c1, c2) if g.defaults} == {
        str(tmp_path / "_defaults.yaml")
    }


def test_defaults_false_opts_a_golden_out(tmp_path: Path) -> None:
    write(tmp_path, "_defaults.yml", DEFAULTS)
    md(tmp_path, "a.md", "input: q\ndefaults: false\nasserts: [is-json]\n")
    md(tmp_path, "b.md", "input: q\ndefaults: true\n")
    a, b = load(tmp_path)
    assert (texts(a), a.defaults, "vars" in a.fields, "defaults" in a.fields) == (
        ["is-json"],
        None,
        False,
        False,
    )
    assert (a.threshold, a.threshold_given) == (DEFAULT_THRESHOLD, False)
    assert b.defaults is not None and b.threshold == 0.6


def test_without_defaults_the_threshold_is_given_only_when_written(tmp_path: Path) -> None:
    md(tmp_path, "a.md", "input: q\n")
    md(tmp_path, "b.md", "input: q\nthreshold: 0.8\n")
    a, b = load(tmp_path)
    assert (a.threshold, a.threshold_given, a.defaults) == (0.8, False, None)
    assert (b.threshold, b.threshold_given) == (0.8, True)


def test_the_defaults_file_is_no_golden_and_only_the_root_one_counts(tmp_path: Path) -> None:
    write(tmp_path, "_defaults.yaml", "asserts: [is-json]\n")
    write(tmp_path, "smoke/_defaults.yaml", "asserts: ['contains:never']\n")
    md(tmp_path, "smoke/a.md", "input: q\n")
    assert [Path(g.source).name for g in iter_goldens(tmp_path)] == ["a.md"]
    [golden] = load(tmp_path)
    assert texts(golden) == ["is-json"]
    # A single file named as the suite has no folder, so no defaults.
    [alone] = list(iter_goldens(tmp_path / "smoke" / "a.md"))
    assert (texts(alone), alone.defaults) == ([], None)


def test_an_empty_defaults_file_adds_nothing(tmp_path: Path) -> None:
    write(tmp_path, "_defaults.yaml", "# nothing yet\n")
    md(tmp_path, "a.md", "input: q\nasserts: [is-json]\n")
    [golden] = load(tmp_path)
    assert (texts(golden), golden.threshold_given, "vars" in golden.fields) == (
        ["is-json"],
        False,
        False,
    )
    assert golden.defaults is not None and golden.defaults.to_dict() == {
        "source": str(tmp_path / "_defaults.yaml"),
        "asserts": [],
        "vars": [],
        "threshold": None,
    }


def test_packaged_goldens_never_get_the_projects_defaults(tmp_path: Path) -> None:
    write(tmp_path, "_defaults.yaml", "asserts: ['contains:project-only']\nvars: {x: 1}\n")
    md(tmp_path, "smoke/a.md", "input: q\n")
    suite = load_suite(tmp_path, packaged=True)
    own = [g for g in suite if g.source.startswith(str(tmp_path))]
    packaged = [g for g in suite if not g.source.startswith(str(tmp_path))]
    assert [texts(g) for g in own] == [["contains:project-only"]]
    assert packaged, "--packaged adds the packaged goldens"
    assert all(g.defaults is None and "contains:project-only" not in texts(g) for g in packaged)


@pytest.mark.parametrize(
    "text, field, line, words",
    [
        ("vars: {a: 1}\ntier: smoke\n", "tier", 2, "holds only vars, asserts, threshold"),
        ("assert: [is-json]\n", "assert", 1, "did you mean 'asserts'?"),
        ("vars: [{a: 1}]\n", "vars", 1, "one mapping"),
        ("vars: {input: x}\n", "vars.input", 1, "the defaults file has a var named 'input'"),
        ("vars: {d: 2024-01-01}\n", "vars.d", 1, "as a date"),
        ("vars: {1: x}\n", "vars", 1, "var name must be a string"),
        ("threshold: 2\n", "threshold", 1, "between 0 and 1"),
        ("threshold: high\n", "threshold", 1, "between 0 and 1"),
        ("asserts: is-json\n", "asserts", 1, "must be a list"),
        ("asserts:\n  - is-json\n  - {value: 1}\n", "asserts[1]", 3, ""),
        ("asserts:\n  - {op: contains, value: 2024-01-01}\n", "asserts[0].value", 2, "quote it"),
    ],
)
def test_each_bad_defaults_file_is_one_error_naming_the_file_and_key(
    tmp_path: Path, text: str, field: str, line: int, words: str
) -> None:
    path = write(tmp_path, "_defaults.yaml", text)
    md(tmp_path, "a.md", "input: q\n")
    error = error_of(tmp_path)
    assert (error.source, error.field) == (f"{path}:{line}", field)
    assert words in error.message


def test_a_defaults_file_that_is_no_mapping_or_is_doubled_is_an_error(tmp_path: Path) -> None:
    path = write(tmp_path, "_defaults.yaml", "- is-json\n")
    md(tmp_path, "a.md", "input: q\n")
    error = error_of(tmp_path)
    assert error.source == str(path) and "must hold a YAML mapping" in error.message
    write(tmp_path, "_defaults.yaml", "threshold: 0.5\n")
    write(tmp_path, "_defaults.yml", "threshold: 0.5\n")
    error = error_of(tmp_path)
    assert error.source == str(tmp_path) and "keep one" in error.message
    (tmp_path / "_defaults.yml").unlink()
    (tmp_path / "_defaults.yaml").unlink()
    (tmp_path / "_defaults.yaml").mkdir()
    assert "not a regular file" in error_of(tmp_path).message


def test_read_defaults_without_a_file_is_none(tmp_path: Path) -> None:
    assert read_defaults(tmp_path) is None
    assert read_defaults(tmp_path / "missing") is None


# --------------------------------------------------------------------------- fingerprints


def _old_fingerprint(golden: Golden) -> str:
    """The fingerprint as written before vars existed: baselines hold these digests."""
    encoder = json.JSONEncoder(sort_keys=True, ensure_ascii=False, default=str)
    parts = [encoder.encode([s.full_op, dict(s.args)]) for s in golden.asserts]
    material = "\x1f".join(
        [*parts, encoder.encode(golden.expected), repr(golden.threshold), "null"]
    )
    return "sha256:" + hashlib.sha256(material.encode("utf-8")).hexdigest()[:32]


def test_vars_enter_the_fingerprint_only_when_present(tmp_path: Path) -> None:
    md(tmp_path, "plain.md", "input: q\nasserts: [is-json, 'contains:x']\nexpected: e\n")
    md(
        tmp_path,
        "v.md",
        "input: q\nasserts: [is-json, 'contains:x']\nexpected: e\n"
        "vars: [{city: Rome}, {city: Oslo}]\n",
    )
    plain, v1, v2 = load(tmp_path)
    assert baseline.fingerprint(plain) == _old_fingerprint(plain)
    prints = {baseline.fingerprint(g) for g in (plain, v1, v2)}
    assert len(prints) == 3  # each var set is its own prompt: its own fingerprint
    assert baseline.fingerprint(v1) == baseline.fingerprint(v1, {})  # memo or not


# --------------------------------------------------------------------------- --self-test


def test_self_test_lists_the_defaults(tmp_path: Path) -> None:
    write(tmp_path, "_defaults.yaml", DEFAULTS)
    md(tmp_path, "a.md", "input: q\nasserts: ['contains:ok']\nexpected: ok fine\n")
    md(tmp_path, "b.md", "input: q\ndefaults: false\n")
    report = self_test(load(tmp_path))
    expected = {
        "source": str(tmp_path / "_defaults.yaml"),
        "asserts": ["not-contains:TODO", "icontains:OK"],
        "vars": ["lang", "city"],
        "threshold": 0.6,
    }
    assert report.to_dict()["defaults"] == expected
    text = render_self_test(report)
    assert f"  defaults      {tmp_path / '_defaults.yaml'}" in text
    assert "2 assert(s) before each golden's own: 'not-contains:TODO', 'icontains:OK'" in text
    assert "vars (a golden's own win): lang, city" in text
    assert "threshold 0.6 where a golden sets none" in text
    # Through the command line, text and JSON.
    code, out, err = run_cli(["gate", "goldens", "--self-test", "--json"], _project(tmp_path))
    assert (code, err) == (0, "")
    assert json.loads(out)["defaults"] == {**expected, "source": "goldens/_defaults.yaml"}
    code, out, err = run_cli(["gate", "goldens", "--self-test"], tmp_path / "project")
    assert code == 0 and "defaults      goldens/_defaults.yaml" in out


def _project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    write(project, "goldens/_defaults.yaml", DEFAULTS)
    md(project, "goldens/a.md", "input: q\nasserts: ['contains:ok']\nexpected: ok fine\n")
    return project


def test_self_test_without_defaults_says_null(tmp_path: Path) -> None:
    md(tmp_path, "a.md", "input: q\n")
    report = self_test(load(tmp_path))
    assert report.to_dict()["defaults"] is None
    assert "defaults" not in render_self_test(report)


# --------------------------------------------------------------------------- a live run


def test_a_prompt_template_sees_each_golden_its_own_vars(tmp_path: Path) -> None:
    write(
        tmp_path,
        "goldens/_defaults.yaml",
        "vars: {lang: fr, city: Nowhere}\nasserts: ['contains:Weather']\n",
    )
    md(
        tmp_path,
        "goldens/weather.md",
        "vars:\n  - {city: Rome}\n  - {city: Oslo}\nasserts: ['contains:(fr)']\n",
    )
    write(
        tmp_path,
        "cands.yaml",
        "provider: {type: echo}\ncandidates:\n"
        "  - {id: a, prompt: 'Weather in {{ city }} ({{ lang }})'}\n",
    )
    code, out, err = run_cli(
        ["eval", "goldens", "--candidates", "cands.yaml", "--json", "--no-cache"], tmp_path
    )
    assert code == 0, err
    results = json.loads(out)["results"]
    assert [(r["id"], r["status"], r["output"]) for r in results] == [
        ("weather#1", "pass", "Weather in Rome (fr)"),
        ("weather#2", "pass", "Weather in Oslo (fr)"),
    ]
    assert [c["text"] for c in results[0]["checks"]] == ["contains:Weather", "contains:(fr)"]


def test_a_golden_that_opts_out_does_not_see_the_default_vars(tmp_path: Path) -> None:
    write(tmp_path, "goldens/_defaults.yaml", "vars: {city: Rome}\n")
    md(tmp_path, "goldens/g.md", "input: q\ndefaults: false\n")
    write(
        tmp_path,
        "cands.yaml",
        "provider: {type: echo}\ncandidates:\n  - {id: a, prompt: 'In {{ city }}'}\n",
    )
    code, out, err = run_cli(
        ["eval", "goldens", "--candidates", "cands.yaml", "--json", "--no-cache"], tmp_path
    )
    assert (code, out) == (1, "")
    assert "uses 'city'" in err and "golden 'g' does not have" in err
