"""A large suite on every core: forked processes load and score chunks of it.

:func:`load` cuts the suite's files (and a large JSONL file's lines) into contiguous chunks of
about equal estimated cost; this process and its forked workers each take the next chunk no one
has taken (see :func:`_run`). Each chunk's goldens come back pickled, with their results against
static outputs (``--outputs``, a deterministic similarity backend) and their fingerprints when
asked; the :class:`~assay.gate._suite.LoadedSuite` hands those to the gate, keyed by golden id.

Results are those of one process, by construction: chunks are contiguous and put together in
order, a worker scores with the same ``evaluate`` and arguments as
:class:`assay.gate._score.Scorer`, and anything unusual (a bad golden, a worker that fails or
dies) makes :func:`load` return None: the caller then loads in one process, which raises the
first error in suite order with its usual message.

What stays in one process: live candidates, the judge, the embedding backend and similarity
plugins, and a project's ``python`` checks and plugin ops (a worker ends with ``os._exit``,
which would lose what such code buffers). Workers are forked (Linux only, and only while this
process runs no other thread: forking a threaded process can deadlock the child), so they
inherit the loaded modules, the outputs and the suite's defaults without pickling them.

``ASSAY_WORKERS=N`` caps the processes (1: always one); ``ASSAY_PARALLEL_MIN_MS=M`` sets the
estimated one-process load-and-score time below which one process is used (0: always split).
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, NoReturn

from assay.asserts import runs_project_code
from assay.cascade import NO_OUTPUT, evaluate
from assay.errors import AssayError, ConfigError, GoldenError
from assay.gate._suite import LoadedSuite, Prescored, Prints, Scored, StaticScoring
from assay.goldens import (
    Defaults,
    Golden,
    Tier,
    build_goldens,
    discover_paths,
    folder_tier,
    iter_path,
    read_defaults,
    unique,
)
from assay.io import iter_jsonl_objects

if TYPE_CHECKING:
    from assay.models import RawOutputs

WORKERS_ENV: Final = "ASSAY_WORKERS"
MIN_MS_ENV: Final = "ASSAY_PARALLEL_MIN_MS"

# Estimated one-process cost (µs) of loading and scoring a golden of three asserts, per markdown
# file, JSONL byte and YAML byte (bench/big_suite.py). They weigh chunks against each other and
# the suite against the threshold; nothing depends on them being exact.
MD_FILE_US: Final = 30.0
JSONL_BYTE_US: Final = 0.12
YAML_BYTE_US: Final = 0.33
# Below this estimated one-process time, forking and pickling cost more than the other cores
# save (see bench/big_suite.py --break-even).
DEFAULT_MIN_MS: Final = 30.0
# Chunks per process: enough that the last chunks, small, end at about the same time.
_CHUNKS_PER_PROCESS: Final = 8
# A JSONL file is cut between chunks only when it is worth more than a chunk's overhead.
_MIN_SPLIT_BYTES: Final = 256 * 1024

# The similarity backends a worker may use: pure functions of two texts.
DETERMINISTIC_BACKENDS: Final = frozenset({"none", "difflib", "rapidfuzz"})

# A piece of a chunk: a golden file, or the lines of a JSONL file between two line starts
# (path, start, stop, number of the first line).
Unit = str | tuple[str, int, int, int]
# What a chunk gives: its goldens, their results (None: not scored there), their fingerprints.
Chunk = tuple[list[Golden], Scored | None, list[str] | None]


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


def workers_wanted(estimated_ms: float, *, workers: int) -> int:
    """How many processes to use for a suite of this estimated one-process time: one below the
    threshold (:data:`MIN_MS_ENV`, default :data:`DEFAULT_MIN_MS`), else ``workers`` (at most
    :data:`WORKERS_ENV`), as long as each has half the threshold's estimated work. A ConfigError
    when either environment variable is not a number in range."""
    cap = _env_number(WORKERS_ENV, 1)
    count = workers if cap is None else min(workers, int(cap))
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


def _line_starts(path: str, offsets: Sequence[int]) -> list[tuple[int, int]]:
    """For each byte offset in ``offsets`` (ascending), the first line start at or after it
    and that line's number: ``(start, line)``; the file's end when no line starts there."""
    with open(path, "rb") as handle:
        data = handle.read()
    out = []
    line, counted = 1, 0
    for offset in offsets:
        start = 0
        if offset > 0:
            found = data.find(b"\n", offset - 1)
            start = len(data) if found < 0 else found + 1
        line += data.count(b"\n", counted, start)
        counted = start
        out.append((start, line))
    return out


def plan(
    paths: Sequence[str], costs: Sequence[tuple[float, int | None]], chunks: int
) -> list[list[Unit]]:
    """Cut the suite's files into at most ``chunks`` contiguous chunks of about equal estimated
    cost (``costs``: :func:`_cost` of each path). A file goes whole to the chunk its middle
    falls in; a large JSONL file is cut between lines where two chunks meet."""
    step = sum(c for c, _ in costs) / chunks
    last = chunks - 1
    groups: list[list[Unit]] = [[] for _ in range(chunks)]

    def chunk_at(position: float) -> int:
        return min(last, int(position / step)) if step > 0 else 0

    spent = 0.0
    for path, (cost, size) in zip(paths, costs, strict=True):
        start_at, end_at = spent, spent + cost
        spent = end_at
        if size is None or size < _MIN_SPLIT_BYTES:
            groups[chunk_at(start_at + cost / 2)].append(path)
            continue
        first = chunk_at(start_at)
        bounds = [k * step for k in range(first + 1, chunk_at(end_at) + 1)]
        starts = [(0, 1), *_line_starts(path, [int((b - start_at) / cost * size) for b in bounds])]
        stops = [offset for offset, _ in starts[1:]] + [size]
        for index, ((start, line), stop) in enumerate(zip(starts, stops, strict=True)):
            if stop > start:
                groups[first + index].append((path, start, stop, line))
    return [g for g in groups if g]


# ----------------------------------------------------------------------- a chunk's work


def load_units(units: Sequence[Unit], strict: bool, defaults: Defaults | None) -> list[Golden]:
    """The goldens of a chunk, in order (duplicates are checked over the whole suite later),
    with the suite's ``defaults``; a bad golden or JSONL line raises (GoldenError, ValueError,
    OSError...)."""
    out: list[Golden] = []
    for unit in units:
        if isinstance(unit, str):
            out.extend(iter_path(unit, strict=strict, defaults=defaults))
            continue
        path, start, stop, first = unit
        tier = folder_tier(path)
        lines = iter_jsonl_objects(path, GoldenError, start=start, stop=stop, first_line=first)
        for source, data in lines:
            out.extend(
                build_goldens(
                    data,
                    source=source,
                    default_id=None,
                    folder_tier=tier,
                    strict=strict,
                    defaults=defaults,
                )
            )
    return out


@dataclass(slots=True)
class _Scorer:
    """A chunk's scoring: every candidate's output for each golden of a selected tier."""

    raw: RawOutputs
    similarity: str
    ctx: Any
    tiers: frozenset[str]
    # Each shape's outputs, made once per process: chunk after chunk reuses them.
    _shaped: dict[bool, list[tuple[str, Any]]] = field(default_factory=dict)

    def score(self, goldens: Sequence[Golden]) -> Scored:
        """(the outputs shape assumed, per golden the result of each candidate or None).

        A JSON object of objects is per candidate unless a golden id is one of its keys:
        a chunk that holds none of its keys assumes per candidate; the gate keeps the results
        only when the whole run's ids agree (else it scores that chunk's goldens itself).
        """
        from assay.asserts import get_backend

        wanted = self.tiers
        selected = [g for g in goldens if not wanted or g.tier in wanted]
        per_candidate = self.raw.per_candidate([g.id for g in selected])
        outputs = self._shaped.get(per_candidate)
        if outputs is None:
            outputs = self._shaped[per_candidate] = list(self.raw.shaped(per_candidate).items())
        function = get_backend(self.similarity)
        out: list[tuple[Any, ...] | None] = []
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


def _project_code(goldens: Sequence[Golden]) -> bool:
    """Whether any golden's checks run a project's code (a python assert or transform, a plugin
    op) or a similarity backend that is not a pure function: this process scores those, as one
    process does (a worker's end would lose what they buffer)."""
    seen: set[int] = set()
    for golden in goldens:
        if golden.transform is not None and golden.transform.language == "python":
            return True
        asserts = golden.asserts
        if id(asserts) in seen:
            continue
        seen.add(id(asserts))
        if any([_not_for_a_worker(spec) for spec in asserts]):
            return True
    return False


def _not_for_a_worker(spec: Any) -> bool:
    """A project's code, or a ``similar`` assert naming a backend a worker may not use (the
    embedding model, a plugin)."""
    if runs_project_code(spec):
        return True
    backend = spec.args.get("backend") if spec.op == "similar" else None
    if backend is not None and (
        not isinstance(backend, str) or backend not in DETERMINISTIC_BACKENDS
    ):
        return True
    return any([_not_for_a_worker(child) for child in spec.children or ()])


@dataclass(frozen=True, slots=True)
class _Job:
    """A run's chunks and how to do each: what every worker inherits at the fork."""

    chunks: list[list[Unit]]
    strict: bool
    defaults: Defaults | None
    scorer: _Scorer | None
    fingerprints: bool

    def run(self, index: int) -> Chunk:
        """Chunk ``index``: its goldens, results (when its checks are all assay's) and
        fingerprints (when asked)."""
        goldens = load_units(self.chunks[index], self.strict, self.defaults)
        scored = None
        if self.scorer is not None and not _project_code(goldens):
            scored = self.scorer.score(goldens)
        prints = None
        if self.fingerprints:  # the baseline step's, computed here on every core
            from assay.gate._baseline import fingerprint

            memo: dict[int, Any] = {}
            prints = [fingerprint(g, memo) for g in goldens]
        return goldens, scored, prints


# ------------------------------------------------------------------------------- the run

# A chunk's number on the ticket pipe.
_TICKET: Final = 4
# A worker's pipe holds this much before its writes wait (Linux's default is 64 KiB; a
# chunk's results are about 120 KiB): it rarely waits for this process to finish a chunk.
_PIPE_BYTES: Final = 1 << 20


def _run(job: _Job, processes: int, meanwhile: Callable[[], object] | None) -> list[Chunk]:
    """Every chunk's result, in order, from this process and ``processes - 1`` forked workers.

    Each process takes the next chunk no one has taken from a pipe of tickets (the chunk
    numbers, all written before the fork; Linux reads a pipe's 4 bytes at once), so every core
    works until the end and none waits for a plan. A worker sends each chunk's results, pickled,
    down a pipe of its own; this process unpickles them between its own chunks, on its main
    thread (a thread doing it would hold the GIL while a regex's time budget, a wall clock,
    runs here: a spurious regex_timeout under load). Any failure, a worker's included, raises
    (the caller loads in one process).
    """
    tickets, filler = os.pipe()
    for index in range(len(job.chunks)):
        os.write(filler, index.to_bytes(_TICKET, "little"))
    os.close(filler)
    inbox = _Inbox(job)
    try:
        for _ in range(processes - 1):
            inbox.fork(tickets)
        if meanwhile is not None:  # the caller's own work, while the workers start
            meanwhile()
        while ticket := os.read(tickets, _TICKET):
            index = int.from_bytes(ticket, "little")
            inbox.chunks[index] = job.run(index)
            inbox.read(wait=False)
        inbox.read(wait=True)
        inbox.reap()
        return [inbox.chunks[index] for index in range(len(job.chunks))]  # KeyError: one missing
    finally:
        os.close(tickets)
        inbox.stop()


class _Inbox:
    """The forked workers of a run, and the chunks done (theirs and this process's own)."""

    def __init__(self, job: _Job) -> None:
        self.job = job
        self.pids: list[int] = []
        self.pending: dict[int, bytearray] = {}  # a worker's pipe -> what came, not yet read
        self.chunks: dict[int, Chunk] = {}

    def fork(self, tickets: int) -> None:
        import fcntl

        readable, writable = os.pipe()
        with contextlib.suppress(OSError):  # a smaller pipe only makes the worker wait more
            fcntl.fcntl(writable, fcntl.F_SETPIPE_SZ, _PIPE_BYTES)
        pid = os.fork()
        if pid == 0:
            _worker(self.job, tickets, writable)  # never returns
        os.close(writable)
        self.pids.append(pid)
        self.pending[readable] = bytearray()

    def read(self, *, wait: bool) -> None:
        """Unpickle the chunks the workers have sent (``wait``: until every worker is done)."""
        import pickle
        import select

        while self.pending:
            ready, _, _ = select.select(list(self.pending), [], [], None if wait else 0)
            if not ready:
                return
            for pipe in ready:
                data = os.read(pipe, _PIPE_BYTES)
                if not data:  # the worker is done (or dead: reap says which)
                    os.close(pipe)
                    if self.pending.pop(pipe):
                        raise RuntimeError("a worker stopped in the middle of a chunk")
                    continue
                buffer = self.pending[pipe]
                buffer += data
                while len(buffer) >= 8 and len(buffer) >= 8 + (size := _size(buffer)):
                    index, chunk = pickle.loads(memoryview(buffer)[8 : 8 + size])
                    self.chunks[index] = _theirs(chunk, self.job)
                    del buffer[: 8 + size]

    def reap(self) -> None:
        while self.pids:
            _, status = os.waitpid(self.pids.pop(), 0)
            if status != 0:
                raise RuntimeError(f"a worker failed (wait status {status})")

    def stop(self) -> None:
        """Kill and reap what is left (after a failure, or Ctrl-C), close the pipes."""
        import signal

        for pid in self.pids:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
        self.pids.clear()
        for pipe in self.pending:
            os.close(pipe)
        self.pending.clear()


def frame(index: int, chunk: Chunk) -> bytes:
    """What a worker sends for chunk ``index``: the size of what follows, then ``(index,
    chunk)`` pickled."""
    import pickle

    data = pickle.dumps((index, chunk), protocol=pickle.HIGHEST_PROTOCOL)
    return len(data).to_bytes(8, "little") + data


def _size(buffer: bytearray) -> int:
    return int.from_bytes(buffer[:8], "little")


def _worker(job: _Job, tickets: int, pipe: int) -> NoReturn:
    """A forked worker's life: chunks until no ticket is left, each sent down ``pipe`` as its
    :func:`frame`. It ends with ``os._exit``, as a multiprocessing worker does: nothing of the
    parent's (atexit, buffered files) runs here."""
    import signal

    status = 1
    try:
        # Ctrl-C is the calling process's to handle (it stops the workers, says one line,
        # exits 130).
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        while ticket := os.read(tickets, _TICKET):
            index = int.from_bytes(ticket, "little")
            with memoryview(frame(index, job.run(index))) as out:
                sent = 0
                while sent < len(out):
                    sent += os.write(pipe, out[sent:])
        status = 0
    finally:
        os._exit(status)


def _theirs(chunk: Chunk, job: _Job) -> Chunk:
    """A worker's chunk, its goldens given the suite's one defaults object (pickling made
    each chunk a copy of its own)."""
    defaults = job.defaults
    goldens, scored, prints = chunk
    if defaults is not None:
        goldens = [g if g.defaults is None else replace(g, defaults=defaults) for g in goldens]
    return goldens, scored, prints


def load(
    root: Path,
    *,
    strict: bool = False,
    tiers: Sequence[Tier] = (),
    scoring: StaticScoring | None = None,
    workers: int | None = None,
    meanwhile: Callable[[], object] | None = None,
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
            baseline); called only when the suite is split. If it raises, the suite is not
            split (the caller then does it again and raises).
        fingerprints: each process also computes its goldens' fingerprints (the baseline
            step's; :meth:`LoadedSuite.fingerprints_of` gives them).

    Raises what one process raises for no such folder or a duplicate id (GoldenError), and a
    ConfigError for :data:`WORKERS_ENV` or :data:`MIN_MS_ENV` out of range.
    """
    paths = discover_paths(root)
    if not paths or not fork_is_safe():
        return None
    try:
        defaults = read_defaults(root)  # once, here: every chunk gets this same object
        costs = [_cost(p) for p in paths]
    except (AssayError, OSError):  # a bad defaults file, a file gone: one process says so
        return None
    cores = workers if workers is not None else usable_cores()
    count = workers_wanted(sum(c for c, _ in costs) / 1000, workers=cores)
    if count < 2:
        return None
    try:
        chunks = plan(paths, costs, count * _CHUNKS_PER_PROCESS)
    except OSError:  # a file gone since: one process says so
        return None
    if len(chunks) < 2:  # one large file: nothing to share
        return None
    scorer, prescored = _scoring(scoring, tiers)
    try:
        done = _run(_Job(chunks, strict, defaults, scorer, fingerprints), count, meanwhile)
    except Exception:  # one process raises the first error, as it should
        return None
    goldens: list[Golden] = []
    prints: Prints | None = {} if fingerprints else None
    for chunk_goldens, scored, chunk_prints in done:
        goldens.extend(chunk_goldens)
        if prescored is not None and scored is not None:
            prescored.file(chunk_goldens, scored)
        if prints is not None and chunk_prints is not None:
            prints.update(zip([g.id for g in chunk_goldens], chunk_prints, strict=True))
    if len({g.id for g in goldens}) != len(goldens):
        list(unique(goldens))  # raises the duplicate-id error one process raises
    return LoadedSuite(goldens, prescored, count, prints)


def _scoring(
    scoring: StaticScoring | None, tiers: Sequence[Tier]
) -> tuple[_Scorer | None, Prescored | None]:
    """The workers' scorer and the gate's results holder, when the outputs can be read now and
    scoring is deterministic; else (None, None): an unreadable outputs file or a bad schema is
    reported by the gate, in its order."""
    if scoring is None or scoring.similarity not in DETERMINISTIC_BACKENDS:
        return None, None
    import stat

    from assay.cascade import check_context
    from assay.models import read_outputs

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
