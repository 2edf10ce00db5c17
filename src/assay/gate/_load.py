"""A large suite on every core: forked worker processes load and score shares of it.

A gate run over a large suite spends its time reading goldens (file I/O, YAML, validation) and
running their checks, one golden at a time: work that splits cleanly. :func:`load` cuts the
suite's files (and a large JSONL file's lines) into contiguous shares of about equal cost, forks
one worker per core beyond the first, loads the first share in the calling process meanwhile,
and gathers the others' goldens in suite order. Workers send their goldens in batches as they
go, and the calling process rebuilds each batch between batches of its own share, so that
little is left to do once the last worker is done. With static outputs (``--outputs``, the example)
each worker also scores its goldens; the :class:`~assay.gate._suite.LoadedSuite` hands those
results to the gate, keyed by golden id.

What stays in one process, on purpose: live candidates (the runner already overlaps model calls;
their cache and statistics live in the parent), the judge (a model call), the embedding backend
and similarity plugins (a model or unknown code: not forked, and the embedding backend batches
in one process), and everything after scoring (summaries, baseline, regressions, rendering),
which reads every result.

Results are those of one process, by construction:

* shares are contiguous and gathered in order, so goldens, and results in candidate then suite
  order, come out as one process makes them; duplicate ids are checked over the whole suite;
* a worker scores exactly as :class:`assay.gate._run._Scoring` does (the same ``evaluate`` with the
  same arguments); its results travel as compact tuples rebuilt into equal ``Result`` objects;
* anything unusual (a bad golden, an irregular JSONL line, a worker that fails or dies, even
  after sending some batches, a fork that fails) makes :func:`load` return None after
  stopping every worker: the caller then loads in one process, which raises the first error
  in suite order with its usual message.

Processes are forked, so they inherit the loaded modules and the outputs without pickling; this
is done on Linux only, and only while the process runs no other thread (forking a threaded
process can deadlock the child). Elsewhere the suite loads in one process.

``ASSAY_WORKERS=N`` caps the processes (1: always one); ``ASSAY_PARALLEL_MIN_MS=M`` sets the
estimated one-process load-and-score time below which one process is used (0: always split).
"""

from __future__ import annotations

import bisect
import contextlib
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from assay._collector import settled_objects
from assay.asserts import CheckResult
from assay.asserts._registry import _passed, runs_project_code
from assay.cascade._cascade import NO_OUTPUT, evaluate
from assay.errors import AssayError, ConfigError
from assay.gate._suite import LoadedSuite, Prescored, Prints, StaticScoring
from assay.goldens import Golden, Tier
from assay.goldens._defaults import read_defaults
from assay.goldens._loader import _folder_tier, discover_paths, iter_path, read_quickly, unique
from assay.goldens._model import Defaults, build_goldens
from assay.goldens._records import jsonl_lines
from assay.results import Result
from assay.vocabulary import TIER1

if TYPE_CHECKING:
    from assay.models._static import RawOutputs

WORKERS_ENV: Final = "ASSAY_WORKERS"
MIN_MS_ENV: Final = "ASSAY_PARALLEL_MIN_MS"

# Estimated one-process cost of loading and scoring a golden (three asserts), measured on the
# 2-core CI machine (CPU time, bench/big_suite.py's suites): a markdown golden 27-30 µs (read,
# frontmatter, validation, checks), a JSONL byte 0.11 µs (15 µs for a 135-byte line), a byte of
# a YAML list 0.27 µs to load (PyYAML reads those) plus its checks. They weigh shares against
# each other and the suite against the threshold; nothing depends on them being exact.
MD_FILE_US: Final = 30.0
JSONL_BYTE_US: Final = 0.12
YAML_BYTE_US: Final = 0.33
# Below this estimated one-process time the fork, moving the workers' goldens and results back
# and the pages a second process touches cost more than the second core saves. Measured with
# `bench/big_suite.py --break-even --repeat 5` (2 cores, `assay gate --check`, all cores / one):
# 500 markdown goldens (~15 ms estimated) 0.99, 1,000 (~30 ms) 0.95, 2,000 0.87, 4,000 0.78,
# 8,000 0.71; 5,000 JSONL lines 0.88, 40,000 0.83. So 30 ms: about 1,000 markdown goldens.
DEFAULT_MIN_MS: Final = 30.0
# What packing a golden (and its results) for the caller costs a worker, as a fraction of
# loading and scoring it (measured on the 100,000-golden JSONL suite: ~2.4 µs of ~14.5 µs).
PACK: Final = 0.17
# A JSONL file is split between processes only when it is worth more than one share's overhead.
_MIN_SPLIT_BYTES: Final = 256 * 1024
_BLOCK: Final = 1 << 20

