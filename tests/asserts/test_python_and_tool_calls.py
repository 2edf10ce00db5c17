"""The python op (a project function as a check) and the tool-call ops."""

from __future__ import annotations

import json
import textwrap
import threading
import uuid
from pathlib import Path
from typing import Any

import pytest

from assay.asserts import CheckContext, CheckResult, OutputView, parse_assert, run_assert
from assay.asserts._python import function_context
from assay.cascade._cascade import evaluate
from assay.goldens import Golden, build_goldens

CHECKS = """
import asyncio
import time


def yes(output, context):
    return True


def no(output, context):
    return False


def length_score(output, context):
    return len(output) / 10


def zero(output, context):
    return 0


def graded(output, context):
    return {"pass": True, "score": 0.3, "reason": "partly right"}


def refused(output, context):
    return {"pass": False, "reason": "it refused"}


async def async_yes(output, context):
    await asyncio.sleep(0)
    return output == "hello"


def slow(output, context):
    time.sleep(0.6)
    return True


def boom(output, context):
    raise ValueError("bad output")


def chatty(output, context):
    return "yes"


def nan(output, context):
    return float("nan")


NOT_A_FUNCTION = 3
"""


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "checks.py").write_text(CHECKS)
    return tmp_path


def run(root: Path, value: str, output: Any = "hello", **args: Any) -> CheckResult:
    spec = parse_assert({"op": "python", "value": value, **args})
    return run_assert(spec, OutputView(output), CheckContext(root=root))


def golden(**data: Any) -> Golden:
    return build_goldens({"id": "g", **data}, source="g.yaml", default_id=None, folder_tier=None)[0]


def test_bool_results(root: Path) -> None:
    passed = run(root, "checks.py:yes")
    assert passed.passed is True
    assert passed.evidence == {"score": 1.0, "function": "checks.py:yes"}
    failed = run(root, "checks.py:no")
    assert failed.passed is False
    assert failed.reason == "checks.py:no returned False"
    assert failed.evidence["score"] == 0.0


def test_number_is_a_score_passing_above_zero_without_threshold(root: Path) -> None:
    check = run(root, "checks.py:length_score")  # "hello" -> 0.5
    assert check.passed is True
    assert check.evidence["score"] == 0.5
    assert run(root, "checks.py:zero").passed is False


def test_number_against_the_asserts_threshold(root: Path) -> None:
    assert run(root, "checks.py:length_score", threshold=0.5).passed is True
    below = run(root, "checks.py:length_score", threshold=0.6)
    assert below.passed is False
    assert "below the threshold 0.6" in (below.reason or "")
    # promptfoo: with a threshold, 0 may pass (score >= threshold).
    assert run(root, "checks.py:zero", threshold=0).passed is True


def test_mapping_results(root: Path) -> None:
    graded = run(root, "checks.py:graded")
    assert graded.passed is True
    assert graded.evidence["score"] == 0.3
    below = run(root, "checks.py:graded", threshold=0.5)
    assert below.passed is False
    assert below.reason == "checks.py:graded scored 0.3, below the threshold 0.5: partly right"
    refused = run(root, "checks.py:refused")
    assert (refused.passed, refused.reason) == (False, "it refused")


def test_async_function(root: Path) -> None:
    assert run(root, "checks.py:async_yes").passed is True
    assert run(root, "checks.py:async_yes", output="bye").passed is False


def test_timeout_is_a_failed_check(root: Path) -> None:
    check = run(root, "checks.py:slow", timeout_s=0.2)
    assert check.passed is False
    assert check.reason == "checks.py:slow did not return within 0.2 s"
    assert check.evidence["reason"] == "python_timeout"
    # The abandoned thread ends on its own; wait for it, so later tests that fork workers
    # (which refuses while another thread runs) see a single-threaded process.
    for thread in threading.enumerate():
        if thread.name == "assay-python-assert":
            thread.join(5)


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("checks.py:boom", "checks.py:boom raised ValueError: bad output"),
        ("checks.py:chatty", "checks.py:chatty returned 'yes', not a bool"),
        ("checks.py:nan", "checks.py:nan returned nan, not a bool"),
        ("checks.py:missing", "checks.py:missing: checks.py has no function 'missing'"),
        ("checks.py:NOT_A_FUNCTION", "checks.py:NOT_A_FUNCTION: 'NOT_A_FUNCTION' in checks.py"),
        ("nofile.py:f", "nofile.py:f: no file"),
        ("no_such_module_for_assay:f", "no_such_module_for_assay:f: importing"),
        ("checks.py", "is not a function reference"),
    ],
)
def test_every_problem_is_a_failed_check_naming_the_function(
    root: Path, value: str, reason: str
) -> None:
    for negated in (False, True):
        op = "not-python" if negated else "python"
        spec = parse_assert({"op": op, "value": value})
        check = run_assert(spec, OutputView("hello"), CheckContext(root=root))
        assert check.passed is False  # a broken check never passes, negated or not
        assert reason in (check.reason or "")


