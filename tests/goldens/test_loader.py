"""Golden loading: markdown frontmatter, JSONL and YAML lists, tiers, discovery, defaults."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.asserts import AssertSpec
from assay.errors import AssayError, GoldenError
from assay.goldens import (
    DEFAULT_THRESHOLD,
    TIERS,
    Golden,
    build_goldens,
    iter_goldens,
    load_suite,
    packaged_root,
)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def md(path: Path, front: str = "", body: str = "") -> Path:
    return write(path, f"---\n{front}---\n{body}")


def load(root: Path) -> list[Golden]:
    return list(iter_goldens(root))


def ids(goldens: list[Golden]) -> list[str]:
    return [g.id for g in goldens]


# --- markdown + frontmatter -----------------------------------------------------------------


def test_markdown_golden_fields(tmp_path: Path) -> None:
    path = md(
        tmp_path / "refund.md",
        "id: refund-1\n"
        "input: {question: how long?}\n"
        "expected: 30 days\n"
        "rubric: must cite the policy\n"
        "threshold: 0.6\n"
        "title: Refund window\n"
        "role: support\n"
        "completion_signals: [answered]\n"
        "max_cost_usd: 0.5\n",
        "Some doc.\n",
    )
    [golden] = load(tmp_path)
    assert golden.id == "refund-1"
    assert golden.tier == "standard"
    assert golden.input == {"question": "how long?"}
    assert golden.expected == "30 days"
    assert golden.has_expected is True
    assert golden.rubric == "must cite the policy"
    assert golden.threshold == 0.6
    assert golden.asserts == ()
    assert golden.source == str(path)
    assert golden.has_origin is False
    assert golden.fields["title"] == "Refund window"
    assert golden.fields["role"] == "support"
    assert golden.fields["completion_signals"] == ["answered"]
    assert golden.fields["max_cost_usd"] == 0.5


def test_defaults_when_fields_absent(tmp_path: Path) -> None:
    md(tmp_path / "plain.md", "input: hi\n")
    [golden] = load(tmp_path)
    assert golden.id == "plain"
    assert golden.tier == "standard"
    assert golden.threshold == DEFAULT_THRESHOLD == 0.8
    assert golden.expected is None
    assert golden.has_expected is False
    assert golden.rubric is None


def test_expected_null_still_counts_as_present(tmp_path: Path) -> None:
    md(tmp_path / "n.md", "expected: null\n")
    [golden] = load(tmp_path)
    assert golden.expected is None
    assert golden.has_expected is True


def test_id_defaults_to_file_stem(tmp_path: Path) -> None:
    md(tmp_path / "sub" / "my-case.v2.md", "input: x\n")
    [golden] = load(tmp_path)
    assert golden.id == "my-case.v2"


def test_integer_id_becomes_string_and_whitespace_is_stripped(tmp_path: Path) -> None:
    md(tmp_path / "a.md", "id: 42\n")
    md(tmp_path / "b.md", "id: '  spaced  '\n")
    assert ids(load(tmp_path)) == ["42", "spaced"]


def test_string_asserts(tmp_path: Path) -> None:
    md(
        tmp_path / "g.md",
        "asserts:\n  - 'contains:foo'\n  - 'regex:^a:b$'\n  - 'is-json'\n  - 'not-contains:bar'\n",
    )
    [golden] = load(tmp_path)
    a = golden.asserts
    assert len(a) == 4
    assert all(isinstance(x, AssertSpec) for x in a)
    assert (a[0].op, a[0].negate, dict(a[0].args)) == ("contains", False, {"value": "foo"})
    # only the first colon separates op from argument
    assert (a[1].op, a[1].negate, dict(a[1].args)) == ("regex", False, {"value": "^a:b$"})
    assert (a[2].op, a[2].negate, dict(a[2].args)) == ("is-json", False, {})
    assert (a[3].op, a[3].negate, dict(a[3].args)) == ("contains", True, {"value": "bar"})
    assert a[3].full_op == "not-contains"
    assert a[0].text == "contains:foo"
    assert a[3].text == "not-contains:bar"


def test_mapping_asserts(tmp_path: Path) -> None:
    md(
        tmp_path / "g.md",
        "asserts:\n"
        "  - {op: contains, value: foo, path: /answer}\n"
        "  - {op: not-regex, value: '^x', flags: i}\n"
        "  - {op: contains-any, value: [a, b]}\n",
    )
    [golden] = load(tmp_path)
    a0, a1, a2 = golden.asserts
    assert a0.op == "contains"
    assert a0.negate is False
    assert dict(a0.args) == {"value": "foo", "path": "/answer"}
    assert a1.op == "regex"
    assert a1.negate is True
    assert a1.full_op == "not-regex"
    assert dict(a1.args) == {"value": "^x", "flags": "i"}
    assert a2.op == "contains-any"
    assert dict(a2.args) == {"value": ["a", "b"]}


def test_unquoted_yaml_mapping_assert_is_op_and_value(tmp_path: Path) -> None:
    md(tmp_path / "g.md", "asserts:\n  - contains: foo\n  - not-icontains: Bar\n")
    [golden] = load(tmp_path)
    a0, a1 = golden.asserts
    assert (a0.op, a0.negate, dict(a0.args)) == ("contains", False, {"value": "foo"})
    assert (a1.op, a1.negate, dict(a1.args)) == ("icontains", True, {"value": "Bar"})


def test_an_unknown_op_is_rejected_when_the_golden_is_loaded(tmp_path: Path) -> None:
    # It would fail every output alike, with no expected answer to show it: a load error
    # naming the file, line and field (tests/goldens/test_load_checks.py has the rest).
    path = md(tmp_path / "g.md", "asserts: ['no-such-op:x']\n")
    with pytest.raises(GoldenError) as excinfo:
        load(tmp_path)
    assert excinfo.value.field == "asserts[0]"
    assert str(excinfo.value).startswith(f"{path}:2: field 'asserts[0]': unknown op 'no-such-op'")


def test_asserts_not_a_list(tmp_path: Path) -> None:
    path = md(tmp_path / "g.md", "asserts: 'contains:foo'\n")
    with pytest.raises(GoldenError) as excinfo:
        load(tmp_path)
    assert excinfo.value.field == "asserts"
    assert str(path) in str(excinfo.value)


def test_invalid_assert_entry_names_its_index(tmp_path: Path) -> None:
    path = md(tmp_path / "g.md", "asserts:\n  - 'contains:ok'\n  - 5\n")
    with pytest.raises(GoldenError) as excinfo:
        load(tmp_path)
    assert excinfo.value.field == "asserts[1]"
    assert str(path) in str(excinfo.value)
    assert "asserts[1]" in str(excinfo.value)


def test_assert_mapping_without_op(tmp_path: Path) -> None:
    path = md(tmp_path / "g.md", "asserts:\n  - {value: foo, path: /a}\n")
    with pytest.raises(GoldenError) as excinfo:
        load(tmp_path)
    assert excinfo.value.field == "asserts[0]"
    assert str(path) in str(excinfo.value)


@pytest.mark.parametrize("value", ["1.5", "-0.1", "high", "true", ".nan"])
def test_threshold_out_of_range(tmp_path: Path, value: str) -> None:
    path = md(tmp_path / "g.md", f"threshold: {value}\n")
    with pytest.raises(GoldenError) as excinfo:
        load(tmp_path)
    assert excinfo.value.field == "threshold"
    assert str(path) in str(excinfo.value)


@pytest.mark.parametrize("value", ["0", "1", "0.25"])
def test_threshold_bounds_accepted(tmp_path: Path, value: str) -> None:
    md(tmp_path / "g.md", f"threshold: {value}\n")
    [golden] = load(tmp_path)
    assert golden.threshold == float(value)
    assert isinstance(golden.threshold, float)


@pytest.mark.parametrize(
    ("front", "field"),
    [
        ("rubric: [a, b]\n", "rubric"),
        ("title: 3\n", "title"),
        ("owned_files: a.py\n", "owned_files"),
        ("completion_signals: [ok, 3]\n", "completion_signals[1]"),
        ("max_duration_s: -1\n", "max_duration_s"),
        ("id: ''\n", "id"),
        ("id: [a]\n", "id"),
    ],
)
def test_bad_field_types(tmp_path: Path, front: str, field: str) -> None:
    path = md(tmp_path / "g.md", front)
    with pytest.raises(GoldenError) as excinfo:
        load(tmp_path)
    assert excinfo.value.field == field
    assert str(path) in str(excinfo.value)


# --- Origin section ---------------------------------------------------------------------------


def test_origin_section_detected(tmp_path: Path) -> None:
    md(tmp_path / "a.md", "input: x\n", "Intro.\n\n## Origin\nFrom an incident.\n")
    md(tmp_path / "b.md", "input: x\n", "Intro.\n\n### origin\nlowercase, deeper heading\n")
    md(tmp_path / "c.md", "input: x\n", "Intro only. The origin is mentioned in prose.\n")
    md(tmp_path / "d.md", "input: x\n", "")
    by_id = {g.id: g.has_origin for g in load(tmp_path)}
    assert by_id == {"a": True, "b": True, "c": False, "d": False}


def test_origin_heading_in_frontmatter_does_not_count(tmp_path: Path) -> None:
    md(tmp_path / "a.md", "rubric: |\n  ## Origin\n  not the body\n", "No section here.\n")
    [golden] = load(tmp_path)
    assert golden.has_origin is False


# --- tiers ----------------------------------------------------------------------------------


@pytest.mark.parametrize("tier", TIERS)
def test_tier_from_parent_folder(tmp_path: Path, tier: str) -> None:
    md(tmp_path / tier / "g.md", "input: x\n")
    [golden] = load(tmp_path)
    assert golden.tier == tier


def test_folder_tier_beats_field(tmp_path: Path) -> None:
    md(tmp_path / "smoke" / "g.md", "tier: stretch\n")
    [golden] = load(tmp_path)
    assert golden.tier == "smoke"


def test_tier_field_used_outside_tier_folders(tmp_path: Path) -> None:
    md(tmp_path / "misc" / "a.md", "tier: adversarial\n")
    md(tmp_path / "b.md", "tier: smoke\n")
    md(tmp_path / "c.md", "input: x\n")
    tiers = {g.id: g.tier for g in load(tmp_path)}
    assert tiers == {"a": "adversarial", "b": "smoke", "c": "standard"}


def test_only_immediate_parent_folder_sets_tier(tmp_path: Path) -> None:
    md(tmp_path / "smoke" / "nested" / "g.md", "tier: stretch\n")
    [golden] = load(tmp_path)
    assert golden.tier == "stretch"


def test_unknown_tier_value(tmp_path: Path) -> None:
    path = md(tmp_path / "g.md", "tier: extreme\n")
    with pytest.raises(GoldenError) as excinfo:
        load(tmp_path)
    assert excinfo.value.field == "tier"
    assert str(path) in str(excinfo.value)
    assert "extreme" in str(excinfo.value)


# --- discovery --------------------------------------------------------------------------------


def test_recursive_discovery_sorted_by_relative_path(tmp_path: Path) -> None:
    for rel in ["z.md", "m.md", "b/y.md", "b/a.md", "a/c/d.md", "a/x.md"]:
        md(tmp_path / rel, "input: x\n")
    found = [Path(g.source).relative_to(tmp_path).as_posix() for g in load(tmp_path)]
    assert found == ["a/c/d.md", "a/x.md", "b/a.md", "b/y.md", "m.md", "z.md"]
    assert ids(load(tmp_path)) == ["d", "x", "a", "y", "m", "z"]


def test_non_golden_files_skipped(tmp_path: Path) -> None:
    md(tmp_path / "keep.md", "input: x\n")
    for name in ["README.md", "readme.md", "Index.md", "INDEX.md", "log.md", "Log.md"]:
        sub = tmp_path / name.lower().replace(".md", "") / name
        write(sub, "not a golden at all\n")
    write(tmp_path / "_draft.md", "not a golden\n")
    write(tmp_path / "_data.jsonl", "garbage\n")
    write(tmp_path / "notes.txt", "garbage\n")
    write(tmp_path / "data.json", "{}\n")
    write(tmp_path / ".hidden.md", "garbage\n")
    assert ids(load(tmp_path)) == ["keep"]


def test_hidden_folders_skipped(tmp_path: Path) -> None:
    md(tmp_path / "keep.md", "input: x\n")
    write(tmp_path / ".git" / "broken.md", "garbage\n")
    write(tmp_path / "sub" / ".cache" / "deep" / "broken.md", "garbage\n")
    assert ids(load(tmp_path)) == ["keep"]


def test_a_single_file_is_the_suite(tmp_path: Path) -> None:
    path = md(tmp_path / "one.md", "input: x\n")
    [golden] = load(path)
    assert (golden.id, golden.source) == ("one", str(path))


def test_a_missing_folder_is_an_error_naming_it(tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    with pytest.raises(GoldenError) as excinfo:
        load(missing)
    assert str(missing) in str(excinfo.value)


def test_empty_folder_yields_nothing(tmp_path: Path) -> None:
    assert load(tmp_path) == []


def test_bom_tolerated(tmp_path: Path) -> None:
    path = tmp_path / "bom.md"
    path.write_bytes(b"\xef\xbb\xbf---\nid: with-bom\ninput: caf\xc3\xa9\n---\nbody\n")
    [golden] = load(tmp_path)
    assert golden.id == "with-bom"
    assert golden.input == "café"


def test_crlf_line_endings(tmp_path: Path) -> None:
    path = tmp_path / "crlf.md"
    path.write_bytes(b"---\r\nid: crlf\r\nasserts: ['contains:x']\r\n---\r\n## Origin\r\nhere\r\n")
    [golden] = load(tmp_path)
    assert golden.id == "crlf"
    assert golden.asserts[0].args["value"] == "x"
    assert golden.has_origin is True


def test_frontmatter_only_no_body(tmp_path: Path) -> None:
    path = tmp_path / "nobody.md"
    path.write_text("---\nid: nobody\n---", encoding="utf-8")
    [golden] = load(tmp_path)
    assert golden.id == "nobody"


# --- errors -------------------------------------------------------------------------------------


def test_duplicate_ids_name_both_files(tmp_path: Path) -> None:
    first = md(tmp_path / "a" / "one.md", "id: same\n")
    second = md(tmp_path / "b" / "two.md", "id: same\n")
    with pytest.raises(GoldenError) as excinfo:
        load(tmp_path)
    message = str(excinfo.value)
    assert str(first) in message
    assert str(second) in message
    assert "same" in message
    assert excinfo.value.field == "id"


def test_duplicate_default_ids_across_folders(tmp_path: Path) -> None:
    first = md(tmp_path / "smoke" / "case.md", "input: a\n")
    second = md(tmp_path / "stretch" / "case.md", "input: b\n")
    with pytest.raises(GoldenError) as excinfo:
        load(tmp_path)
    assert str(first) in str(excinfo.value)
    assert str(second) in str(excinfo.value)


def test_malformed_yaml_names_file_and_line(tmp_path: Path) -> None:
    # line 1 is '---', line 2 is fine, line 3 is broken
    path = write(tmp_path / "bad.md", "---\nid: ok\ninput: [unclosed\n---\nbody\n")
    with pytest.raises(GoldenError) as excinfo:
        load(tmp_path)
    message = str(excinfo.value)
    assert str(path) in message
    assert "malformed YAML" in message
    assert "line" in message


def test_malformed_yaml_reports_file_line_number(tmp_path: Path) -> None:
    path = write(tmp_path / "bad.md", "---\nid: ok\ninput: x\nrubric: a: b\n---\n")
    with pytest.raises(GoldenError) as excinfo:
        load(tmp_path)
    assert str(path) in str(excinfo.value)
    assert "line 4" in str(excinfo.value)


@pytest.mark.parametrize(
    ("front", "kind"),
    [("- a\n- b\n", "list"), ("just a string\n", "str"), ("42\n", "int"), ("", "empty")],
)
def test_frontmatter_not_a_mapping(tmp_path: Path, front: str, kind: str) -> None:
    path = md(tmp_path / "g.md", front)
    with pytest.raises(GoldenError) as excinfo:
        load(tmp_path)
    assert str(path) in str(excinfo.value)
    assert "mapping" in str(excinfo.value)
    assert kind in str(excinfo.value)


def test_missing_frontmatter(tmp_path: Path) -> None:
    path = write(tmp_path / "g.md", "# Just a heading\n\nid: nope\n")
    with pytest.raises(GoldenError) as excinfo:
        load(tmp_path)
    assert str(path) in str(excinfo.value)
    assert "frontmatter" in str(excinfo.value)


def test_unclosed_frontmatter(tmp_path: Path) -> None:
    path = write(tmp_path / "g.md", "---\nid: open\ninput: x\n")
    with pytest.raises(GoldenError) as excinfo:
        load(tmp_path)
    assert str(path) in str(excinfo.value)
    assert "never closed" in str(excinfo.value)


def test_empty_file(tmp_path: Path) -> None:
    path = write(tmp_path / "g.md", "")
    with pytest.raises(GoldenError) as excinfo:
        load(tmp_path)
    assert str(path) in str(excinfo.value)


def test_non_utf8_markdown(tmp_path: Path) -> None:
    path = tmp_path / "latin1.md"
    path.write_bytes(b"---\nid: latin\ninput: caf\xe9\n---\n")
    with pytest.raises(GoldenError) as excinfo:
        load(tmp_path)
    assert not isinstance(excinfo.value, UnicodeDecodeError)
    assert str(path) in str(excinfo.value)
    assert "UTF-8" in str(excinfo.value)


def test_golden_error_is_assay_error() -> None:
    assert issubclass(GoldenError, AssayError)


# --- build_goldens directly -------------------------------------------------------------------


def test_build_goldens_directly() -> None:
    [golden] = build_goldens(
        {"asserts": ["contains:a"], "tier": "stretch"},
        source="mem",
        default_id="x",
        folder_tier=None,
    )
    assert golden.id == "x"
    assert golden.tier == "stretch"
    assert golden.source == "mem"
    assert golden.asserts[0].op == "contains"


def test_build_goldens_origin_field_counts() -> None:
    [golden] = build_goldens(
        {"origin": "incident 42"}, source="mem", default_id="x", folder_tier=None
    )
    assert golden.has_origin is True


def test_build_goldens_without_id() -> None:
    with pytest.raises(GoldenError) as excinfo:
        build_goldens({"input": "x"}, source="mem:3", default_id=None, folder_tier=None)
    assert excinfo.value.field == "id"
    assert "mem:3" in str(excinfo.value)


# --- JSONL goldens ----------------------------------------------------------------------------


def test_jsonl_goldens(tmp_path: Path) -> None:
    rows = [
        {"id": "j1", "input": "a", "asserts": ["contains:a"]},
        {"id": "j2", "input": {"k": 1}, "expected": [1, 2], "tier": "stretch"},
    ]
    path = write(
        tmp_path / "set.jsonl",
        json.dumps(rows[0]) + "\n\n   \n" + json.dumps(rows[1]) + "\n",
    )
    goldens = load(tmp_path)
    assert ids(goldens) == ["j1", "j2"]
    assert goldens[0].source == f"{path}:1"
    assert goldens[1].source == f"{path}:4"
    assert goldens[0].asserts[0].op == "contains"
    assert goldens[1].input == {"k": 1}
    assert goldens[1].expected == [1, 2]
    assert goldens[1].tier == "stretch"
    assert goldens[0].tier == "standard"


def test_jsonl_in_tier_folder(tmp_path: Path) -> None:
    write(tmp_path / "smoke" / "set.jsonl", '{"id": "a", "tier": "stretch"}\n{"id": "b"}\n')
    assert {g.tier for g in load(tmp_path)} == {"smoke"}


def test_jsonl_invalid_line(tmp_path: Path) -> None:
    path = write(tmp_path / "set.jsonl", '{"id": "ok"}\n{"id": broken}\n')
    with pytest.raises(GoldenError) as excinfo:
        load(tmp_path)
    assert f"{path}:2" in str(excinfo.value)


def test_jsonl_line_not_an_object(tmp_path: Path) -> None:
    path = write(tmp_path / "set.jsonl", '{"id": "ok"}\n[1, 2]\n')
    with pytest.raises(GoldenError) as excinfo:
        load(tmp_path)
    assert f"{path}:2" in str(excinfo.value)


def test_jsonl_missing_id(tmp_path: Path) -> None:
    path = write(tmp_path / "set.jsonl", '{"id": "ok"}\n\n{"input": "no id"}\n')
    with pytest.raises(GoldenError) as excinfo:
        load(tmp_path)
    assert excinfo.value.field == "id"
    assert f"{path}:3" in str(excinfo.value)


def test_jsonl_bad_field_names_line(tmp_path: Path) -> None:
    path = write(tmp_path / "set.jsonl", '{"id": "ok"}\n{"id": "b", "threshold": 7}\n')
    with pytest.raises(GoldenError) as excinfo:
        load(tmp_path)
    assert excinfo.value.field == "threshold"
    assert f"{path}:2" in str(excinfo.value)


def test_jsonl_non_utf8(tmp_path: Path) -> None:
    path = tmp_path / "set.jsonl"
    path.write_bytes(b'{"id": "ok"}\n{"id": "caf\xe9"}\n')
    with pytest.raises(GoldenError) as excinfo:
        load(tmp_path)
    assert str(path) in str(excinfo.value)


def test_jsonl_bom_tolerated(tmp_path: Path) -> None:
    path = tmp_path / "set.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"id": "first"}\n{"id": "second"}\n')
    assert ids(load(tmp_path)) == ["first", "second"]


def test_jsonl_duplicate_ids_within_file(tmp_path: Path) -> None:
    path = write(tmp_path / "set.jsonl", '{"id": "d"}\n{"id": "d"}\n')
    with pytest.raises(GoldenError) as excinfo:
        load(tmp_path)
    assert f"{path}:1" in str(excinfo.value)
    assert f"{path}:2" in str(excinfo.value)


# --- YAML list goldens ------------------------------------------------------------------------


def test_yaml_list_goldens(tmp_path: Path) -> None:
    path = write(
        tmp_path / "cases.yaml",
        "- id: y1\n  input: a\n  asserts:\n    - contains: a\n"
        "- id: y2\n  tier: adversarial\n  expected: b\n",
    )
    goldens = load(tmp_path)
    assert ids(goldens) == ["y1", "y2"]
    assert goldens[0].asserts[0].op == "contains"
    assert dict(goldens[0].asserts[0].args) == {"value": "a"}
    assert goldens[1].tier == "adversarial"
    assert goldens[1].expected == "b"
    assert str(path) in goldens[0].source
    assert goldens[0].source != goldens[1].source


def test_yml_extension(tmp_path: Path) -> None:
    write(tmp_path / "stretch" / "cases.yml", "- id: y1\n- id: y2\n  tier: smoke\n")
    goldens = load(tmp_path)
    assert ids(goldens) == ["y1", "y2"]
    assert [g.tier for g in goldens] == ["stretch", "stretch"]


def test_yaml_mapping_file_is_error(tmp_path: Path) -> None:
    path = write(tmp_path / "cases.yaml", "id: y1\ninput: a\n")
    with pytest.raises(GoldenError) as excinfo:
        load(tmp_path)
    assert str(path) in str(excinfo.value)
    assert "list" in str(excinfo.value)


def test_yaml_list_item_not_mapping(tmp_path: Path) -> None:
    path = write(tmp_path / "cases.yaml", "- id: y1\n- just text\n")
    with pytest.raises(GoldenError) as excinfo:
        load(tmp_path)
    assert str(path) in str(excinfo.value)


def test_yaml_list_item_missing_id(tmp_path: Path) -> None:
    path = write(tmp_path / "cases.yaml", "- id: y1\n- input: x\n")
    with pytest.raises(GoldenError) as excinfo:
        load(tmp_path)
    assert excinfo.value.field == "id"
    assert str(path) in str(excinfo.value)


def test_yaml_list_malformed(tmp_path: Path) -> None:
    path = write(tmp_path / "cases.yaml", "- id: y1\n- id: [unclosed\n")
    with pytest.raises(GoldenError) as excinfo:
        load(tmp_path)
    assert str(path) in str(excinfo.value)
    assert "line" in str(excinfo.value)


def test_yaml_list_non_utf8(tmp_path: Path) -> None:
    path = tmp_path / "cases.yaml"
    path.write_bytes(b"- id: caf\xe9\n")
    with pytest.raises(GoldenError) as excinfo:
        load(tmp_path)
    assert str(path) in str(excinfo.value)


# --- mixed formats ----------------------------------------------------------------------------


def test_mixed_formats_sorted(tmp_path: Path) -> None:
    write(tmp_path / "c.yaml", "- id: from-yaml\n")
    md(tmp_path / "b.md", "id: from-md\n")
    write(tmp_path / "a.jsonl", '{"id": "from-jsonl-1"}\n{"id": "from-jsonl-2"}\n')
    write(tmp_path / "d" / "e.yml", "- id: from-yml\n")
    assert ids(load(tmp_path)) == [
        "from-jsonl-1",
        "from-jsonl-2",
        "from-md",
        "from-yaml",
        "from-yml",
    ]


def test_a_single_file_is_read_by_its_extension(tmp_path: Path) -> None:
    path = write(tmp_path / "x.jsonl", '{"id": "only"}\n')
    assert ids(load(path)) == ["only"]


def test_iter_goldens_accepts_str(tmp_path: Path) -> None:
    md(tmp_path / "a.md", "input: x\n")
    assert ids(list(iter_goldens(str(tmp_path)))) == ["a"]


# --- packaged defaults and suites ---------------------------------------------------------------


def test_packaged_root_exists() -> None:
    root = packaged_root()
    assert root.is_dir()
    assert (root / "smoke").is_dir()


def test_packaged_goldens_load_cleanly() -> None:
    goldens = load(packaged_root())
    by_tier: dict[str, int] = {}
    for g in goldens:
        by_tier[g.tier] = by_tier.get(g.tier, 0) + 1
        assert g.has_origin, g.id
    assert by_tier.get("smoke", 0) >= 5
    assert by_tier.get("standard", 0) >= 5


def test_load_suite_none_is_packaged() -> None:
    suite = load_suite(None)
    packaged = load(packaged_root())
    assert ids(suite) == ids(packaged)
    assert sum(g.tier == "smoke" for g in suite) >= 5
    assert sum(g.tier == "standard" for g in suite) >= 5


def test_load_suite_missing_folder_is_packaged(tmp_path: Path) -> None:
    suite = load_suite(tmp_path / "does-not-exist")
    assert ids(suite) == ids(load(packaged_root()))


def test_load_suite_empty_folder_is_packaged(tmp_path: Path) -> None:
    assert ids(load_suite(tmp_path)) == ids(load(packaged_root()))


def test_load_suite_is_the_projects_own_goldens_only(tmp_path: Path) -> None:
    # A prompt project with one tier never gets the packaged goldens (nor the packaged
    # coding-agent tasks) of the tiers it lacks: they would join its gate and its eval.
    md(tmp_path / "smoke" / "mine.md", "input: x\n")
    md(tmp_path / "stretch" / "hard.md", "input: y\n")
    assert ids(load_suite(tmp_path)) == ["mine", "hard"]  # by path: smoke/ first
    assert load_suite(tmp_path, ["standard"]) == []


def test_load_suite_packaged_joins_the_projects_when_asked(tmp_path: Path) -> None:
    md(tmp_path / "smoke" / "mine.md", "input: x\n")
    packaged = load(packaged_root())
    suite = load_suite(tmp_path, packaged=True)
    assert set(ids(suite)) == {"mine", *ids(packaged)}
    assert ids(suite)[0] == "mine"  # the project's first, in its order


def test_load_suite_project_id_shadows_a_packaged_one(tmp_path: Path) -> None:
    taken = load(packaged_root())[0]
    md(tmp_path / "mine.md", f"id: {taken.id}\ninput: mine\n")
    suite = load_suite(tmp_path, packaged=True)
    assert [g.input for g in suite if g.id == taken.id] == ["mine"]


def test_load_suite_tiers_filter(tmp_path: Path) -> None:
    md(tmp_path / "smoke" / "mine.md", "input: x\n")
    md(tmp_path / "adversarial" / "evil.md", "input: y\n")
    assert ids(load_suite(tmp_path, ["smoke", "adversarial"])) == ["evil", "mine"]
    only_standard = load_suite(tmp_path, ["standard"], packaged=True)
    assert only_standard and {g.tier for g in only_standard} == {"standard"}


def test_holds_goldens_and_the_suite_name(tmp_path: Path) -> None:
    from assay.goldens import holds_goldens, suite_name

    assert not holds_goldens(tmp_path / "missing")
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "README.md").write_text("not a golden", encoding="utf-8")
    (tmp_path / "_drafts").mkdir()
    md(tmp_path / "_drafts" / "draft.md", "input: x\n")
    assert not holds_goldens(tmp_path)  # README.md and _drafts/ are not goldens
    assert suite_name("goldens", tmp_path, packaged=False) == "packaged"
    md(tmp_path / "deep" / "er" / "g.md", "input: x\n")
    assert holds_goldens(tmp_path) and holds_goldens(tmp_path / "deep" / "er" / "g.md")
    assert suite_name("goldens", tmp_path, packaged=False) == "goldens"
    assert suite_name("goldens", tmp_path, packaged=True) == "goldens + packaged"


def test_load_suite_packaged_tiers_filter() -> None:
    smoke = load_suite(None, ["smoke"])
    assert len(smoke) >= 5
    assert {g.tier for g in smoke} == {"smoke"}
    assert load_suite(None, ["stretch"]) == []


def test_load_suite_propagates_project_errors(tmp_path: Path) -> None:
    path = md(tmp_path / "bad.md", "tier: nope\n")
    with pytest.raises(GoldenError) as excinfo:
        load_suite(tmp_path)
    assert str(path) in str(excinfo.value)
    assert excinfo.value.field == "tier"


# --- frontmatter cache (large suites) ------------------------------------------------------------


def snapshot(goldens: list[Golden]) -> list[tuple[object, ...]]:
    return [
        (
            g.id,
            g.tier,
            g.source,
            g.input,
            g.expected,
            g.has_expected,
            g.rubric,
            [(a.op, a.negate, dict(a.args), a.text) for a in g.asserts],
            g.threshold,
            g.has_origin,
            dict(g.fields),
        )
        for g in goldens
    ]


def make_large_suite(root: Path, count: int) -> None:
    for i in range(count):
        tier = ("smoke", "standard", "stretch")[i % 3]
        body = "## Origin\nmade up\n" if i % 2 else "no origin\n"
        # a YAML date does not survive a JSON round trip: such files are never cached
        extra = "when: 2024-01-02\n" if i % 10 == 0 else ""
        md(
            root / tier / f"case-{i:04d}.md",
            f"input: {{n: {i}, text: 'hello {i}'}}\n"
            f"expected: 'answer {i}'\n"
            "asserts: ['contains:answer', {op: not-regex, value: '^x'}]\n" + extra,
            body,
        )