# The similarity backends a worker may use: pure functions of two texts.
DETERMINISTIC_BACKENDS: Final = frozenset({"none", "difflib", "rapidfuzz"})

# A share of the suite: a golden file, or the lines of a JSONL file between two byte offsets
# (path, start, stop, number of the first line).
Unit = str | tuple[str, int, int, int]
# What a share's scoring gives: the outputs shape it assumed (per candidate or not), and per
# golden the result of each candidate (None for a golden of a tier not selected).
Scored = tuple[bool, list[tuple[Result, ...] | None]]


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity where the OS says)."""
    counter = getattr(os, "process_cpu_count", None)  # Python 3.13+
    if counter is not None:
        return int(counter() or 1)
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def _env_number(name: str, minimum: float) -> float | None:
    text = os.environ.get(name, "").strip()
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        value = minimum - 1
    if not value >= minimum:  # NaN too
        raise ConfigError(f"{name} must be a number >= {minimum:g} (found {text!r})", field=name)
    return value


def workers_wanted(estimated_ms: float, *, workers: int | None = None) -> int:
    """How many processes to use for a suite of this estimated one-process time: one below the
    threshold (:data:`MIN_MS_ENV`, default :data:`DEFAULT_MIN_MS`), else every usable core
    (at most :data:`WORKERS_ENV`, or ``workers``), as long as each has half the threshold's
    estimated work.

    Raises:
        ConfigError: either environment variable is not a number in range.
    """
    cap = _env_number(WORKERS_ENV, 1)
    count = workers if workers is not None else usable_cores()
    if cap is not None:
        count = min(count, int(cap))
    given = _env_number(MIN_MS_ENV, 0)
    minimum = DEFAULT_MIN_MS if given is None else given
    if estimated_ms < minimum:
        return 1
    if minimum > 0:  # on many cores, each process still gets half the threshold's work
        count = min(count, int(estimated_ms / (minimum / 2)))
    return max(1, count)


def fork_is_safe() -> bool:
    """Whether this process may fork workers: Linux, and no thread besides this one."""
    if sys.platform != "linux" or not hasattr(os, "fork"):
        return False
    threading = sys.modules.get("threading")
    return threading is None or threading.active_count() == 1


# ------------------------------------------------------------------------------- the plan


def _cost(path: str) -> tuple[float, int | None]:
    """A file's estimated cost in µs, and its size when it is a JSONL file (splittable)."""
    if path.endswith(".jsonl"):  # the name's ending: discovery found it by its name
        size = os.stat(path).st_size
        return size * JSONL_BYTE_US, size
    if path.endswith((".yaml", ".yml")):
        return os.stat(path).st_size * YAML_BYTE_US, None
    return MD_FILE_US, None


def _line_starts(path: str, targets: Sequence[int]) -> list[tuple[int, int]]:
    """For each byte offset in ``targets`` (ascending), the first line start at or after it and
    that line's number: ``(offset, line)``; the file's end when no line starts there."""
    out: list[tuple[int, int]] = []
    pending = list(targets)
    newlines = 0
    base = 0
    with open(path, "rb", buffering=0) as handle:
        while pending:
            block = handle.read(_BLOCK)
            if not block:
                break
            while pending:
                at = max(pending[0] - 1 - base, 0)
                found = block.find(b"\n", at)
                if found < 0:
                    break
                pending.pop(0)
                out.append((base + found + 1, newlines + block.count(b"\n", 0, found + 1) + 1))
            newlines += block.count(b"\n")
            base += len(block)
    out.extend((base, newlines + 1) for _ in pending)
    return out


