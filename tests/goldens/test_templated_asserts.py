"""``{{ var }}`` in an assert's value is rendered with the golden's vars when it is loaded, as
promptfoo renders assert values and as the golden's prompt is rendered (Jinja2's sandbox, the
same names: vars, input, id, tier, title, role). It was matched as literal text: only the
promptfoo importer rendered it. An undefined name is one error line naming the file, the line
and the field, never an empty string."""

from __future__ import annotations

from pathlib import Path

from assay.asserts import parse_assert, render_spec
from assay.goldens import iter_goldens
from tests.helpers.cli import run_cli
from tests.helpers.goldens import ORIGIN, write_golden, write_json

CITIES = """\
id: capital
input: "What is the capital of {{ country }}?"
vars: [{country: France, city: Paris}, {country: Japan, city: Tokyo}]
asserts:
  - 'contains:{{ city }}'
  - {op: regex, value: '^{{ city }}\\b', flags: i}
  - {op: any-of, asserts: ['icontains:{{ city | upper }}', 'equals:never']}
"""


def gate(tmp_path: Path, outputs: dict[str, str]) -> tuple[int, str, str]:
    path = write_json(tmp_path / "outputs.json", outputs)
    return run_cli(["gate", "goldens", "--outputs", path, "--no-save"], tmp_path)


def test_each_golden_of_a_vars_list_checks_its_own_rendered_values(tmp_path: Path) -> None:
    write_golden(tmp_path / "goldens", "c.md", CITIES, ORIGIN)
    paris, tokyo = iter_goldens(tmp_path / "goldens")
    assert [spec.text for spec in paris.asserts[:2]] == ["contains:Paris", "regex:^Paris\\b"]
    assert paris.asserts[2].children is not None
    assert paris.asserts[2].children[0].args["value"] == "PARIS"
    assert tokyo.asserts[0].args == {"value": "Tokyo"}
    code, out, err = gate(tmp_path, {"capital#1": "Paris, of course.", "capital#2": "Osaka"})
    assert code == 0, err
    rows = {line.split()[1]: line.split()[0] for line in out.splitlines() if "capital#" in line}
    assert rows == {"capital#1": "PASS", "capital#2": "FAIL"}
    assert "contains:Tokyo: output does not contain 'Tokyo'" in out


def test_the_golden_s_own_names_render_and_literal_braces_can_be_kept(tmp_path: Path) -> None:
    frontmatter = (
        "id: g\ninput: {topic: rain}\ntitle: Weather\nvars: {n: 3}\nasserts:\n"
        "  - 'contains:{{ id }}/{{ tier }}/{{ input.topic }}/{{ title }}/{{ n }}'\n"
        '  - "contains:{% raw %}{{ name }}{% endraw %}"\n'
    )
    write_golden(tmp_path / "goldens", "g.md", frontmatter, ORIGIN)
    [golden] = iter_goldens(tmp_path / "goldens")
    assert [spec.args["value"] for spec in golden.asserts] == [
        "g/standard/rain/Weather/3",
        "{{ name }}",
    ]


def test_an_undefined_name_is_one_error_line_naming_the_file_line_and_field(
    tmp_path: Path,
) -> None:
    frontmatter = "id: g\ninput: q\nvars: {city: Paris}\nasserts:\n  - is-json\n"
    frontmatter += "  - {op: contains, value: 'in {{ cty }}'}\n"
    write_golden(tmp_path / "goldens", "g.md", frontmatter, ORIGIN)
    for args in (["gate", "goldens", "--self-test"], ["gate", "goldens", "--outputs", "o.json"]):
        write_json(tmp_path / "o.json", {"g": "in Paris"})
        code, out, err = run_cli(args, tmp_path)
        assert (code, out) == (1, "")
        [line] = err.strip().splitlines()
        assert line.startswith(
            f"assay: error: {Path('goldens', 'g.md')}:7: field 'asserts[1].value': "
            "the value template uses a name golden 'g' does not have ('cty' is undefined); "
            "a template sees input, id, tier, title and role"
        ), line


