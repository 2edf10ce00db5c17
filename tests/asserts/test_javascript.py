"""The javascript op in the real engine (QuickJS), with promptfoo's semantics.

Each expectation is promptfoo's, read from its source: ``src/assertions/javascript.ts``
(``buildFunctionBody``, ``validateResult``, the catch that fails a throw), its
``src/assertions/scriptResultNormalization.ts`` (``normalizeScriptAssertionResult``: the
threshold rule, negation, the reason passed through) and ``src/types/index.ts``
(``isGradingResult``: pass, score and reason required).
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from assay.asserts import (
    CheckContext,
    CheckResult,
    OutputView,
    _javascript,
    parse_assert,
    run_assert,
)
from assay.cascade._cascade import evaluate
from assay.errors import GoldenError
from assay.goldens import Golden, build_goldens, check_python_files


def run(
    value: str, output: Any = "hello world", root: Path | None = None, **args: Any
) -> CheckResult:
    op = args.pop("op", "javascript")
    spec = parse_assert({"op": op, "value": value, **args})
    return run_assert(spec, OutputView(output), CheckContext(root=root))


def golden(**data: Any) -> Golden:
    return build_goldens({"id": "g", **data}, source="g.yaml", default_id=None, folder_tier=None)[0]


# ----------------------------------------------------------------- what the code returns


def test_a_boolean_decides() -> None:
    assert run("output.includes('world')").passed is True
    failed = run("output.includes('moon')")
    assert (failed.passed, failed.reason) == (False, "output.includes('moon') returned false")
    assert failed.evidence["reason"] == "javascript_failed"


def test_a_number_is_a_score_above_zero_or_at_least_the_threshold() -> None:
    # normalizeScriptAssertionResult: threshold === undefined ? result > 0 : result >= threshold
    assert run("output.length / 100").evidence["score"] == pytest.approx(0.11)
    assert run("output.length / 100").passed is True
    assert run("0").passed is False
    assert run("0", threshold=0).passed is True
    below = run("output.length / 100", threshold=0.5)
    assert below.passed is False
    assert "below the threshold 0.5" in (below.reason or "")


def test_a_grading_result_passes_its_reason_through() -> None:
    failed = run("({pass: false, score: 0.25, reason: 'too short'})")
    assert (failed.passed, failed.reason, failed.evidence["score"]) == (False, "too short", 0.25)
    # promptfoo applies no threshold to a JavaScript GradingResult: its pass decides.
    assert run("({pass: true, score: 0.1, reason: 'ok'})", threshold=0.5).passed is True


@pytest.mark.parametrize(
    "code",
    [
        "({pass: true})",  # isGradingResult needs score and reason
        "({pass: true, score: NaN, reason: 'x'})",
        "'yes'",
        "undefined",
        "NaN",
        "Infinity",
        "[true]",
    ],
)
def test_anything_else_is_a_failed_check_negated_or_not(code: str) -> None:
    for op in ("javascript", "not-javascript"):
        check = run(code, op=op)
        assert check.passed is False, (op, code)
        assert "not a boolean, a finite number or {pass, score, reason}" in (check.reason or "")


def test_a_throw_fails_negated_or_not_and_names_the_code() -> None:
    for op in ("javascript", "not-javascript"):
        check = run("JSON.parse(output).score > 0.5", op=op)
        assert check.passed is False
        assert check.reason is not None
        assert check.reason.startswith("JSON.parse(output).score > 0.5 threw SyntaxError")
        assert check.evidence["reason"] == "javascript_raised"
    thrown = run("x = 1;\nthrow 'plain text';")
    assert thrown.reason is not None and "threw thrown: plain text" in thrown.reason


def test_negation_keeps_promptfoos_score_and_reason() -> None:
    failed = run("output.includes('world')", op="not-javascript")
    assert failed.passed is False
    assert failed.evidence == {"reason": "negated", "score": 0.0}
    graded = run("({pass: true, score: 0.7, reason: 'polite'})", op="not-javascript")
    assert (graded.passed, graded.reason, graded.evidence["score"]) == (False, "polite", 0.7)
    passed = run("0.2", op="not-javascript", threshold=0.5)
    assert passed.passed is True
    assert passed.evidence == {"score": 0.2}  # a number keeps its own score


def test_a_promise_is_awaited() -> None:
    assert run("(async () => output.startsWith('hello'))()").passed is True
    rejected = run("Promise.reject(new Error('no luck'))")
    assert rejected.passed is False
    assert "threw Error: no luck" in (rejected.reason or "")


# ------------------------------------------------------------------- how code is read


def test_one_line_with_declarations_returns_its_last_statement() -> None:
    # buildFunctionBody's examples.
    output = '{"score": 0.8}'
    assert run("const s = JSON.parse(output).score; s > 0.5", output).passed is True
    assert run("const s = output; s === 'a;b'", "a;b").passed is True
    assert run("let n = output.length;; n === 3;", "abc").passed is True


def test_several_lines_are_a_function_body() -> None:
    body = "const words = output.split(' ');\nif (words.length < 2) return false;\nreturn true;\n"
    assert run(body).passed is True
    assert run(body, "one").passed is False
    # No return: the body returns undefined, which is no verdict (promptfoo: the same).
    assert run("output.length > 3\n").passed is True  # trimEnd: one line after all
    assert run("const a = 1;\noutput.length > 3").passed is False


def test_context_holds_vars_prompt_test_and_config() -> None:
    g = golden(
        input="capital of France?",
        vars={"city": "Paris"},
        asserts=[
            {
                "op": "javascript",
                "value": "output.includes(context.vars.city)"
                " && context.prompt.startsWith('capital')"
                " && context.test.vars.city === 'Paris' && context.config.strict === true",
                "config": {"strict": True},
            }
        ],
    )
    assert evaluate(g, "It is Paris.", "c").status == "pass"
    assert evaluate(g, "It is Lyon.", "c").status == "fail"


def test_a_json_output_at_a_path_arrives_as_a_value() -> None:
    check = run("typeof output === 'object' && output.n === 3", '{"a": {"n": 3}}', path="/a")
    assert check.passed is True


# ------------------------------------------------------------------------------ files


MODULE = """
const helper = (text) => text.trim().length;
module.exports = function (output, context) {
  console.log('noise that goes nowhere');
  return helper(output) > 3;
};
module.exports.named = (output, context) =>
  ({pass: output === context.vars.want, score: 1, reason: 'named'});
