"""The python op in promptfoo's forms: ``file://x.py[:fn]`` and inline code.

Expectations are promptfoo's (its ``src/assertions/python.ts``: ``buildPythonScript``,
``normalizePythonScriptResult``; ``src/util/transform.ts``'s ``get_transform`` default), beside
the ``checks.py:fn`` form, which keeps working (tests/asserts/test_python_and_tool_calls.py).
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from assay.asserts import CheckContext, CheckResult, OutputView, parse_assert, run_assert
from assay.asserts._python import code_form, reference_problem
from assay.cascade._cascade import evaluate
from assay.errors import GoldenError
from assay.goldens import build_goldens, check_python_files

CHECKS = """
def get_assert(output, context):
    return {"pass": "world" in output, "score": 0.9, "reason": "default function"}


def named(output, context):
    return context["vars"]["want"] in output


def snake(output, context):
    return {"pass": True, "score": 0.4, "reason": "snake", "named_scores": {"a": 1}}


def text_true(output, context):
    return "TRUE"
"""


def run(
    value: str, output: Any = "hello world", root: Path | None = None, **args: Any
) -> CheckResult:
    op = args.pop("op", "python")
    spec = parse_assert({"op": op, "value": value, **args})
    return run_assert(spec, OutputView(output), CheckContext(root=root))


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "pf_checks.py").write_text(CHECKS, encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize(
    ("value", "form"),
    [
        ("checks.py:fn", "reference"),
        ("sub/dir/checks.py:fn", "reference"),
        ("pkg.module:fn", "reference"),
        ("file://checks.py", "file"),
        ("file://checks.py:fn", "file"),
        ("'world' in output", "inline"),
        ("len(output) > 3", "inline"),
        ("lambda:x", "inline"),  # a keyword: no module is called lambda
        ("{'pass': True, 'score': 1, 'reason': 'x'}", "inline"),
        ("x = 1\nreturn x", "inline"),
        ("output[1:3] == 'el'", "inline"),
    ],
)
def test_one_rule_says_which_form_a_value_is(value: str, form: str) -> None:
    assert code_form(value) == form


def test_a_file_is_named_without_its_function_is_still_refused() -> None:
    assert "is not a function reference" in (reference_problem("checks.py") or "")
    assert (
        reference_problem("file://checks.txt")
        == "'file://checks.txt': a python file must end in .py"
    )


def test_a_file_reference_calls_get_assert_or_the_named_function(root: Path) -> None:
    default = run("file://pf_checks.py", root=root)
    assert default.passed is True and default.evidence["score"] == 0.9
    g = build_goldens(
        {
            "id": "g",
            "vars": {"want": "hello"},
            "asserts": [{"op": "python", "value": "file://pf_checks.py:named"}],
        },
        source="g.yaml",
        default_id=None,
        folder_tier=None,
    )[0]
    assert evaluate(g, "hello there", "c", ctx=CheckContext(root=root)).status == "pass"
    assert evaluate(g, "bye", "c", ctx=CheckContext(root=root)).status == "fail"


def test_promptfoos_reading_of_the_result(root: Path) -> None:
    # snake_case keys read as camelCase; a score under the threshold fails with promptfoo's words.
    below = run("file://pf_checks.py:snake", root=root, threshold=0.5)
    assert below.passed is False
    assert below.reason == "Python score 0.4 is less than threshold 0.5: snake"
    assert run("file://pf_checks.py:text_true", root=root).passed is True  # 'true', any case
    assert run("'0.75'", threshold=0.7).passed is True  # parseFloat of the text
    assert run("'0.75 points'", threshold=0.8).passed is False
    assert run('\'{"pass": true, "score": 1, "reason": "json text"}\'').passed is True
    for bad in ("None", "'maybe'", "{'pass': True}", "float('nan')"):
        for op in ("python", "not-python"):
            check = run(bad, op=op)
            assert check.passed is False, (bad, op)
            assert "not a boolean, a finite number" in (check.reason or ""), bad


def test_inline_one_line_is_an_expression() -> None:
    assert run("'world' in output").passed is True
    assert run("json.loads(output)['n'] == 2", '{"n": 2}').passed is True  # json is imported
    assert run("len(output) / 100", threshold=0.1).passed is True
    failed = run("output.startswith('bye')")
    assert (failed.passed, failed.reason) == (False, "output.startswith('bye') returned false")


def test_inline_lines_are_the_body_of_main() -> None:
    body = (
        "words = output.split()\nif len(words) < 2:\n    return False\n"
        "return {'pass': True, 'score': 0.5, 'reason': str(len(words))}"
    )
    check = run(body)
    assert check.passed is True and check.evidence["score"] == 0.5
    assert run(body, "one").passed is False
    indented = "  x = output.upper()\n  return 'WORLD' in x"  # the code's own indentation
    assert run(indented).passed is True


def test_inline_code_sees_the_context() -> None:
    g = build_goldens(
        {
            "id": "g",
            "input": "q",
            "vars": {"city": "Oslo"},
            "asserts": [
                {
                    "op": "python",
                    "value": "context['vars']['city'] in output and context['prompt'] == 'q'",
                }
            ],
        },
        source="g.yaml",
        default_id=None,
        folder_tier=None,
    )[0]
    assert evaluate(g, "Oslo", "c").status == "pass"


def test_a_raise_and_a_timeout_are_failed_checks_naming_the_code() -> None:
    for op in ("python", "not-python"):
        raised = run("1 / 0", op=op)
        assert (
            raised.passed is False
            and raised.reason == "1 / 0 raised ZeroDivisionError: division by zero"
        )
    slow = run("__import__('time').sleep(1) or True", timeout_s=0.2)
    assert slow.passed is False and slow.evidence["reason"] == "python_timeout"
    for thread in threading.enumerate():  # later tests fork, which needs one thread
        if thread.name == "assay-python-assert":
            thread.join(5)


def test_inline_code_that_does_not_compile_is_a_loading_error() -> None:
    with pytest.raises(GoldenError) as error:
        build_goldens(
            {"id": "g", "asserts": [{"op": "python", "value": "output ==="}]},
            source="g.yaml",
            default_id=None,
            folder_tier=None,
        )
    assert error.value.field == "asserts[0].value"
    assert "does not compile: SyntaxError" in error.value.message


def test_a_missing_file_is_refused_before_the_run(tmp_path: Path) -> None:
    g = build_goldens(
        {"id": "g", "asserts": [{"op": "python", "value": "file://gone.py"}]},
        source="g.yaml",
        default_id=None,
        folder_tier=None,
    )[0]
    with pytest.raises(GoldenError) as error:
        check_python_files([g], tmp_path)
    assert error.value.field == "asserts[0].value" and "no file" in error.value.message
