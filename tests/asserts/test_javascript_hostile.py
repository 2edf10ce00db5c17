"""JavaScript checks written to break the engine's promises (assay.asserts._javascript): each
hostile check is a failed check naming it, never a hang or a crash of assay, and no check can
change the verdict of a check after it (the internals are out of reach, every global a call
adds is taken back, every built-in is frozen, no job outlives its call)."""

from __future__ import annotations

import time
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
from assay.asserts._transform import Transform, TransformFailed, apply_transform


def run(value: str, output: Any = "hello world", **args: Any) -> CheckResult:
    op = args.pop("op", "javascript")
    spec = parse_assert({"op": op, "value": value, **args})
    return run_assert(spec, OutputView(output), CheckContext())


def bounded(value: str, seconds: float = 3.0, **args: Any) -> CheckResult:
    started = time.monotonic()
    check = run(value, timeout_s=0.3, **args)
    assert time.monotonic() - started < seconds, value
    return check


# ------------------------------------------------------- no check reaches another's verdict


@pytest.mark.parametrize(
    "probe", ["typeof __assay_compile", "typeof __assay_call", "typeof __assay_take"]
)
def test_the_engine_internals_are_out_of_reach(probe: str) -> None:
    # With __assay_compile a check counted its calls (its index grew), so its verdict
    # depended on how many checks this process ran before it.
    assert run(f"{probe} === 'undefined'").passed is True


@pytest.mark.parametrize(
    ("leave", "probe"),
    [
        (
            "Object.defineProperty(globalThis, 'hidden', {value: 1, configurable: true})",
            "typeof hidden === 'undefined'",
        ),
        ("Object.defineProperty(globalThis, 'fixed', {value: 1})", "typeof fixed === 'undefined'"),
        ("globalThis[Symbol.for('left')] = 1", "globalThis[Symbol.for('left')] === undefined"),
        ("Object.setPrototypeOf(globalThis, {inherited: 1})", "typeof inherited === 'undefined'"),
        ("Object.preventExtensions(globalThis)", "(scratch = 1) === 1 && scratch === 1"),
        ("Error.captureStackTrace(globalThis)", "!Object.hasOwn(globalThis, 'stack')"),
    ],
)
def test_no_global_a_call_leaves_reaches_the_next(leave: str, probe: str) -> None:
    assert run(probe).passed is True  # as in a fresh process
    run(f"{leave};\nreturn true;")
    assert run(probe).passed is True


@pytest.mark.parametrize(
    "tamper",
    [
        "Object.getPrototypeOf([][Symbol.iterator]()).next = () => ({done: true});",
        "Object.getPrototypeOf(''[Symbol.iterator]()).next = () => ({done: true});",
        "Object.getPrototypeOf(function* () {}).prototype.next = () => ({done: true});",
        "Object.getPrototypeOf(new Map().entries()).next = () => ({done: true});",
        "Object.defineProperty(process, 'env', {value: {}});",
    ],
)
def test_built_ins_no_global_reaches_are_frozen_too(tamper: str) -> None:
    probe = (
        "[...[1, 2]].length === 2 && [...'ab'].length === 2 && [...new Map([[1, 2]])].length"
        " === 1 && (function* () { yield 1; })().next().value === 1"
        " && Object.keys(process).length === 0"
    )
    run(f"try {{ {tamper} }} catch (e) {{}}\nreturn true;")
    assert run(probe).passed is True


def test_a_job_a_check_leaves_runs_in_its_own_call() -> None:
    # A synchronous check's promise jobs ran in the next asynchronous check: against its time
    # budget, and with the globals they set visible to it.
    run("Promise.resolve().then(() => { globalThis.late = 1; });\nreturn true;")
    assert run("(async () => typeof late === 'undefined')()").passed is True
    spin = run("Promise.resolve().then(() => { for (;;) {} });\nreturn true;", timeout_s=0.3)
    assert spin.evidence["reason"] == "javascript_timeout"  # its own budget, not the next's
    assert run("(async () => true)()").passed is True


def test_garbage_a_check_leaves_does_not_spend_the_next_ones_memory() -> None:
    _javascript.reset_for_tests()
    needs = "const a = [];\nfor (let i = 0; i < 3e6; i++) a.push(i + 0.5);\nreturn true;"
    assert run(needs, memory_mb=64).passed is True  # in a fresh engine
    cycles = (
        "const keep = [];\nfor (let i = 0; i < 2e5; i++) {"
        " const o = {pad: 'p'.repeat(100) + i}; o.self = o; keep.push(o); }\nreturn true;"
    )
    assert run(cycles, memory_mb=400).passed is True
    assert run(needs, memory_mb=64).passed is True


# ------------------------------------------------- what a check returns, read without a crash


def test_a_value_nested_too_deep_for_python_is_a_bad_result() -> None:
    deep = (
        "let o = 1;\nfor (let i = 0; i < 3000; i++) o = [o];\n"
        "return {pass: true, score: 1, reason: 'r', o};"
    )
    for op in ("javascript", "not-javascript"):
        check = run(deep, op=op)
        assert check.passed is False
        assert "nested more than 512 deep" in (check.reason or "")
    with pytest.raises(TransformFailed, match="nested more than 512 deep"):
        apply_transform(Transform("javascript", deep), "x", {}, None)