def first_share(shares: int) -> float:
    """The fraction of the suite the calling process loads itself, so that all finish
    together: each worker loads and packs (:data:`PACK`) its share, and the calling process
    loads its own and rebuilds the workers' goldens as they come (:data:`REBUILD` of the
    workers' cost each). None at all on many cores, where rebuilding is work enough."""
    if shares < 2:
        return 1.0
    others = shares - 1
    sent = 1 + PACK
    return max(0.0, sent * (1 / others - REBUILD) / (1 - REBUILD * sent + sent / others))


def plan(
    paths: Sequence[str],
    costs: Sequence[tuple[float, int | None]],
    shares: int,
    extra_us: float = 0.0,
) -> list[list[Unit]]:
    """Cut the suite's files into at most ``shares`` contiguous shares (``costs``: :func:`_cost`
    of each path): the first, loaded by the calling process, of :func:`first_share` of the
    estimated cost, the others equal. A file goes whole to the share its middle falls in; a
    large JSONL file is cut between lines where two shares meet. ``extra_us``: the calling
    process's own work while the workers run (see :func:`load`): its share is smaller by it."""
    total = sum(c for c, _ in costs)
    head = max(0.0, first_share(shares) * (total + extra_us) - extra_us)
    per_share = (total - head) / (shares - 1) if shares > 1 else total
    bounds_all = [head + per_share * k for k in range(shares - 1)]  # where share k + 1 starts
    last = shares - 1
    groups: list[list[Unit]] = [[] for _ in range(shares)]

    def share_at(position: float) -> int:
        return min(last, bisect.bisect_right(bounds_all, position))

    spent = 0.0
    for path, (cost, size) in zip(paths, costs, strict=True):
        start_at, end_at = spent, spent + cost
        spent = end_at
        if size is None or size < _MIN_SPLIT_BYTES:
            groups[share_at(start_at + cost / 2)].append(path)
            continue
        first = share_at(start_at)
        bounds = [b for b in bounds_all[first:] if start_at < b < end_at]
        cuts = [int((b - start_at) / cost * size) for b in bounds]
        starts = [(0, 1), *_line_starts(path, cuts)]
        stops = [offset for offset, _ in starts[1:]] + [size]
        for index, ((start, line), stop) in enumerate(zip(starts, stops, strict=True)):
            if stop > start:
                groups[first + index].append((path, start, stop, line))
    # The calling process's share stays first even when empty (on many cores it only rebuilds).
    return [groups[0], *[g for g in groups[1:] if g]]


# ----------------------------------------------------------------------- a share's work


def _load_share(
    units: Sequence[Unit], strict: bool, defaults: Defaults | None = None
) -> list[Golden]:
    """The goldens of a share, in order (duplicates are checked over the whole suite later),
    with the suite's ``defaults`` (read once by :func:`load`, before the fork: every share
    applies the very same object, as one process does).

    Raises:
        GoldenError: a bad golden; Irregular: a JSONL line the exact reader must judge.
    """
    return [g for batch in _batches(units, strict, defaults, None) for g in batch]


def _batches(
    units: Sequence[Unit], strict: bool, defaults: Defaults | None, size: int | None
) -> Iterator[list[Golden]]:
    """:func:`_load_share` in batches of about ``size`` goldens (whole files; None: one batch),
    so that a worker can send each as it is done; at least one batch, empty for no goldens."""
    out: list[Golden] = []
    sent = False
    for unit in units:
        if isinstance(unit, str):
            out.extend(iter_path(unit, strict=strict, read=read_quickly, defaults=defaults))
        else:
            path, start, stop, first = unit
            tier = _folder_tier(path)
            for line, data in jsonl_lines(path, start, stop, first):
                out.extend(
                    build_goldens(
                        data,
                        source=f"{path}:{line}",
                        default_id=None,
                        folder_tier=tier,
                        strict=strict,
                        defaults=defaults,
                    )
                )
                if size is not None and len(out) >= size:
                    yield out
                    out, sent = [], True
        if size is not None and len(out) >= size:
            yield out
            out, sent = [], True
    if out or not sent:
        yield out


