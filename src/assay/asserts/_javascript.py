"""JavaScript checks and transforms, run in an embedded QuickJS engine (quickjs-ng).

``{op: javascript, value: CODE}`` follows promptfoo's calling convention (its
``src/assertions/javascript.ts``, ``src/assertions/index.ts`` and ``src/util/transform.ts``):

- CODE on one line is an expression: ``return`` is put before it (after the last statement of a
  line that starts with ``const``/``let``/``var``, promptfoo's ``buildFunctionBody``); CODE on
  several lines is a function body that returns itself. The function is
  ``new Function('output', 'context', 'process', body)``.
- ``file://path.js`` / ``file://path.js:name`` is a CommonJS file (``module.exports = fn`` or
  ``module.exports = {name}``, or ``.default``), relative to the project root.
- ``output`` is the output (a string, or the JSON value a transform made of it); ``context``
  is :func:`assay.asserts._python.function_context` (``vars``, ``prompt``, ``test``, ...).
- A check returns a boolean, a finite number (a score: passes when ``>= threshold``, else when
  ``> 0``) or a GradingResult ``{pass: boolean, score: number, reason: string}`` (promptfoo's
  ``isGradingResult``); a promise is awaited. Anything else, or a throw, is a failed check
  naming the code, negated or not.

Why QuickJS and not V8 (mini-racer) or Node (docs/asserts.md says more): it is standard
ECMAScript (ES2023) with no file, network or module access to take away, its limits on time,
memory and stack are the engine's own, it is 8 MB installed (V8's wheel is 82 MB), a call costs
microseconds (V8 through mini-racer: ~165 µs, through an event-loop thread), and it starts no
thread: the gate's forked workers stay possible (:func:`assay.gate._load.fork_is_safe`). The
engine is made lazily, once per process (a forked worker makes its own), and ``_quickjs`` is
imported directly: the ``quickjs`` package's ``__init__`` starts a thread pool on import.

Every call starts from the same global state: globals a call adds or replaces are put back and
the built-ins (their prototypes included) are frozen, so a suite's verdicts never depend on
which process, or which order, ran its checks.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from assay.asserts._python import function_context
from assay.asserts._result import ArgumentProblem, Outcome
from assay.asserts._scripts import js_outcome, label
from assay.validate import is_number

ENGINE_MODULE: Final = "_quickjs"
INSTALL_HINT: Final = (
    "JavaScript asserts and transforms need the JavaScript engine: "
    "pip install 'assay[javascript]' (it installs quickjs-ng)"
)
DEFAULT_TIMEOUT_S: Final = 5.0
DEFAULT_MEMORY_MB: Final = 128.0
# A deep recursion fails as a RangeError well before the C stack (8 MB on glibc) is at risk.
_STACK_BYTES: Final = 1024 * 1024
FILE_PREFIX: Final = "file://"
_JS_SUFFIXES: Final = (".js", ".cjs", ".mjs", ".ts", ".cts", ".mts")

_SANDBOX = "assay runs JavaScript in a sandbox without files, network, environment or modules"

# Installed once per engine. __assay_compile makes a function of a code text (and remembers
# it); __assay_call runs one and describes what it returned as JSON; a promise is settled by
# the engine's job queue, then __assay_take describes it.
_PRELUDE: Final = r"""
(function () {
  const g = globalThis;
  const SANDBOX = __SANDBOX__;
  const unavailable = (what) => function () {
    throw new Error(what + ' is not available: ' + SANDBOX);
  };
  const requireShim = function (name) {
    throw new Error('require(' + JSON.stringify(String(name)) + ') is not available: ' + SANDBOX);
  };
  const processShim = new Proxy({}, {
    get(_, key) {
      if (key === 'mainModule') return { require: requireShim };
      if (typeof key === 'symbol') return undefined;
      throw new Error('process.' + String(key) + ' is not available: ' + SANDBOX);
    },
  });
  const quiet = function () {};
  g.console = { log: quiet, info: quiet, warn: quiet, error: quiet, debug: quiet, trace: quiet };
  g.require = requireShim;
  for (const name of ['fetch', 'XMLHttpRequest', 'WebSocket', 'setTimeout', 'setInterval']) {
    g[name] = unavailable(name);
  }
  const fns = [];
  let settled = null;

  // promptfoo's buildFunctionBody: a one-line `const x = ...; expr` returns its last statement.
  function oneLineBody(code) {
    const trimmed = code.trim().replace(/;+\s*$/, '');
    if (!/^(const|let|var)\s/.test(trimmed)) return 'return ' + trimmed;
    for (let at = trimmed.lastIndexOf(';'); at >= 0; at = trimmed.lastIndexOf(';', at - 1)) {
      const rest = trimmed.slice(at + 1).trim();
      if (!rest) continue;
      // A separator, not a ';' inside a string: what precedes it is whole statements and
      // what follows one expression (promptfoo finds it with acorn's tokens).
      const head = trimmed.slice(0, at + 1);
      try {
        new Function('output', 'context', 'process', head);
        new Function('output', 'context', 'process', 'return (' + rest + '\n)');
        return head + ' return ' + rest;
      } catch (e) {}
      if (at === 0) break;
    }
    return trimmed;
  }

  function pick(exported, name, file) {
    if (name) {
      if (exported && Object.prototype.hasOwnProperty.call(exported, name)
          && typeof exported[name] === 'function') return exported[name];
      throw new Error(file + ' exports no function ' + JSON.stringify(name));
    }
    if (typeof exported === 'function') return exported;
    if (exported && typeof exported.default === 'function') return exported.default;
    throw new Error(file + ' must export a function (module.exports = function ...)');
  }

  g.__assay_compile = function (kind, code, name, file) {
    let fn;
    if (kind === 'assert') {
      const value = code.trimEnd();
      fn = new Function('output', 'context', 'process',
        value.includes('\n') ? value : oneLineBody(value));
    } else if (kind === 'transform') {
      fn = new Function('output', 'context', 'process',
        code.includes('\n') ? code : 'return ' + code);
    } else {
      const module = { exports: {} };
      const wrapper = new Function('module', 'exports', 'require', 'process', '__filename',
        code + '\n');
      wrapper(module, module.exports, requireShim, processShim, file);
      const picked = pick(module.exports, name, file);
      fn = function (output, context) { return picked(output, context); };
    }
    fns.push(fn);
    return fns.length - 1;
  };

  function describe(value) {
    const kind = value === null ? 'null' : typeof value;
    if (kind === 'boolean' || kind === 'string') return { k: kind, v: value };
    if (kind === 'number') {
      return { k: kind, v: Number.isFinite(value) ? value : null, s: String(value) };
    }
    if (kind === 'object') {
      try { return { k: kind, j: JSON.stringify(value), array: Array.isArray(value) }; }
      catch (e) { return { k: 'unserializable', s: String(e && e.message) }; }
    }
    return { k: kind, s: kind === 'undefined' ? 'undefined' : String(value) };
  }
  function failure(e) {
    if (e instanceof Error) return { k: 'error', name: e.name, s: e.message };
    let text; try { text = String(e); } catch (x) { text = typeof e; }
    return { k: 'error', name: 'thrown', s: text };
  }

  // The globals as the prelude leaves them stay so: the built-in ones cannot be replaced or
  // deleted (an assignment to one is ignored, as to any read-only global), and any a call adds
  // (`x = 1`, `globalThis.n = 2`: enumerable) are deleted after it. Object.keys of the global
  // object costs a microsecond; comparing every built-in after each call cost forty.
  g.__assay_snapshot = function () {
    delete g.__assay_snapshot;
    for (const name of Object.getOwnPropertyNames(g)) {
      const found = Object.getOwnPropertyDescriptor(g, name);
      if (found.configurable) {
        const fixed = { enumerable: false, configurable: false };
        if ('value' in found) fixed.writable = false;
        Object.defineProperty(g, name, fixed);
      }
    }
    hardenBuiltins();
  };
  // What the built-ins reach (String.prototype, Array.prototype, JSON, Math, ...) is frozen:
  // a check that writes `String.prototype.includes = () => true` changes nothing for itself
  // or for the checks after it (it would otherwise make every later includes() pass).
  function hardenBuiltins() {
    const seen = new Set([g]);
    const stack = [];
    const reach = (owner) => {
      for (const key of Reflect.ownKeys(owner)) {
        const found = Object.getOwnPropertyDescriptor(owner, key);
        if ('value' in found) stack.push(found.value);
        else stack.push(found.get, found.set);
      }
    };
    reach(g);
    while (stack.length) {
      const value = stack.pop();
      const kind = typeof value;
      if (value === null || (kind !== 'object' && kind !== 'function') || seen.has(value)) continue;
      seen.add(value);
      Object.freeze(value);
      stack.push(Object.getPrototypeOf(value));
      reach(value);
    }
  }
  function restoreGlobals() {
    const added = Object.keys(g);
    for (let i = 0; i < added.length; i++) { try { delete g[added[i]]; } catch (e) {} }
  }

  g.__assay_call = function (index, output, isJson, contextJson) {
    settled = null;
    let result;
    try {
      const given = isJson ? JSON.parse(output) : output;
      const value = fns[index](given, JSON.parse(contextJson), processShim);
      if (value !== null && typeof value === 'object' && typeof value.then === 'function') {
        Promise.resolve(value).then(
          (v) => { settled = describe(v); }, (e) => { settled = failure(e); });
        return 'pending';
      }
      result = describe(value);
    } catch (e) {
      result = failure(e);
    } finally {
      if (settled === null) restoreGlobals();
    }
    return JSON.stringify(result);
  };
  g.__assay_take = function () {
    restoreGlobals();
    return settled === null ? 'pending' : JSON.stringify(settled);
  };
})();
globalThis.__assay_snapshot();
""".replace("__SANDBOX__", json.dumps(_SANDBOX))


class ScriptError(Exception):
    """A JavaScript (or Python) check or transform that could not give a value.

    Attributes:
        message: the one line saying why, naming the code.
        kind: ``unavailable``, ``syntax``, ``raised``, ``timeout``, ``memory``, ``stack`` or
            ``bad_result`` (the evidence reason is ``javascript_<kind>``).
    """

    def __init__(self, message: str, kind: str) -> None:
        super().__init__(message)
        self.message = message
        self.kind = kind


def engine_missing() -> str | None:
    """The install hint when the engine is not installed (None: it is)."""
    import importlib.util

    return None if importlib.util.find_spec(ENGINE_MODULE) is not None else INSTALL_HINT


def split_file_reference(reference: str) -> tuple[str, str | None]:
    """``file://path.js:name`` -> ``("path.js", "name")``: promptfoo's
    ``parseFilePathAndFunctionName`` (the last colon, and only after a script's suffix)."""
    path = reference[len(FILE_PREFIX) :] if reference.startswith(FILE_PREFIX) else reference
    at = path.rfind(":")
    if at > 1 and path[:at].endswith((*_JS_SUFFIXES, ".py")):
        return path[:at], path[at + 1 :] or None
    return path, None


def file_problem(reference: str, root: Path | None) -> str | None:
    """Why a ``file://`` JavaScript reference names no readable ``.js`` file under ``root``."""
    path, _ = split_file_reference(reference)
    if not path.endswith(_JS_SUFFIXES):
        return f"{reference}: a JavaScript file must end in .js, .cjs or .mjs"
    full = ((root if root is not None else Path.cwd()) / path).resolve()
    return None if full.is_file() else f"{reference}: no file {full}"


class _Engine:
    """One QuickJS runtime of this process, its prelude and the functions compiled in it."""

    def __init__(self) -> None:
        import _quickjs  # the [javascript] extra; its C module, not the quickjs package

        self.pid = os.getpid()
        self.context = _quickjs.Context()
        self.context.set_max_stack_size(_STACK_BYTES)
        self.context.eval(_PRELUDE)
        self.compile = self.context.get("__assay_compile")
        self.call = self.context.get("__assay_call")
        self.take = self.context.get("__assay_take")
        self.functions: dict[tuple[str, str, str | None], int] = {}
        self.failures: dict[tuple[str, str, str | None], ScriptError] = {}


_ENGINE: _Engine | None = None
# One encoder (json.dumps with options builds one per call): strict JSON, text as it is; a
# value of a golden's that is no JSON (a date YAML made) is sent as its text.
_ENCODE: Final = json.JSONEncoder(ensure_ascii=False, allow_nan=False, default=str).encode


def _engine() -> _Engine:
    """This process's engine, made on first use (a forked worker makes its own)."""
    global _ENGINE
    if _ENGINE is None or _ENGINE.pid != os.getpid():
        if engine_missing() is not None:
            raise ScriptError(INSTALL_HINT, "unavailable")
        _ENGINE = _Engine()
    return _ENGINE


def _drop_engine() -> None:
    """Forget the engine after a limit was hit: the next call starts a clean runtime."""
    global _ENGINE
    _ENGINE = None


def _source(kind: str, code: str, root: Path | None) -> tuple[str, str, str | None, str]:
    """What to compile: (kind, text, function name, file) for inline code or a file."""
    if not code.startswith(FILE_PREFIX):
        return kind, code, None, ""
    path, name = split_file_reference(code)
    problem = file_problem(code, root)
    if problem is not None:
        raise ScriptError(problem, "unavailable")
    full = ((root if root is not None else Path.cwd()) / path).resolve()
    try:
        text = full.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ScriptError(f"{code}: cannot read {full}: {exc}", "unavailable") from None
    return "file", text, name, path


def compile_code(kind: str, code: str, root: Path | None) -> int:
    """The index of ``code`` compiled in this process's engine (compiled once; a file is read
    and run once). ``kind``: ``assert`` or ``transform`` (their one-line rules differ)."""
    engine = _engine()
    key = (kind, code, str(root) if code.startswith(FILE_PREFIX) else None)
    found = engine.functions.get(key)
    if found is not None:
        return found
    failed = engine.failures.get(key)
    if failed is not None:
        raise failed
    which, text, name, file = _source(kind, code, root)
    # A file's top level runs here: within the default budgets.
    engine.context.set_time_limit(DEFAULT_TIMEOUT_S)
    engine.context.set_memory_limit(int(DEFAULT_MEMORY_MB * 1024 * 1024))
    try:
        index = int(engine.compile(which, text, name or "", file))
    except Exception as exc:  # the engine's JSException, StackOverflow
        error = _engine_error(code, exc, DEFAULT_TIMEOUT_S, DEFAULT_MEMORY_MB, compiling=True)
        if error.kind in ("timeout", "memory", "stack"):
            _drop_engine()
        else:
            engine.failures[key] = error
        raise error from None
    finally:
        engine.context.set_memory_limit(-1)
    engine.functions[key] = index
    return index


def syntax_problem(kind: str, code: str, root: Path | None) -> str | None:
    """Why ``code`` does not compile (None: it does, or it names a file not read here): for
    the load-time checks. The engine missing is said by the caller."""
    if code.startswith(FILE_PREFIX):
        return file_problem(code, root)
    try:
        compile_code(kind, code, root)
    except ScriptError as error:
        return error.message
    return None


def run_code(
    kind: str,
    code: str,
    output: Any,
    context: Mapping[str, Any],
    *,
    root: Path | None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    memory_mb: float = DEFAULT_MEMORY_MB,
) -> dict[str, Any]:
    """Call ``code`` with ``(output, context)`` within the budgets; what it returned, described
    (``{"k": kind, "v" | "j" | "s": ...}``). A ScriptError when it cannot be had."""
    index = compile_code(kind, code, root)
    engine = _engine()
    is_json = not isinstance(output, str)
    try:
        sent = output if not is_json else _ENCODE(output)
        context_json = _ENCODE(context)
    except (TypeError, ValueError) as exc:
        raise ScriptError(
            f"{label(code)}: the output is not a JSON value ({exc})", "raised"
        ) from None
    deadline = time.monotonic() + timeout_s
    engine.context.set_time_limit(timeout_s)
    engine.context.set_memory_limit(int(memory_mb * 1024 * 1024))
    try:
        answer = engine.call(index, sent, is_json, context_json)
        while answer == "pending":
            while engine.context.execute_pending_job():
                if time.monotonic() > deadline:
                    raise TimeoutError
            answer = engine.take()
            if answer == "pending":
                raise ScriptError(f"{label(code)} returned a promise that never settled", "raised")
    except ScriptError:
        raise
    except TimeoutError:
        _drop_engine()
        raise _engine_error(code, TimeoutError("interrupted"), timeout_s, memory_mb) from None
    except Exception as exc:
        _drop_engine()
        raise _engine_error(code, exc, timeout_s, memory_mb) from None
    finally:
        if _ENGINE is engine:
            engine.context.set_memory_limit(-1)
    described: dict[str, Any] = json.loads(answer)
    if described["k"] == "error":
        _limit_hit(code, described, timeout_s, memory_mb)
        raise ScriptError(f"{label(code)} threw {described['name']}: {described['s']}", "raised")
    return described


def _limit_hit(code: str, described: Mapping[str, Any], timeout_s: float, memory_mb: float) -> None:
    """A thrown error that is a budget the code ran out of (caught inside the code's own
    try/catch and rethrown, or caught by the prelude): said as that budget."""
    text = f"{described.get('name')}: {described.get('s')}"
    if "out of memory" in text or "Maximum call stack size exceeded" in text:
        _drop_engine()
        raise _engine_error(code, RuntimeError(text), timeout_s, memory_mb)


def _engine_error(
    code: str,
    exc: BaseException,
    timeout_s: float,
    memory_mb: float | None,
    compiling: bool = False,
) -> ScriptError:
    """The engine's exception as one line naming the code and the budget it hit."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    name = label(code)
    if "interrupted" in text:
        return ScriptError(f"{name} did not finish within {timeout_s:g} s", "timeout")
    if "out of memory" in text:
        limit = f" ({memory_mb:g} MB)" if memory_mb is not None else ""
        return ScriptError(f"{name} ran out of its memory budget{limit}", "memory")
    if type(exc).__name__ == "StackOverflow" or "call stack" in text:
        return ScriptError(f"{name} recursed too deeply (stack overflow)", "stack")
    if compiling and "SyntaxError" in text:
        return ScriptError(f"{name} does not compile: {text}", "syntax")
    return ScriptError(f"{name} threw {text}", "raised")


def reset_for_tests() -> None:
    """Drop this process's engine (tests that count what it compiled)."""
    _drop_engine()


# ------------------------------------------------------------------------------ the op


def number_arg(args: Mapping[str, Any], name: str, default: float | None) -> float | None:
    """A number argument (``threshold``; ``timeout_s`` and ``memory_mb`` above 0)."""
    value = args.get(name, default)
    if value is None:
        return None
    positive = name in ("timeout_s", "memory_mb")
    if not is_number(value) or (positive and value <= 0):
        wanted = "a number > 0" if positive else "a finite number"
        raise ArgumentProblem(
            f"argument '{name}' must be {wanted}", {"reason": "invalid_argument", "argument": name}
        )
    return float(value)


def check_context(view: Any, args: Mapping[str, Any]) -> dict[str, Any]:
    """What a code check is given besides the output: the golden's context, and the assert's
    ``config`` when it has one (promptfoo's ``context.config``)."""
    context = function_context(view.golden)
    if "config" in args:
        context["config"] = args["config"]
    return context


def op_javascript(view: Any, args: Mapping[str, Any], ctx: Any) -> Outcome:
    """``{op: javascript, value: CODE}``: see the module."""
    code = args.get("value")
    if not isinstance(code, str) or not code.strip():
        raise ArgumentProblem(
            "argument 'value' must be JavaScript code or a file://path.js reference",
            {"reason": "invalid_argument", "argument": "value"},
        )
    threshold = number_arg(args, "threshold", None) if "threshold" in args else None
    timeout = memory = None
    if "timeout_s" in args:
        timeout = number_arg(args, "timeout_s", DEFAULT_TIMEOUT_S)
    if "memory_mb" in args:
        memory = number_arg(args, "memory_mb", DEFAULT_MEMORY_MB)
    try:
        described = run_code(
            "assert",
            code,
            view.raw,
            check_context(view, args),
            root=ctx.root,
            timeout_s=timeout or DEFAULT_TIMEOUT_S,
            memory_mb=memory or DEFAULT_MEMORY_MB,
        )
    except ScriptError as error:
        raise ArgumentProblem(
            error.message, {"reason": f"javascript_{error.kind}", "code": label(code)}
        ) from None
    return js_outcome(label(code), described, threshold)