def test_a_to_json_that_gives_nothing_is_a_bad_result() -> None:
    for op in ("javascript", "not-javascript"):
        check = run("({toJSON() { return undefined; }})", op=op)
        assert check.passed is False
        assert check.evidence["reason"] == "javascript_bad_result"


@pytest.mark.parametrize(
    ("output", "code"),
    [
        ("a\ud800b", "output.length === 3 && output.charCodeAt(1) === 0xd800"),
        ({"text": "\udfff"}, "output.text.charCodeAt(0) === 0xdfff"),
    ],
)
def test_an_output_with_a_lone_surrogate_arrives_as_it_is(output: Any, code: str) -> None:
    check = run(code, output)
    assert (check.passed, check.reason) == (True, None)


def test_a_thrown_value_whose_getters_throw_is_still_a_failed_check() -> None:
    code = (
        "const e = new Error('x');\n"
        "Object.defineProperty(e, 'name', {get() { throw 1; }});\nthrow e;"
    )
    check = run(code)
    assert check.passed is False and check.evidence["reason"] == "javascript_raised"
    assert run("true").passed is True


# ----------------------------------------------- work in C that no interrupt used to reach

SPARSE = "const a = new Array(2 ** 32 - 1);\n"
HUGE = "const o = {length: 2 ** 53 - 1};\n"


@pytest.mark.parametrize(
    "code",
    [
        SPARSE + "return a.join('') === '';",
        SPARSE + "return String(a) === '';",
        SPARSE + "a.reverse(); return true;",
        SPARSE + "a.sort(); return true;",
        SPARSE + "a.copyWithin(0, 1); return true;",
        SPARSE + "return a.slice(0).length > 0;",
        SPARSE + "return [].concat(a).length > 0;",
        SPARSE + "return [a].flat().length > 0;",
        SPARSE + "return [1].flatMap(() => a).length > 0;",
        SPARSE + "return a.values().drop(2 ** 40).next().done;",
        HUGE + "Array.prototype.splice.call(o, 0, 1); return true;",
        HUGE + "Array.prototype.shift.call(o); return true;",
        "Array.prototype.unshift.call({length: 2 ** 53 - 3}, 1); return true;",
    ],
)
def test_a_walk_over_a_sparse_array_is_bounded(code: str) -> None:
    # Each ran in C for minutes (join: 237 s) past a 1 s budget.
    check = bounded(code)
    assert check.passed is False
    assert check.evidence["reason"] in ("javascript_raised", "javascript_timeout")


@pytest.mark.parametrize(
    "method", ["indexOf", "includes", "lastIndexOf", "split", "replace", "replaceAll"]
)
def test_a_slow_string_search_is_bounded(method: str) -> None:
    # Naive search: 2e7 characters times a 2e4 pattern, in C, with no interrupt.
    call = (
        f"s.{method}(p)"
        if method in ("indexOf", "includes", "lastIndexOf", "split")
        else (f"s.{method}(p, '')")
    )
    code = f"const s = 'a'.repeat(2e7);\nconst p = 'a'.repeat(2e4) + 'b';\n{call};\nreturn true;"
    check = bounded(code)
    assert check.evidence["reason"] == "javascript_timeout"


def test_the_bounded_methods_keep_their_meaning() -> None:
    code = (
        "const p = 'c'.repeat(40);\nconst s = 'ab'.repeat(3e6) + p + 'xyz';\n"
        "return s.indexOf(p) === 6e6 && s.lastIndexOf(p) === 6e6 && s.includes(p)"
        " && s.indexOf(p, 6e6 + 1) === -1 && s.split(p).length === 2 && s.split(p)[1] === 'xyz'"
        " && s.split(p, 1).length === 1 && s.replace(p, '[$&|$$]').endsWith('[' + p + '|$]xyz')"
        " && s.replace(p, \"$'\").endsWith('bxyzxyz')"
        " && s.replaceAll(p, () => '!').endsWith('b!xyz')"
        " && [1, [2, [3]]].flat(Infinity).join() === '1,2,3' && [3, 1, 2].sort().join('') === '123'"
        " && [1, 2].flatMap((x) => [x, x]).length === 4 && [1, 2, 3].concat([4], 5).length === 5"
        " && [1, 2, 3].values().drop(1).toArray().join() === '2,3'"
        " && [1, 2, 3].values().drop(Infinity).next().done;"
    )
    assert run(code, timeout_s=10).passed is True


def test_the_engine_is_clean_after_each_limit() -> None:
    for hostile in ("for (;;) {}", "'x'.repeat(2 ** 28).length", "(function f() { f(); })()"):
        bounded(hostile, seconds=5, memory_mb=32)
        assert run("output.length === 11 && typeof leak === 'undefined'").passed is True


def test_code_with_a_lone_surrogate_is_said_so() -> None:
    # It reached the engine as undefined: "cannot read property 'trimEnd' of undefined".
    check = run("output !== '\ud800'")
    assert check.passed is False
    assert "is not UTF-8 text (a lone surrogate)" in (check.reason or "")
    assert run("true").passed is True