@dataclass(slots=True)
class _Scorer:
    """A share's scoring: every candidate's output for each golden of a selected tier."""

    raw: RawOutputs
    similarity: str
    ctx: Any
    tiers: frozenset[str]
    # Each shape's outputs, made once: a share is scored batch by batch.
    _shaped: dict[bool, list[tuple[str, Any]]] = field(default_factory=dict)

    def score(self, goldens: Sequence[Golden]) -> Scored:
        """(the outputs shape assumed, per golden the result of each candidate or None).

        A JSON object of objects is per candidate unless a golden id is one of its keys:
        a share that holds none of its keys assumes per candidate; the gate keeps the results
        only when the whole run's ids agree (else it scores that share's goldens itself).
        """
        from assay.asserts._similarity import get_backend

        raw = self.raw
        wanted = self.tiers
        selected = [g for g in goldens if not wanted or g.tier in wanted]
        per_candidate = raw.per_candidate([g.id for g in selected])
        outputs = self._shaped.get(per_candidate)
        if outputs is None:
            outputs = self._shaped[per_candidate] = list(raw.shaped(per_candidate).items())
        function = get_backend(self.similarity)
        out: list[tuple[Result, ...] | None] = []
        for golden in goldens:
            if wanted and golden.tier not in wanted:
                out.append(None)
                continue
            out.append(
                tuple(
                    [
                        evaluate(
                            golden,
                            produced.get(golden.id, NO_OUTPUT),
                            candidate,
                            similarity=function,
                            similarity_name=self.similarity,
                            ctx=self.ctx,
                        )
                        for candidate, produced in outputs
                    ]
                )
            )
        return per_candidate, out


# ------------------------------------------------------------------ compact transfer

# A share's goldens and results travel as plain tuples through marshal (three times faster than
# pickle both ways), each golden's asserts as indexes into the share's table of distinct specs
# (pickled once); a payload marshal cannot hold (a date among a golden's fields) is pickled.
_MARSHAL: Final = b"M"
_PICKLE: Final = b"P"


class _Unpackable(Exception):
    """A result with fields a static score never sets: that share is scored by the gate."""


def _pack_result(r: Result, golden: Golden) -> Any:
    """A result as a small tuple (None: every assert passed), without what the golden and the
    candidate give back (id, tier, the shared record of each passing check)."""
    if not (
        r.repeats is None
        and r.title is None
        and r.telemetry is None
        and r.failure is None
        and r.safety is None
        and r.finish_reason is None
    ):
        raise _Unpackable
    specs = golden.asserts
    checks = r.checks
    if (
        r.status == "pass"
        and r.decided_by == TIER1
        and not r.notes
        and type(r.score) is float
        and r.score == 1.0
        and len(checks) == len(specs)
        and all([c is s._passed for c, s in zip(checks, specs, strict=True)])
    ):
        return None
    packed = tuple(
        [
            None
            if i < len(specs) and c is specs[i]._passed
            else (c.text, c.op, c.passed, c.reason, c.evidence)
            for i, c in enumerate(checks)
        ]
    )
    return (r.status, r.passed, r.score, r.decided_by, packed, r.notes)


def _encode(goldens: list[Golden], scored: Scored | None, prints: list[str] | None = None) -> bytes:
    """A worker's payload: its goldens, (when it scored) its results, (when asked) their
    fingerprints."""
    import marshal
    import pickle

    table: dict[int, int] = {}
    specs: list[Any] = []
    rows = []
    for g in goldens:
        indexes = []
        for spec in g.asserts:
            index = table.get(id(spec))
            if index is None:
                index = table[id(spec)] = len(specs)
                specs.append(spec)
            indexes.append(index)
        rows.append(
            (
                g.id,
                g.tier,
                g.source,
                g.input,
                g.expected,
                g.has_expected,
                g.rubric,
                tuple(indexes),
                g.threshold,
                g.has_origin,
                g.fields,
                g.threshold_given,
                # The caller holds the suite's one Defaults object: a flag says it applies.
                g.defaults is not None,
            )
        )
    packed: Any = None
    if scored is not None:
        shape, results = scored
        try:
            packed = (
                shape,
                [
                    None if rs is None else tuple([_pack_result(r, g) for r in rs])
                    for g, rs in zip(goldens, results, strict=True)
                ],
            )
        except _Unpackable:
            packed = None
    payload = (pickle.dumps(specs, protocol=pickle.HIGHEST_PROTOCOL), rows, packed, prints)
    try:
        return _MARSHAL + marshal.dumps(payload)
    except ValueError:  # a value marshal does not know (a date, a set): pickle takes anything
        return _PICKLE + pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL)


