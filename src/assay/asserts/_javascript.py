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

Against hostile code (tests/asserts/test_javascript_hostile.py): the prelude's functions are
held by Python and deleted from the global object; a global added in any way (a symbol, a
non-enumerable or non-configurable one, another prototype, a sealed global object) is taken
back, or the engine is made afresh; the built-ins no global reaches (iterator prototypes,
generator and async function intrinsics) are frozen too; the job queue is run dry in the call
that filled it; an out-of-memory in a used engine is run again in a fresh one (another call's
uncollected garbage is not this call's); and the few built-ins that loop in C without the
engine's interrupt (the array methods that walk every index of a sparse array, naive string
search) are bounded in JavaScript. A returned value nested deeper than 512, or with no JSON
value, is a bad result; an output with a lone surrogate is sent as ASCII JSON.
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
_PRELUDE: Final = (
    r"""
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
  Object.freeze(processShim);  // its target: nothing a check defines on it is there for the next
  const quiet = function () {};
  g.console = { log: quiet, info: quiet, warn: quiet, error: quiet, debug: quiet, trace: quiet };
  g.require = requireShim;
  for (const name of ['fetch', 'XMLHttpRequest', 'WebSocket', 'setTimeout', 'setInterval']) {
    g[name] = unavailable(name);
  }
  const fns = [];
  let settled = null;
  installBounds();
  watchDefines();

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
    // A file's top level runs here, within the default budgets.
    elementLimit = __COMPILE_ELEMENTS__;
    deadline = Date.now() + __COMPILE_MS__;
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
      let j;
      try { j = JSON.stringify(value); } catch (e) { return { k: 'unserializable', s: String(e) }; }
      // A toJSON that gives undefined (or a function): no JSON value at all.
      if (typeof j !== 'string') return { k: 'unserializable', s: 'no JSON value' };
      return { k: kind, j: j };
    }
    return { k: kind, s: kind === 'undefined' ? 'undefined' : String(value) };
  }
  // What a throw says, as text whatever the thrown value's getters and conversions do (they
  // run within the call's budgets; one that throws again is said as its type).
  function text(value) {
    try { return String(value); } catch (e) { return typeof value; }
  }
  function failure(e) {
    try {
      if (e instanceof Error) return { k: 'error', name: text(e.name), s: text(e.message) };
    } catch (x) {}
    return { k: 'error', name: 'thrown', s: text(e) };
  }

  // The globals as the prelude leaves them stay so: the built-in ones cannot be replaced or
  // deleted (an assignment to one is ignored, as to any read-only global), and any a call adds
  // are deleted after it (restoreGlobals). Comparing every built-in after each call cost forty
  // microseconds.
  g.__assay_snapshot = function () {
    delete g.__assay_snapshot;
    for (const name of Reflect.ownKeys(g)) {
      const found = Object.getOwnPropertyDescriptor(g, name);
      if (found.configurable) {
        const fixed = { enumerable: false, configurable: false };
        if ('value' in found) fixed.writable = false;
        Object.defineProperty(g, name, fixed);
      }
    }
    hardenBuiltins();
    globalCount = Reflect.ownKeys(g).length;
    symbolCount = Object.getOwnPropertySymbols(g).length;
    globalProto = Object.getPrototypeOf(g);
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
    stack.push(...hiddenIntrinsics());
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
  // QuickJS checks its time budget as the code runs, and in the array methods that call back;
  // the ones below walk every index of an array in C without a check. An array's length need
  // not be memory (`new Array(2 ** 32 - 1)`, `{length: 2 ** 53 - 1}`), so one call would run
  // for minutes past the budget. They refuse a length no array of the call's memory budget
  // could hold (16 bytes an element): such an array is sparse, and its walk is the hang.
  let elementLimit = 0;
  function installBounds() {
    const A = Array.prototype;
    const apply = Reflect.apply;
    const toLength = (o) => {
      const n = Math.trunc(Number(o.length));
      return n > 0 ? n : 0;
    };
    const bound = (value, what) => {
      if (value === null || (typeof value !== 'object' && typeof value !== 'function')) return;
      const length = toLength(value);
      if (length > elementLimit) {
        throw new RangeError(what + ': ' + length + ' elements is more than the memory '
          + 'budget could hold (' + SANDBOX + ')');
      }
    };
    const wrap = (owner, name, check) => {
      const native = owner[name];
      const wrapped = {
        [name](...args) {
          check(this, args, 'Array.prototype.' + name);
          return apply(native, this, args);
        },
      }[name];
      Object.defineProperty(owner, name, { value: wrapped });
    };
    const self = (o, args, what) => bound(o, what);
    for (const name of ['join', 'toLocaleString', 'reverse', 'sort', 'copyWithin', 'splice',
      'shift', 'unshift', 'slice']) wrap(A, name, self);
    wrap(A, 'concat', (o, args, what) => {
      bound(o, what);
      for (const arg of args) {
        if (Array.isArray(arg) || (arg && arg[Symbol.isConcatSpreadable])) bound(arg, what);
      }
    });
    // flat walks the arrays inside too: each one it would open, to its depth.
    const nested = (o, depth, what) => {
      bound(o, what);
      if (!(depth >= 1)) return;
      const length = toLength(o);
      for (let i = 0; i < length; i++) {
        const item = o[i];
        if (Array.isArray(item)) nested(item, depth - 1, what);
      }
    };
    wrap(A, 'flat', (o, args, what) => {
      const depth = args[0] === undefined ? 1 : Math.trunc(Number(args[0]));
      if (o !== null && o !== undefined) nested(Object(o), depth, what);
    });
    wrap(A, 'flatMap', (o, args, what) => {
      bound(o, what);
      const [fn, thisArg] = args;
      if (typeof fn === 'function') {
        args[0] = function (value, index, array) {
          const made = apply(fn, thisArg, [value, index, array]);
          if (Array.isArray(made)) bound(made, what);
          return made;
        };
      }
    });
    // A drop over an array's iterator skips in C too: past the bound, it skips in JavaScript.
    if (typeof Iterator === 'function') {
      const native = Iterator.prototype.drop;
      const drop = {
        drop(limit) {
          const count = Number(limit);
          if (!(count > elementLimit) || this === null || typeof this !== 'object') {
            return apply(native, this, [limit]);
          }
          const source = this;
          const next = source.next;
          let left = count;
          const skipping = {
            next() {
              for (; left > 0; left--) {
                const step = apply(next, source, []);
                if (step.done) { left = 0; return step; }
              }
              return apply(next, source, []);
            },
            return(value) {
              const close = source.return;
              return close === undefined ? { value, done: true } : apply(close, source, [value]);
            },
          };
          return apply(native, skipping, [0]);
        },
      }.drop;
      Object.defineProperty(Iterator.prototype, 'drop', { value: drop });
    }
    boundSearch();
  }
  // String search is naive in QuickJS (a text's length times the pattern's, in C, with no
  // check of the time budget): past a bound the text is searched a window at a time, and
  // between windows the clock is read; past the call's deadline a spin lets the engine's own
  // interrupt end the call (an error thrown here could be caught by the check).
  let deadline = 0;
  function boundSearch() {
    const S = String.prototype;
    const apply = Reflect.apply;
    const native = {};
    for (const name of ['indexOf', 'lastIndexOf', 'includes', 'split', 'replace', 'replaceAll',
      'slice']) native[name] = S[name];
    const now = Date.now;
    const WORK = 1 << 22;
    const heavy = (text, pattern) => typeof text === 'string' && typeof pattern === 'string'
      && (text.length - pattern.length + 1) * pattern.length > WORK;
    const slice = (text, from, to) => apply(native.slice, text, [from, to]);
    const onTime = () => { if (now() > deadline) for (;;) {} };
    const find = (text, pattern, from) => {
      const m = pattern.length;
      const step = Math.max(1, Math.floor(WORK / m));
      for (let at = from; at + m <= text.length; at += step) {
        onTime();
        const found = apply(native.indexOf, slice(text, at, at + step + m - 1), [pattern]);
        if (found >= 0) return at + found;
      }
      return -1;
    };
    const findLast = (text, pattern, from) => {
      const m = pattern.length;
      const step = Math.max(1, Math.floor(WORK / m));
      for (let end = Math.min(text.length, from + m); end >= m; end -= step) {
        onTime();
        const base = Math.max(0, end - step - m + 1);
        const found = apply(native.lastIndexOf, slice(text, base, end), [pattern]);
        if (found >= 0) return base + found;
      }
      return -1;
    };
    const position = (text, value, otherwise) => {
      const n = value === undefined ? otherwise : Math.trunc(Number(value));
      return Math.min(Math.max(Number.isNaN(n) ? otherwise : n, 0), text.length);
    };
    // GetSubstitution for a text pattern (no captures): $$, $&, $` and $'.
    const DOLLARS = /\$([$&`'])/g;
    const substitute = (text, matched, at, replacement) => {
      if (typeof replacement === 'function') return String(replacement(matched, at, text));
      return apply(native.replace, String(replacement), [DOLLARS, (_, c) => (c === '$' ? '$'
        : c === '&' ? matched : c === '`' ? slice(text, 0, at)
          : slice(text, at + matched.length))]);
    };
    const methods = {
      indexOf(pattern, from) {
        'use strict';
        if (!heavy(this, pattern)) return apply(native.indexOf, this, arguments);
        return find(this, pattern, position(this, from, 0));
      },
      includes(pattern, from) {
        'use strict';
        if (!heavy(this, pattern)) return apply(native.includes, this, arguments);
        return find(this, pattern, position(this, from, 0)) >= 0;
      },
      lastIndexOf(pattern, from) {
        'use strict';
        if (!heavy(this, pattern)) return apply(native.lastIndexOf, this, arguments);
        return findLast(this, pattern, position(this, from, Infinity));
      },
      split(separator, limit) {
        'use strict';
        if (!heavy(this, separator)) return apply(native.split, this, arguments);
        const most = limit === undefined ? 2 ** 32 - 1 : limit >>> 0;
        const parts = [];
        let from = 0;
        while (parts.length < most) {
          const at = find(this, separator, from);
          if (at < 0) { parts.push(slice(this, from)); break; }
          parts.push(slice(this, from, at));
          from = at + separator.length;
        }
        return parts;
      },
      replace(pattern, replacement) {
        'use strict';
        if (!heavy(this, pattern)) return apply(native.replace, this, arguments);
        const at = find(this, pattern, 0);
        if (at < 0) return this;
        return slice(this, 0, at) + substitute(this, pattern, at, replacement)
          + slice(this, at + pattern.length);
      },
      replaceAll(pattern, replacement) {
        'use strict';
        if (!heavy(this, pattern)) return apply(native.replaceAll, this, arguments);
        let made = '';
        let from = 0;
        for (let at = find(this, pattern, 0); at >= 0; at = find(this, pattern, from)) {
          made += slice(this, from, at) + substitute(this, pattern, at, replacement);
          from = at + pattern.length;
        }
        return made + slice(this, from);
      },
    };
    for (const name of Object.keys(methods)) {
      Object.defineProperty(S, name, { value: methods[name] });
    }
  }

  // The built-in objects no global property reaches (the iterator prototypes, the generator
  // and async function intrinsics, %ThrowTypeError%): frozen like the rest.
  function hiddenIntrinsics() {
    const protoOf = Object.getPrototypeOf;
    const found = [
      protoOf([][Symbol.iterator]()), protoOf(''[Symbol.iterator]()),
      protoOf(new Map().entries()), protoOf(new Set().values()),
      protoOf(/a/[Symbol.matchAll]('a')),
      protoOf(function* () {}), protoOf(async function () {}), protoOf(async function* () {}),
      Object.getOwnPropertyDescriptor((function () { 'use strict'; return arguments; })(),
        'callee').get,
    ];
    if (typeof Iterator === 'function') {
      found.push(protoOf(Iterator.prototype.map.call([].values(), (x) => x)));
      found.push(protoOf(Iterator.from({ next() { return { done: true }; } })));
    }
    return found;
  }

  // Every global of the prelude is non-configurable, so any configurable own key (a string or
  // a symbol, enumerable or not) is one a call added. One it made non-configurable cannot be
  // deleted, nor can a global object made non-extensible be opened again: the engine is then
  // tainted and Python makes a fresh one. Listing every key costs 6 µs, so a call is first
  // asked the cheap questions: an enumerable key (`x = 1`), a symbol, another prototype, and
  // whether it defined a property on the global object (the defining functions tell).
  let globalCount = -1;
  let symbolCount = -1;
  let globalProto = null;
  let defined = false;
  let tainted = false;
  function watchDefines() {
    const apply = Reflect.apply;
    const watch = (owner, name) => {
      const native = owner[name];
      const wrapped = {
        [name](...args) {
          if (args[0] === g) defined = true;
          return apply(native, this, args);
        },
      }[name];
      Object.defineProperty(owner, name, { value: wrapped });
    };
    watch(Object, 'defineProperty');
    watch(Object, 'defineProperties');
    watch(Reflect, 'defineProperty');
    if (typeof Error.captureStackTrace === 'function') watch(Error, 'captureStackTrace');
  }
  function restoreGlobals() {
    if (!defined && Object.keys(g).length === 0
        && Object.getOwnPropertySymbols(g).length === symbolCount
        && Object.getPrototypeOf(g) === globalProto && Object.isExtensible(g)) return;
    defined = false;
    if (Object.getPrototypeOf(g) !== globalProto && !Reflect.setPrototypeOf(g, globalProto)) {
      tainted = true;
    }
    if (!Object.isExtensible(g)) tainted = true;
    const keys = Reflect.ownKeys(g);
    for (let i = 0; i < keys.length; i++) {
      const found = Reflect.getOwnPropertyDescriptor(g, keys[i]);
      if (found.configurable) Reflect.deleteProperty(g, keys[i]);
    }
    if (Reflect.ownKeys(g).length !== globalCount) tainted = true;
  }

  g.__assay_call = function (index, output, isJson, contextJson, elements, budgetMs) {
    settled = null;
    elementLimit = elements;
    deadline = Date.now() + budgetMs;
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
      restoreGlobals();
    }
    if (tainted) result.t = true;
    return JSON.stringify(result);
  };
  // After the job queue ran dry: the promise's settlement (null: none) and whether a global
  // could not be put back.
  g.__assay_take = function () {
    restoreGlobals();
    return JSON.stringify({ s: settled, t: tainted });
  };
})();
""".replace("__SANDBOX__", json.dumps(_SANDBOX))
    .replace("__COMPILE_ELEMENTS__", str(int(DEFAULT_MEMORY_MB) * 1024 * 1024 // 16))
    .replace("__COMPILE_MS__", str(int(DEFAULT_TIMEOUT_S * 1000)))
)


_SEAL: Final = (
    "delete globalThis.__assay_compile; delete globalThis.__assay_call; "
    "delete globalThis.__assay_take; globalThis.__assay_snapshot();"
)


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
        # Python holds the three; the code a check runs cannot reach them (a call could count
        # with __assay_compile, or run another check's function, were they globals).
        self.context.eval(_SEAL)
        self.functions: dict[tuple[str, str, str | None], int] = {}
        self.failures: dict[tuple[str, str, str | None], ScriptError] = {}
        self.called = False  # whether a check ran here (a fresh engine has no one's garbage)


_ENGINE: _Engine | None = None
# One encoder (json.dumps with options builds one per call): strict JSON, text as it is; a
# value of a golden's that is no JSON (a date YAML made) is sent as its text.
_ENCODE: Final = json.JSONEncoder(ensure_ascii=False, allow_nan=False, default=str).encode
_ENCODE_ASCII: Final = json.JSONEncoder(allow_nan=False, default=str).encode


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
    if not _utf8(text):
        error = ScriptError(f"{label(code)} is not UTF-8 text (a lone surrogate)", "syntax")
        engine.failures[key] = error
        raise error
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
    sent, is_json, context_json = _arguments(code, output, context)
    fresh = _ENGINE is None or _ENGINE.pid != os.getpid() or not _ENGINE.called
    try:
        return _call(kind, code, sent, is_json, context_json, root, timeout_s, memory_mb)
    except ScriptError as error:
        if error.kind != "memory" or fresh:
            raise
    # Out of memory in an engine earlier calls ran in: their garbage (a cycle the collector
    # had not reached yet) counted against this budget. A fresh engine says what this call
    # alone needs, as in any other process or order.
    return _call(kind, code, sent, is_json, context_json, root, timeout_s, memory_mb)


def _arguments(code: str, output: Any, context: Mapping[str, Any]) -> tuple[str, bool, str]:
    """The output (as text, or as JSON) and the context (JSON) as the engine is given them. A
    text that is no UTF-8 (a lone surrogate) goes as ASCII JSON, which says it exactly."""
    is_json = not isinstance(output, str) or not _utf8(output)
    try:
        if is_json:
            sent = _ENCODE(output)
            sent = sent if _utf8(sent) else _ENCODE_ASCII(output)
        else:
            sent = output
        context_json = _ENCODE(context)
        context_json = context_json if _utf8(context_json) else _ENCODE_ASCII(context)
    except (TypeError, ValueError) as exc:
        raise ScriptError(
            f"{label(code)}: the output is not a JSON value ({exc})", "raised"
        ) from None
    return sent, is_json, context_json


def _utf8(text: str) -> bool:
    """Whether ``text`` encodes as UTF-8 (no lone surrogate); an ASCII text is known at once."""
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _call(
    kind: str,
    code: str,
    sent: str,
    is_json: bool,
    context_json: str,
    root: Path | None,
    timeout_s: float,
    memory_mb: float,
) -> dict[str, Any]:
    """One call within the budgets, the job queue run dry (jobs a call left behind would run
    in a later call, against its budget and with its globals), the globals put back."""
    index = compile_code(kind, code, root)
    engine = _engine()
    engine.called = True
    deadline = time.monotonic() + timeout_s
    engine.context.set_time_limit(timeout_s)
    engine.context.set_memory_limit(int(memory_mb * 1024 * 1024))
    try:
        answer = engine.call(
            index, sent, is_json, context_json, memory_mb * _ELEMENTS_PER_MB, timeout_s * 1000
        )
        if answer == "pending" or engine.context.execute_pending_job():
            while engine.context.execute_pending_job():
                if time.monotonic() > deadline:
                    raise TimeoutError
            taken = json.loads(engine.take())
            if answer == "pending":
                if taken["s"] is None:
                    message = f"{label(code)} returned a promise that never settled"
                    raise ScriptError(message, "raised")
                answer = json.dumps({**taken["s"], "t": taken["t"]})
            elif taken["t"]:
                _drop_engine()
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
    return _described(code, answer, timeout_s, memory_mb)


def _described(code: str, answer: str, timeout_s: float, memory_mb: float) -> dict[str, Any]:
    """The call's answer read: a throw as a ScriptError, a global the call left behind as a
    fresh engine for the next, a value nested deeper than assay reads as a bad result."""
    described: dict[str, Any] = json.loads(answer)
    if described.pop("t", False):
        _drop_engine()
    if described["k"] == "error":
        _limit_hit(code, described, timeout_s, memory_mb)
        raise ScriptError(f"{label(code)} threw {described['name']}: {described['s']}", "raised")
    if described["k"] == "object":
        text = described["j"]
        # Nesting needs as many brackets; only then is the value read to know its depth.
        if text.count("[") + text.count("{") > _MAX_NESTING and _too_deep(text):
            raise ScriptError(
                f"{label(code)} returned a value nested more than {_MAX_NESTING} deep",
                "bad_result",
            )
    return described


# The most elements an array of a memory budget could hold (a JavaScript value is 16 bytes):
# the array methods that walk every index in C refuse a longer one (it is sparse).
_ELEMENTS_PER_MB: Final = 1024 * 1024 // 16

# Deeper than this, Python's own JSON reading and the walks after it would hit the recursion
# limit (assay.asserts._context's bound for a JSON value).
_MAX_NESTING: Final = 512


def _too_deep(text: str) -> bool:
    from assay.asserts._context import json_value_problem

    try:
        value = json.loads(text)
    except RecursionError:
        return True
    return json_value_problem(value) == "the value is nested too deeply"


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