def test_a_rendered_regex_is_checked_once_rendered(tmp_path: Path) -> None:
    frontmatter = "id: g\ninput: q\nvars: {p: '(open'}\nasserts:\n  - 'regex:^{{ p }}'\n"
    write_golden(tmp_path / "goldens", "g.md", frontmatter, ORIGIN)
    code, _, err = run_cli(["gate", "goldens", "--self-test"], tmp_path)
    assert code == 1
    assert f"{Path('goldens', 'g.md')}:6: field 'asserts[0].value': invalid regex '^(open'" in err


def test_a_templated_default_assert_renders_with_each_golden_s_vars(tmp_path: Path) -> None:
    goldens = tmp_path / "goldens"
    (goldens).mkdir()
    (goldens / "_defaults.yaml").write_text("asserts:\n  - is-json\n  - 'contains:{{ city }}'\n")
    write_golden(goldens, "a.md", "id: a\ninput: q\nvars: {city: Paris}\n", ORIGIN)
    write_golden(goldens, "b.md", "id: b\ninput: q\nvars: {city: Rome}\n", ORIGIN)
    a, b = iter_goldens(goldens)
    assert (a.asserts[1].args["value"], b.asserts[1].args["value"]) == ("Paris", "Rome")
    write_golden(goldens, "c.md", "id: c\ninput: q\n", ORIGIN)
    code, _, err = run_cli(["gate", "goldens", "--self-test"], tmp_path)
    assert code == 1
    [line] = err.strip().splitlines()
    assert line.startswith(
        f"assay: error: {Path('goldens', '_defaults.yaml')}:3: field 'asserts[1].value': "
        "the value template uses a name golden 'c' does not have ('city' is undefined)"
    ), line
    assert line.endswith(f"(rendered with the vars of {Path('goldens', 'c.md')})")


def test_render_spec_renders_values_patterns_rubrics_and_children_only() -> None:
    seen: list[str] = []

    def render(text: str, field: str) -> str:
        seen.append(field)
        return text.replace("{{ x }}", "X")

    judge = parse_assert({"op": "judge", "rubric": "mentions {{ x }}", "threshold": 0.5})
    assert render_spec(judge, render).text == "judge:mentions X"
    group = parse_assert(
        {"op": "assert-set", "asserts": ["is-json", {"op": "contains-any", "value": ["{{ x }}"]}]}
    )
    rendered = render_spec(group, render)
    assert rendered.children is not None
    assert rendered.children[1].args["value"] == ["X"]
    assert rendered.args["asserts"][1] == {"op": "contains-any", "value": ["X"]}
    assert group.children is not None and group.children[1].args["value"] == ["{{ x }}"]
    plain = parse_assert({"op": "contains", "value": "x", "path": "/{{ x }}"})
    assert not plain.templated and render_spec(plain, render) is plain  # path is no value
    assert seen == ["rubric", "asserts[1].value[0]"]


def test_a_template_that_breaks_the_sandbox_or_does_not_parse_is_a_load_error(
    tmp_path: Path,
) -> None:
    for value, says in [
        ("{{ ''.__class__.__mro__ }}", "the sandbox refuses it"),
        ("{{ city ", "the value template has a syntax error at line 1"),
        ("{% include 'x' %}", "'include' is not available in an assert's template"),
        ("{{ city.upper }}", "neither text nor JSON"),
    ]:
        frontmatter = "id: g\ninput: q\nvars: {city: Paris}\nasserts:\n"
        frontmatter += f'  - {{op: contains, value: "{value}"}}\n'
        write_golden(tmp_path / "goldens", "g.md", frontmatter, ORIGIN)
        code, _, err = run_cli(["gate", "goldens", "--self-test"], tmp_path)
        assert code == 1
        [line] = err.strip().splitlines()
        assert f"{Path('goldens', 'g.md')}:6: field 'asserts[0].value': " in line, line
        assert says in line, line