def _decode(
    data: bytes | bytearray,
    prepared: Prescored | None,
    defaults: Defaults | None = None,
    prints_of: Prints | None = None,
) -> list[Golden]:
    """The goldens of a payload, its results filed in ``prepared`` (when it has some), those
    the worker applied the suite's defaults to given ``defaults`` (the caller's same object),
    their fingerprints filed in ``prints_of`` (when the worker computed them)."""
    import marshal
    import pickle

    body = memoryview(data)[1:]
    blob, rows, packed, prints = marshal.loads(body) if data[:1] == _MARSHAL else pickle.loads(body)
    specs = pickle.loads(blob)
    asserts_of: dict[tuple[int, ...], tuple[Any, ...]] = {}
    goldens = []
    for row in rows:
        indexes = row[7]
        asserts = asserts_of.get(indexes)
        if asserts is None:
            asserts = asserts_of[indexes] = tuple([specs[i] for i in indexes])
        goldens.append(
            Golden(
                row[0],
                row[1],
                row[2],
                row[3],
                row[4],
                row[5],
                row[6],
                asserts,
                row[8],
                row[9],
                row[10],
                row[11],
                defaults if row[12] else None,
            )
        )
    if prints is not None and prints_of is not None:
        for golden, printed in zip(goldens, prints, strict=True):
            prints_of[golden.id] = printed
    if prepared is None or packed is None:
        return goldens
    shape, per_golden = packed
    names = prepared._raw.candidates(shape)
    passing: dict[int, tuple[CheckResult, ...]] = {}  # the checks of an all-pass result
    filed = prepared._results
    for golden, results in zip(goldens, per_golden, strict=True):
        if results is None:
            continue
        rebuilt = []
        for result, name in zip(results, names, strict=True):
            if result is None:
                checks = passing.get(id(golden.asserts))
                if checks is None:
                    checks = passing[id(golden.asserts)] = tuple(
                        [_passed(s) for s in golden.asserts]
                    )
                rebuilt.append(
                    Result(golden.id, golden.tier, name, "pass", True, 1.0, TIER1, checks)
                )
                continue
            status, passed, score, decided_by, packed_checks, notes = result
            specs_ = golden.asserts
            checks = tuple(
                [
                    _passed(specs_[i]) if c is None else CheckResult(*c)
                    for i, c in enumerate(packed_checks)
                ]
            )
            rebuilt.append(
                Result(
                    golden.id, golden.tier, name, status, passed, score, decided_by, checks, notes
                )
            )
        filed[golden.id] = (shape, tuple(rebuilt))
    return goldens


# ------------------------------------------------------------------------- processes


class _Failed(Exception):
    """A share that did not load or score: the run loads in one process."""


@dataclass(slots=True)
class _Worker:
    """A forked worker, and what it has sent so far: bytes not yet a whole batch, and the
    goldens of the batches rebuilt."""

    pid: int
    fd: int
    done: bool = False
    closed: bool = False  # its pipe reached its end
    pending: bytearray = field(default_factory=bytearray)
    goldens: list[Golden] = field(default_factory=list)


# A worker sends its share in batches of about this many goldens, each as soon as it is
# loaded and scored, so that the calling process rebuilds them while it loads its own share
# rather than after (rebuilding is a fifth of the cost of loading). Each batch's payload is
# preceded by its length.
_BATCH: Final = 256
_LENGTH: Final = 8
# The calling process rebuilds a worker's golden at about this fraction of what loading,
# scoring and packing it cost the worker (measured on bench/big_suite.py's markdown suite:
# ~4.5 µs of ~25 µs); it weighs the calling process's share (see :func:`first_share`).
REBUILD: Final = 0.2