"""


def test_a_commonjs_file_and_a_named_function(tmp_path: Path) -> None:
    (tmp_path / "check.js").write_text(MODULE, encoding="utf-8")
    assert run("file://check.js", root=tmp_path).passed is True
    assert run("file://check.js", " ab ", root=tmp_path).passed is False
    g = golden(
        vars={"want": "yes"}, asserts=[{"op": "javascript", "value": "file://check.js:named"}]
    )
    assert evaluate(g, "yes", "c", ctx=CheckContext(root=tmp_path)).status == "pass"
    missing = run("file://check.js:nope", root=tmp_path)
    assert missing.passed is False and 'exports no function "nope"' in (missing.reason or "")


def test_a_default_export_object(tmp_path: Path) -> None:
    (tmp_path / "d.cjs").write_text("exports.default = (o) => o === 'x';\n", encoding="utf-8")
    assert run("file://d.cjs", "x", root=tmp_path).passed is True


def test_a_missing_file_is_refused_before_the_run(tmp_path: Path) -> None:
    g = golden(asserts=[{"op": "javascript", "value": "file://nowhere.js"}])
    with pytest.raises(GoldenError) as error:
        check_python_files([g], tmp_path)
    assert error.value.field == "asserts[0].value"
    assert "file://nowhere.js: no file" in error.value.message


# ------------------------------------------------------------------- the sandbox


@pytest.mark.parametrize(
    ("code", "says"),
    [
        ("require('fs').readFileSync('/etc/passwd', 'utf8').length > 0", 'require("fs") is not'),
        ("process.mainModule.require('child_process')", 'require("child_process") is not'),
        ("process.env.HOME !== undefined", "process.env is not available"),
        ("fetch('http://127.0.0.1:9/')", "fetch is not available"),
        ("new XMLHttpRequest()", "XMLHttpRequest is not available"),
        ("setTimeout(() => {}, 10)", "setTimeout is not available"),
    ],
)
def test_no_file_network_environment_or_timer(code: str, says: str) -> None:
    check = run(code)
    assert check.passed is False
    assert says in (check.reason or "")


def test_no_engine_module_is_reachable() -> None:
    # QuickJS's own std/os modules are not loaded, nor Node's globals.
    names = ["std", "os", "Buffer", "module", "exports", "__dirname", "print", "scriptArgs"]
    code = " && ".join(f"typeof {name} === 'undefined'" for name in names)
    assert run(code).passed is True


def test_globals_a_call_leaves_are_put_back() -> None:
    # Each call starts from the same state, so verdicts never depend on order or process.
    counter = "globalThis.seen = (globalThis.seen || 0) + 1;\nreturn seen === 1;"
    assert all(run(counter).passed for _ in range(5))
    assert run("JSON = null;\nreturn true").passed is True
    assert run("JSON.stringify({a: 1}) === '{\"a\":1}'").passed is True


@pytest.mark.parametrize(
    "tamper",
    [
        "String.prototype.includes = function () { return true; };",
        "Object.defineProperty(String.prototype, 'includes', {value: () => true});",
        "Array.prototype.some = function () { return true; };",
        "JSON.parse = function () { return {}; };",
    ],
)
def test_a_check_that_rewrites_a_built_in_changes_no_later_verdict(tamper: str) -> None:
    # Without frozen built-ins, one check could make every later check pass.
    run(f"try {{ {tamper} }} catch (e) {{}}\nreturn true")
    assert run("output.includes('zzz')").passed is False
    assert run("[1, 2].some((x) => x > 5)").passed is False
    assert run("JSON.parse('{\"a\": 1}').a === 1").passed is True


# ------------------------------------------------------------------------- budgets


def test_an_infinite_loop_is_a_failed_check_within_its_time_budget() -> None:
    started = time.monotonic()
    check = run("let n = 0;\nwhile (true) { n++; }", timeout_s=0.3)
    assert time.monotonic() - started < 3
    assert check.passed is False
    assert check.reason == "let n = 0; while (true) { n++; } did not finish within 0.3 s"
    assert check.evidence["reason"] == "javascript_timeout"
    assert run("output.length > 0").passed is True  # the engine goes on


def test_a_promise_chain_that_never_ends_is_bounded_too() -> None:
    code = "const spin = () => Promise.resolve().then(spin);\nreturn spin();"
    started = time.monotonic()
    check = run(code, timeout_s=0.3)
    assert time.monotonic() - started < 3
    assert check.passed is False and check.evidence["reason"] == "javascript_timeout"


def test_a_huge_allocation_is_a_failed_check_within_its_memory_budget() -> None:
    check = run("'x'.repeat(2 ** 27).length > 0", memory_mb=32)
    assert check.passed is False
    assert check.reason == "'x'.repeat(2 ** 27).length > 0 ran out of its memory budget (32 MB)"
    grown = run("const a = [];\nwhile (true) a.push(new Array(1e5).fill(1));", memory_mb=16)
    assert grown.evidence["reason"] == "javascript_memory"
    assert run("output.length > 0").passed is True


def test_deep_recursion_is_a_failed_check() -> None:
    check = run("function down(n) { return down(n + 1); }\nreturn down(0);")
    assert check.passed is False
    assert check.evidence["reason"] == "javascript_stack"


def test_the_engine_starts_no_thread() -> None:
    # The gate forks workers only while this process runs one thread (fork_is_safe).
    _javascript.reset_for_tests()
    before = threading.active_count()
    assert run("true").passed is True
    assert threading.active_count() == before


@pytest.mark.parametrize(
    ("args", "argument"), [({"timeout_s": 0}, "timeout_s"), ({"memory_mb": -1}, "memory_mb")]
)
def test_bad_budgets_are_bad_arguments(args: dict[str, Any], argument: str) -> None:
    check = run("true", **args)
    assert check.passed is False and argument in (check.reason or "")


# ------------------------------------------------------------------- load-time checks


def test_code_that_does_not_compile_is_a_loading_error() -> None:
    with pytest.raises(GoldenError) as error:
        golden(asserts=["is-json", {"op": "javascript", "value": "output.length >"}])
    assert error.value.field == "asserts[1].value"
    assert "does not compile: SyntaxError" in error.value.message


def test_a_missing_engine_is_one_line_saying_how_to_install_it(monkeypatch: Any) -> None:
    monkeypatch.setattr(_javascript, "ENGINE_MODULE", "_no_such_engine_for_assay")
    with pytest.raises(GoldenError) as error:
        golden(asserts=[{"op": "javascript", "value": "true"}])
    assert error.value.message == _javascript.INSTALL_HINT
    assert "pip install 'assay[javascript]'" in error.value.message
    _javascript.reset_for_tests()
    check = run("true")  # through the Python API: a failed check saying the same
    assert check.passed is False and check.reason == _javascript.INSTALL_HINT


def test_an_unknown_argument_is_a_loading_error() -> None:
    with pytest.raises(GoldenError, match="unknown argument 'timout_s'"):
        golden(asserts=[{"op": "javascript", "value": "true", "timout_s": 1}])
