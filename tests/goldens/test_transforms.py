"""Output transforms on a golden, in ``_defaults.yaml`` and on one assert, in promptfoo's order.

promptfoo's order and precedence, from its source: ``src/evaluator.ts`` merges
``testCase.options = {...defaultTest.options, ...testCase.options}`` (a test's transform
replaces the default one) and applies ``test.options.transform`` to the output before
``runAssertions``; ``src/assertions/index.ts`` (``runAssertion``) applies an assertion's own
``transform`` to that output, for that assertion only; ``src/util/transform.ts`` makes one line
of inline code an expression, and a transform returning null/undefined an error.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from assay.asserts import CheckContext
from assay.cascade._cascade import evaluate
from assay.errors import GoldenError
from assay.goldens import Golden, build_goldens, check_python_files, load_suite, read_defaults


def golden(**data: Any) -> Golden:
    return build_goldens({"id": "g", **data}, source="g.yaml", default_id=None, folder_tier=None)[0]


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_a_golden_transform_rewrites_the_output_for_every_assert() -> None:
    g = golden(
        transform={"javascript": "JSON.parse(output).answer"},
        asserts=["contains:Paris", {"op": "javascript", "value": "output === 'Paris'"}],
    )
    assert evaluate(g, '{"answer": "Paris"}', "c").status == "pass"
    assert evaluate(g, '{"answer": "Lyon"}', "c").status == "fail"


def test_a_non_string_result_is_a_json_value_for_what_follows() -> None:
    # promptfoo's outputString: JSON.stringify of an object; assay's text view: compact JSON.
    g = golden(
        transform={"javascript": "({n: output.length, words: output.split(' ')})"},
        asserts=[
            "is-json",
            {"op": "equals", "path": "/n", "value": 11},
            'contains:"words":["hello","world"]',
            {"op": "javascript", "value": "output.n === 11 && Array.isArray(output.words)"},
        ],
    )
    assert evaluate(g, "hello world", "c").status == "pass"


def test_an_asserts_transform_is_for_that_assert_only_after_the_goldens() -> None:
    g = golden(
        transform={"javascript": "output.trim()"},
        asserts=[
            {
                "op": "equals",
                "value": "HELLO",
                "exact": True,
                "transform": {"javascript": "output.toUpperCase()"},
            },
            {"op": "equals", "value": "hello", "exact": True},  # the golden's transform only
        ],
    )
    assert evaluate(g, "  hello  ", "c").status == "pass"


def test_a_goldens_own_transform_replaces_the_defaults(tmp_path: Path) -> None:
    write(tmp_path, "_defaults.yaml", "transform:\n  javascript: output.toUpperCase()\n")
    write(tmp_path, "a.yaml", "- id: a\n  asserts: ['equals:HELLO']\n")
    write(
        tmp_path,
        "b.yaml",
        "- {id: b, transform: {javascript: \"output + '!'\"}, asserts: ['equals:hello!']}\n",
    )
    write(tmp_path, "c.yaml", "- id: c\n  defaults: false\n  asserts: ['equals:hello']\n")
    by_id = {g.id: g for g in load_suite(tmp_path)}
    for name in ("a", "b", "c"):
        assert evaluate(by_id[name], "hello", "x").status == "pass", name
    defaults = read_defaults(tmp_path)
    assert defaults is not None and defaults.to_dict()["transform"] == {
        "javascript": "output.toUpperCase()"
    }


def test_a_python_transform_file_and_inline(tmp_path: Path) -> None:
    write(
        tmp_path,
        "tx.py",
        "def get_transform(output, context):\n    return output.split(',')\n\n"
        "def first(output, context):\n    return output[0]\n",
    )
    ctx = CheckContext(root=tmp_path)
    g = golden(
        transform={"python": "file://tx.py"}, asserts=[{"op": "equals", "value": ["a", "b"]}]
    )
    assert evaluate(g, "a,b", "c", ctx=ctx).status == "pass"
    g = golden(
        transform={"python": "file://tx.py"},
        asserts=[
            {
                "op": "equals",
                "value": "a",
                "exact": True,
                "transform": {"python": "file://tx.py:first"},
            }
        ],
    )
    assert evaluate(g, "a,b", "c", ctx=ctx).status == "pass"
    g = golden(transform={"python": "output.replace('-', '')"}, asserts=["equals:abc"])
    assert evaluate(g, "a-b-c", "c").status == "pass"
    g = golden(transform={"python": "tx.py:first"}, asserts=["equals:a"])  # the checks.py:fn form
    assert evaluate(g, "a,b", "c", ctx=ctx).status == "pass"


def test_the_transform_sees_the_goldens_context() -> None:
    g = golden(
        vars={"suffix": "!"},
        transform={"javascript": "output + context.vars.suffix"},
        asserts=["equals:hi!"],
    )
    assert evaluate(g, "hi", "c").status == "pass"


@pytest.mark.parametrize(
    ("transform", "says"),
    [
        (
            {"javascript": "JSON.parse(output).a"},
            "Transform failed (javascript: JSON.parse(output).a)",
        ),
        ({"javascript": "output.missing"}, "did not return a value"),
        ({"javascript": "null"}, "did not return a value"),
        ({"python": "None"}, "did not return a value"),
        ({"python": "1 / 0"}, "raised ZeroDivisionError"),
    ],
)
def test_a_failed_transform_is_an_error_of_the_golden_not_a_verdict(
    transform: dict[str, str], says: str
) -> None:
    g = golden(transform=transform, asserts=["contains:x"])
    result = evaluate(g, "not json", "c")
    assert (result.status, result.score, result.passed) == ("error", None, False)
    assert says in result.notes[0]


def test_a_failed_assert_transform_is_an_error_too() -> None:
    g = golden(
        asserts=[
            "contains:not",
            {"op": "contains", "value": "x", "transform": {"javascript": "JSON.parse(output)"}},
        ]
    )
    result = evaluate(g, "not json", "c")
    assert result.status == "error" and result.score is None
    assert "Transform failed" in result.notes[0] and "contains:x" in result.notes[0]


@pytest.mark.parametrize(
    ("transform", "field", "says"),
    [
        ({"javascipt": "output"}, "transform.javascipt", "unknown transform key 'javascipt'"),
        ({"javascript": "output", "python": "output"}, "transform", "exactly one key"),
        ({"javascript": 3}, "transform.javascript", "must be code or a file:// reference"),
        ("output.trim()", "transform", "a transform is a mapping"),
        ({"javascript": "output.trim("}, "transform.javascript", "does not compile"),
        ({"python": "output.strip("}, "transform.python", "does not compile"),
    ],
)
def test_a_bad_transform_is_one_loading_error_naming_its_field(
    transform: Any, field: str, says: str
) -> None:
    with pytest.raises(GoldenError) as error:
        golden(transform=transform)
    assert error.value.field == field
    assert says in error.value.message
    with pytest.raises(GoldenError) as error:
        golden(asserts=[{"op": "contains", "value": "x", "transform": transform}])
    assert error.value.field == f"asserts[0].{field}"


def test_a_bad_defaults_transform_names_the_defaults_file(tmp_path: Path) -> None:
    path = write(tmp_path, "_defaults.yaml", "vars: {a: 1}\ntransform:\n  ruby: output\n")
    with pytest.raises(GoldenError) as error:
        read_defaults(tmp_path)
    assert error.value.source == f"{path}:3"
    assert error.value.field == "transform.ruby"


def test_a_transforms_missing_file_is_refused_before_the_run(tmp_path: Path) -> None:
    for transform in ({"javascript": "file://gone.js"}, {"python": "file://gone.py"}):
        g = golden(transform=transform)
        with pytest.raises(GoldenError) as error:
            check_python_files([g], tmp_path)
        assert error.value.field == f"transform.{next(iter(transform))}"
        assert "no file" in error.value.message
    g = golden(
        asserts=[{"op": "contains", "value": "x", "transform": {"python": "file://gone.py:f"}}]
    )
    with pytest.raises(GoldenError) as error:
        check_python_files([g], tmp_path)
    assert error.value.field == "asserts[0].transform.python"


def test_a_near_miss_of_the_key_is_caught() -> None:
    with pytest.raises(GoldenError, match="did you mean 'transform'"):
        golden(transfrom={"javascript": "output"})