def _finish(
    goldens: list[Golden], scorer: _Scorer | None, fingerprinted: bool
) -> tuple[Scored | None, list[str] | None]:
    """A batch's results (when ``scorer`` says how, and its checks are all assay's) and
    fingerprints (when asked)."""
    scored = None
    if scorer is not None and not _project_code(goldens):
        try:
            scored = scorer.score(goldens)
        except Exception:  # a plugin that cannot load...: the gate scores, and raises
            scored = None
    prints = None
    if fingerprinted:  # the baseline step's, computed here on every core
        from assay.gate._baseline import fingerprint

        memo: dict[int, Any] = {}
        prints = [fingerprint(g, memo) for g in goldens]
    return scored, prints


def _project_code(goldens: Sequence[Golden]) -> bool:
    """Whether any golden's checks run a project's code (a python assert, a plugin op) or a
    similarity backend of their own that is not a pure function. A worker leaves those to the
    calling process, which scores them as one process does: a worker ends without the
    interpreter's teardown, which would lose what they buffer (a log file), and runs with the
    collector off, which would keep what they leave in cycles."""
    seen: set[int] = set()
    for golden in goldens:
        asserts = golden.asserts
        if id(asserts) in seen:
            continue
        seen.add(id(asserts))
        if any([_not_for_a_worker(spec) for spec in asserts]):
            return True
    return False


def _not_for_a_worker(spec: Any) -> bool:
    """A project's code, or a ``similar`` assert naming a backend a worker may not use (the
    embedding model, a plugin): the calling process scores it."""
    if runs_project_code(spec):
        return True
    backend = spec.args.get("backend") if spec.op == "similar" else None
    if backend is not None and backend not in DETERMINISTIC_BACKENDS:
        return True
    return any([_not_for_a_worker(child) for child in spec.children or ()])


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _child(
    units: Sequence[Unit],
    strict: bool,
    scorer: _Scorer | None,
    fd: int,
    defaults: Defaults | None,
    fingerprinted: bool = False,
) -> None:
    """A worker's whole life after the fork: load, score and send batch by batch, exit (never
    returns)."""
    import gc

    code = 1
    try:
        gc.disable()  # a short life of objects that form no cycles
        for batch in _batches(units, strict, defaults, _BATCH):
            scored, prints = _finish(batch, scorer, fingerprinted)
            payload = _encode(batch, scored, prints)
            _write_all(fd, len(payload).to_bytes(_LENGTH, "little") + payload)
        code = 0
    except BaseException:  # the parent sees the exit code and loads in one process
        code = 1
    finally:
        os._exit(code)


class _Gather:
    """The calling process's side of the pipes: it reads what the workers sent and rebuilds
    each whole batch, between batches of its own share and, at the end, until every pipe
    closes."""

    def __init__(
        self,
        workers: list[_Worker],
        prepared: Prescored | None,
        defaults: Defaults | None,
        prints_of: Prints | None,
    ):
        import select

        self.workers = workers
        self.prepared = prepared
        self.defaults = defaults
        self.prints_of = prints_of
        self._poll = select.poll()
        self._by_fd = {w.fd: w for w in workers}
        for worker in workers:
            self._poll.register(worker.fd, select.POLLIN)

    def take(self, wait: bool) -> None:
        """Read what is there (``wait``: all there will be, until every pipe closes)."""
        while self._by_fd:
            ready = self._poll.poll(None if wait else 0)
            if not ready:
                return
            for fd, _ in ready:
                worker = self._by_fd[fd]
                chunk = os.read(fd, _BLOCK)
                if chunk:
                    worker.pending += chunk
                    self._rebuild(worker)
                else:
                    worker.closed = True
                    self._poll.unregister(fd)
                    del self._by_fd[fd]
            if not wait:
                return

    def _rebuild(self, worker: _Worker) -> None:
        pending = worker.pending
        at = 0
        while len(pending) - at >= _LENGTH:
            size = int.from_bytes(pending[at : at + _LENGTH], "little")
            end = at + _LENGTH + size
            if len(pending) < end:
                break
            payload = bytes(pending[at + _LENGTH : end])
            worker.goldens.extend(_decode(payload, self.prepared, self.defaults, self.prints_of))
            at = end
        if at:
            del pending[:at]