def test_a_module_is_imported_from_the_project_root(tmp_path: Path) -> None:
    name = f"assay_test_checks_{uuid.uuid4().hex}"
    (tmp_path / f"{name}.py").write_text("def check(output, context):\n    return 1\n")
    assert run(tmp_path, f"{name}:check").passed is True


def test_the_file_is_imported_once(tmp_path: Path) -> None:
    marker = tmp_path / "imports.txt"
    (tmp_path / "once.py").write_text(
        textwrap.dedent(
            f"""
            with open({str(marker)!r}, "a") as f:
                f.write("x")

            def check(output, context):
                return True
            """
        )
    )
    for _ in range(3):
        assert run(tmp_path, "once.py:check").passed is True
    assert marker.read_text() == "x"


def test_context_gives_vars_input_id_tier_and_expected_only_when_present() -> None:
    asserts = [{"op": "python", "value": "checks.py:echo"}]
    with_expected = golden(input="q", expected="a", vars={"city": "Oslo"}, asserts=asserts)
    assert function_context(with_expected) == {
        "vars": {"city": "Oslo"},
        "input": "q",
        "id": "g",
        "tier": "standard",
        "expected": "a",
        # promptfoo's names (its src/assertions/index.ts: context.prompt, context.test.vars)
        "prompt": "q",
        "test": {"vars": {"city": "Oslo"}, "description": "g"},
    }
    assert "expected" not in function_context(golden(input="q", asserts=asserts))


def test_the_function_gets_the_golden_through_the_cascade(tmp_path: Path) -> None:
    (tmp_path / "ctx.py").write_text(
        "def check(output, context):\n"
        "    return context['id'] == 'g' and context['vars'] == {'n': 1} and output == 'out'\n"
    )
    g = golden(input="q", vars={"n": 1}, asserts=[{"op": "python", "value": "ctx.py:check"}])
    assert evaluate(g, "out", "c", ctx=CheckContext(root=tmp_path)).status == "pass"


def test_a_python_score_counts_in_the_golden(root: Path) -> None:
    ctx = CheckContext(root=root)
    g = golden(asserts=[{"op": "python", "value": "checks.py:length_score"}, "contains:hello"])
    result = evaluate(g, "hello", "c", ctx=ctx)
    assert (result.status, result.score) == ("pass", 0.75)  # (0.5 + 1) / 2
    strict = golden(
        asserts=[{"op": "python", "value": "checks.py:length_score"}, "contains:hello"],
        threshold=0.8,
    )
    assert evaluate(strict, "hello", "c", ctx=ctx).status == "fail"


# ------------------------------------------------------------------ tool calls


def call(name: str, arguments: Any) -> dict[str, Any]:
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {"id": "c1", "type": "function", "function": {"name": name, "arguments": text}}


WEATHER = call("get_weather", {"city": "Oslo", "unit": "c"})
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "unit": {"enum": ["c", "f"]}},
                "required": ["city"],
            },
        },
    }
]


def tool_check(raw: dict[str, Any], output: Any, *, text: bool = True) -> CheckResult:
    return run_assert(parse_assert(raw), OutputView(output, text=text))


@pytest.mark.parametrize(
    "output",
    [
        json.dumps(WEATHER),
        json.dumps([WEATHER, call("search", {"q": "x"})]),
        json.dumps({"role": "assistant", "content": None, "tool_calls": [WEATHER]}),
        json.dumps({"choices": [{"message": {"tool_calls": [WEATHER]}}]}),
        {"tool_calls": [{"type": "function", "function": {"name": "f", "arguments": {}}}]},
    ],
    ids=["one", "list", "message", "response", "parsed-object-arguments"],
)
def test_valid_tool_call_shapes(output: Any) -> None:
    check = tool_check({"op": "is-valid-tool-call"}, output, text=isinstance(output, str))
    assert check.passed is True


@pytest.mark.parametrize(
    ("output", "reason"),
    [
        ("Sunny in Oslo", "not JSON"),
        ('{"tool_calls": []}', "no tool call"),
        ('{"answer": 1}', "holding no tool_calls"),
        (json.dumps(call("", {})), "has no name"),
        (json.dumps(call("f", "{not json")), "arguments of 'f' are not JSON"),
        (json.dumps(call("f", "[1]")), "arguments of 'f' are a JSON array"),
    ],
)
def test_invalid_tool_calls_say_what_is_wrong(output: str, reason: str) -> None:
    check = tool_check({"op": "is-valid-tool-call"}, output)
    assert check.passed is False
    assert reason in (check.reason or "")


