"""The two YAML errors a newcomer meets first end in what to do: a tab used for indentation,
and a regex's backslash inside double quotes (YAML reads ``"\\d"`` as an unknown escape). The
parser's own words (libyaml's name neither the tab nor the escape) stay first, one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay._yaml import _Loader, yaml_load
from assay.errors import GoldenError
from tests.helpers.cli import run_cli
from tests.helpers.goldens import ORIGIN, write_golden

TAB_HINT = "tabs are not allowed for indentation (indent with spaces)"


def error_line(tmp_path: Path) -> str:
    code, out, err = run_cli(["gate", "goldens", "--self-test"], tmp_path)
    assert (code, out) == (1, "")
    assert "Traceback" not in err
    [line] = err.strip().splitlines()
    return line


@pytest.mark.parametrize(
    ("frontmatter", "line_number"),
    [
        ("id: g\ninput: q\nasserts:\n\t- is-json\n", 5),
        ("id: g\ninput: q\nvars:\n  a: 1\n\tb: 2\n", 6),
    ],
)
def test_a_tab_used_for_indentation_says_so(
    tmp_path: Path, frontmatter: str, line_number: int
) -> None:
    write_golden(tmp_path / "goldens", "g.md", frontmatter, ORIGIN)
    line = error_line(tmp_path)
    where = f"assay: error: {Path('goldens', 'g.md')}: malformed YAML at line {line_number}: "
    assert line.startswith(where), line
    assert line.endswith(f": {TAB_HINT}")


@pytest.mark.parametrize(
    ("assert_line", "escape"),
    [('  - {op: regex, value: "^\\d+$"}', "\\d"), ('  - "regex:\\w+"', "\\w")],
)
def test_a_backslash_in_double_quotes_says_to_use_single_quotes(
    tmp_path: Path, assert_line: str, escape: str
) -> None:
    write_golden(tmp_path / "goldens", "g.md", f"id: g\ninput: q\nasserts:\n{assert_line}\n")
    line = error_line(tmp_path)
    assert line.startswith(f"assay: error: {Path('goldens', 'g.md')}: malformed YAML at line 5: ")
    assert line.endswith(
        f"found unknown escape character {escape}: use single quotes for regexes: in double "
        f"quotes {escape} is an escape (or double the backslash: \\{escape})"
    )


def test_the_hints_come_from_either_parser_and_only_where_they_apply() -> None:
    import yaml

    for loader in (_Loader, yaml.SafeLoader):
        with pytest.raises(GoldenError, match=TAB_HINT.replace("(", r"\(").replace(")", r"\)")):
            yaml_load("a:\n\t- b\n", "x.yaml", loader=loader)
        with pytest.raises(GoldenError, match=r"in double quotes \\d is an escape"):
            yaml_load('a: "\\d"\n', "x.yaml", loader=loader)
        with pytest.raises(GoldenError) as caught:
            yaml_load("a: [b\n", "x.yaml", loader=loader)
        assert "tabs" not in caught.value.message and "quotes" not in caught.value.message