def _reap(worker: _Worker) -> None:
    """Wait for a worker whose pipe has closed.

    Raises:
        _Failed: it exited with an error or was killed, or left half a batch.
    """
    os.close(worker.fd)
    _, status = os.waitpid(worker.pid, 0)
    worker.done = True
    if os.waitstatus_to_exitcode(status) != 0 or worker.pending:
        raise _Failed


def _stop(workers: list[_Worker]) -> None:
    """Stop and reap every worker still running (after a failure or an interrupt)."""
    import contextlib

    for worker in workers:
        if worker.done:
            continue
        import signal  # only a failure or an interrupt needs it

        with contextlib.suppress(OSError):
            os.kill(worker.pid, signal.SIGKILL)
        with contextlib.suppress(OSError):
            os.close(worker.fd)
        with contextlib.suppress(OSError):
            os.waitpid(worker.pid, 0)
        worker.done = True


def _pipe() -> tuple[int, int]:
    """A pipe whose buffer holds a large share's batches (1 MiB where Linux allows), so that a
    worker seldom waits for the calling process to read."""
    import fcntl

    read_end, write_end = os.pipe()
    with contextlib.suppress(OSError, AttributeError):
        fcntl.fcntl(write_end, fcntl.F_SETPIPE_SZ, 1 << 20)
    return read_end, write_end


def _run(
    groups: list[list[Unit]],
    strict: bool,
    scorer: _Scorer | None,
    prepared: Prescored | None,
    meanwhile: Callable[[], object] | None = None,
    defaults: Defaults | None = None,
    prints_of: Prints | None = None,
) -> list[Golden]:
    """Fork a worker for every share but the first, load the first here (rebuilding what the
    workers send between its batches), gather in order (every share with the suite's
    ``defaults``; every golden's fingerprint filed in ``prints_of``, when given).

    Raises:
        _Failed, AssayError, Irregular, OSError...: any failure (the caller loads in one
            process); every worker is stopped and reaped first.
    """
    import marshal  # noqa: F401 - imported once here, not once per worker
    import pickle  # noqa: F401

    if scorer is not None:
        # The regex engine is imported at the first regex check (9 ms): once here, inherited
        # by every worker, instead of once in each.
        import regex  # noqa: F401

    fingerprinted = prints_of is not None
    workers: list[_Worker] = []
    with settled_objects():
        try:
            for units in groups[1:]:
                read_end, write_end = _pipe()
                try:
                    pid = os.fork()
                except BaseException:
                    os.close(read_end)
                    os.close(write_end)
                    raise
                if pid == 0:  # the worker: it never leaves this block
                    try:
                        os.close(read_end)
                        for other in workers:
                            os.close(other.fd)
                        _child(units, strict, scorer, write_end, defaults, fingerprinted)
                    finally:
                        os._exit(1)
                os.close(write_end)
                workers.append(_Worker(pid, read_end))
            gather = _Gather(workers, prepared, defaults, prints_of)
            goldens: list[Golden] = []
            for batch in _batches(groups[0], strict, defaults, _BATCH):
                scored, prints = _finish(batch, scorer, fingerprinted)
                if prints is not None and prints_of is not None:
                    for golden, printed in zip(batch, prints, strict=True):
                        prints_of[golden.id] = printed
                if prepared is not None and scored is not None:
                    shape, results = scored
                    for golden, rs in zip(batch, results, strict=True):
                        if rs is not None:
                            prepared._results[golden.id] = (shape, rs)
                goldens.extend(batch)
                gather.take(wait=False)
            if meanwhile is not None:  # the caller's own work, while the workers still run
                meanwhile()
            gather.take(wait=True)
            for worker in workers:
                _reap(worker)
                goldens.extend(worker.goldens)
            return goldens
        finally:
            _stop(workers)