def test_valid_tool_call_against_tool_definitions() -> None:
    assert tool_check({"op": "is-valid-tool-call", "tools": TOOLS}, json.dumps(WEATHER)).passed
    unknown = tool_check({"op": "is-valid-tool-call", "tools": TOOLS}, json.dumps(call("x", {})))
    assert unknown.passed is False
    assert unknown.reason == "'x' is not a defined tool (defined: get_weather)"
    bad = tool_check(
        {"op": "is-valid-tool-call", "tools": TOOLS},
        json.dumps(call("get_weather", {"city": "Oslo", "unit": "k"})),
    )
    assert bad.passed is False
    assert "at '/unit'" in (bad.reason or "")
    assert bad.evidence["reason"] == "schema_validation_failed"
    missing = tool_check(
        {"op": "is-valid-tool-call", "tools": TOOLS}, json.dumps(call("get_weather", {}))
    )
    assert "at '/city'" in (missing.reason or "")


def test_tool_call_by_name_and_arguments() -> None:
    output = json.dumps([call("search", {"q": "x"}), WEATHER])
    assert tool_check({"op": "tool-call", "name": "get_weather"}, output).passed
    assert tool_check(
        {"op": "tool-call", "name": "get_weather", "arguments": {"city": "Oslo"}}, output
    ).passed
    wrong = tool_check({"op": "tool-call", "name": "book_flight"}, output)
    assert wrong.passed is False
    assert wrong.reason == "no call to 'book_flight' (the output calls 'search', 'get_weather')"
    differs = tool_check(
        {"op": "tool-call", "name": "get_weather", "arguments": {"city": "Bergen"}}, output
    )
    assert differs.passed is False
    assert differs.reason == 'argument \'city\' is "Oslo", expected "Bergen"'
    missing = tool_check(
        {"op": "tool-call", "name": "get_weather", "arguments": {"days": 3}}, output
    )
    assert missing.reason == "argument 'days' is missing"


def test_tool_call_with_an_arguments_schema() -> None:
    schema = {"type": "object", "properties": {"unit": {"const": "f"}}}
    check = tool_check(
        {"op": "tool-call", "name": "get_weather", "schema": schema}, WEATHER, text=False
    )
    assert check.passed is False
    assert "at '/unit'" in (check.reason or "")
    schema["properties"] = {"unit": {"const": "c"}}
    assert tool_check(
        {"op": "tool-call", "name": "get_weather", "schema": schema}, WEATHER, text=False
    ).passed


def test_tool_call_in_a_golden_fails_without_a_call() -> None:
    g = golden(asserts=[{"op": "tool-call", "name": "get_weather"}])
    result = evaluate(g, "It is sunny.", "c")
    assert result.status == "fail"
    assert result.checks[0].reason == "the output is not JSON, so it holds no tool call"


# ------------------------------------------------------------------ latency and cost


def test_latency_and_cost_without_a_measurement_fail_even_negated() -> None:
    for op, reason in (
        (
            "latency",
            "no latency measured (a static output, or an answer cached before assay kept it)",
        ),
        ("cost", "no cost measured (a static output, or an answer cached before assay kept it)"),
    ):
        for full in (op, f"not-{op}"):
            check = run_assert(parse_assert({"op": full, "threshold": 1}), OutputView("hi"))
            assert (check.passed, check.reason) == (False, reason)


def test_latency_reaches_the_check_through_the_cascade() -> None:
    g = golden(asserts=[{"op": "latency", "threshold": 100}, {"op": "cost", "threshold": 0.5}])
    assert evaluate(g, "hi", "c", latency_ms=50.0, cost_usd=0.1).status == "pass"
    slow = evaluate(g, "hi", "c", latency_ms=150.0, cost_usd=0.1)
    assert slow.status == "fail"
    assert slow.checks[0].reason == "the call took 150 ms, over the 100 ms budget"


def test_a_check_file_edited_to_the_same_size_runs_its_new_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A .pyc the project's own tools wrote (bytecode on, as on a fresh machine) still passes
    # for a source edited within the same second to the same size: the new code must run.
    import os
    import py_compile

    from assay.asserts import _python

    monkeypatch.setattr("sys.dont_write_bytecode", False)
    source = tmp_path / "checks.py"
    source.write_text("def f(output, context):\n    return 1 > 0\n", encoding="utf-8")
    assert run(tmp_path, "checks.py:f").passed is True
    py_compile.compile(str(source), doraise=True)
    stamp = source.stat()
    source.write_text("def f(output, context):\n    return 1 < 0\n", encoding="utf-8")
    os.utime(source, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    monkeypatch.setattr(_python, "_RESOLVED", {})  # as a new run starts
    assert run(tmp_path, "checks.py:f").passed is False