def load(
    root: Path,
    *,
    strict: bool = False,
    tiers: Sequence[Tier] = (),
    scoring: StaticScoring | None = None,
    workers: int | None = None,
    meanwhile: Callable[[], object] | None = None,
    meanwhile_us: float = 0.0,
    fingerprints: bool = False,
) -> LoadedSuite | None:
    """Every golden under ``root`` (all tiers, duplicate ids checked, in suite order) loaded by
    several processes, with the results of the goldens of ``tiers`` (all when empty) when
    ``scoring`` says how to score; None when one process should load the suite: too small, one
    core, forking unsafe here, or anything unusual (the caller then loads it, raising the first
    error as one process does).

    Args:
        workers: the most processes to use (default: every usable core; see
            :data:`WORKERS_ENV`).
        meanwhile: work of the caller's to do here while the workers run (the gate reads the
            baseline), estimated at ``meanwhile_us``; called only when the suite is split. If
            it raises, the suite is not split (the caller then does it again and raises).
        fingerprints: each process also computes its goldens' fingerprints (the baseline
            step's; :func:`fingerprints_of` gives them).

    Raises:
        GoldenError: from :func:`assay.goldens.discover` (no such folder...), or a duplicate id
            (the same error one process raises).
        ConfigError: :data:`WORKERS_ENV` or :data:`MIN_MS_ENV` is not a number in range.
    """
    with settled_objects():  # 10,000 paths are 20,000 objects, none in a cycle: filed once
        paths = discover_paths(root)
    if not paths or not fork_is_safe():
        return None
    try:
        defaults = read_defaults(root)  # once, here: every share gets this same object
    except AssayError:  # a bad defaults file: one process raises it, with its message
        return None
    try:
        costs = [_cost(p) for p in paths]
    except OSError:  # a file gone since: one process reports it
        return None
    cores = workers if workers is not None else usable_cores()
    count = workers_wanted(sum(c for c, _ in costs) / 1000, workers=cores)
    if count < 2:
        return None
    try:
        groups = plan(paths, costs, count, meanwhile_us if meanwhile is not None else 0.0)
    except OSError:
        return None
    if len(groups) < 2:
        return None
    scorer, prepared = _scoring(scoring, tiers)
    prints: Prints | None = {} if fingerprints else None
    try:
        goldens = _run(groups, strict, scorer, prepared, meanwhile, defaults, prints)
    except Exception:  # one process raises the first error, as it should
        return None
    if len({g.id for g in goldens}) != len(goldens):
        list(unique(goldens))  # raises the duplicate-id error one process raises
    return LoadedSuite(goldens, prepared, len(groups), prints)


def _scoring(
    scoring: StaticScoring | None, tiers: Sequence[Tier]
) -> tuple[_Scorer | None, Prescored | None]:
    """The workers' scorer and the gate's results holder, when the outputs can be read now and
    scoring is deterministic; else (None, None): an unreadable outputs file or a bad schema is
    reported by the gate, in its order."""
    if scoring is None or scoring.similarity not in DETERMINISTIC_BACKENDS:
        return None, None
    import stat

    from assay.cascade._schemas import check_context
    from assay.models._static import read_outputs

    try:
        # Read now, and again in one process should the workers fail: only a regular file can
        # be read twice (<(cmd) or /dev/stdin is left to the gate, which reads it once).
        if not stat.S_ISREG(os.stat(scoring.outputs).st_mode):
            return None, None
        raw = read_outputs(scoring.outputs)
        # As in the gate: the run's backend is a ``similar`` assert's default (a name only;
        # every backend a worker may use is a pure function looked up by it).
        ctx = replace(check_context(scoring.config), similarity=scoring.similarity)
    except (OSError, AssayError):
        return None, None
    return _Scorer(raw, scoring.similarity, ctx, frozenset(tiers)), Prescored(scoring, raw)


__all__ = [
    "DEFAULT_MIN_MS",
    "DETERMINISTIC_BACKENDS",
    "MIN_MS_ENV",
    "WORKERS_ENV",
    "LoadedSuite",
    "Prescored",
    "StaticScoring",
    "fork_is_safe",
    "load",
    "usable_cores",
    "workers_wanted",
]
