"""The goldens gate as a library call: goldens + outputs → results → baseline write / check.

Commands parse flags and call :func:`run_gate`; renderers print the :class:`GateRun` it returns.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal

from assay._collector import settled_objects
from assay.asserts import as_text
from assay.asserts._similarity import get_backend
from assay.asserts._spec import JUDGE_OP
from assay.cascade._cascade import (
    NO_OUTPUT,
    combine_repeats,
    error_result,
    evaluate,
    is_skipped,
)
from assay.cascade._schemas import check_context
from assay.config import Config
from assay.errors import ConfigError, GoldenError
from assay.gate._suite import LoadedSuite, Prescored
from assay.goldens import Golden, Tier, iter_goldens, load_suite
from assay.models._static import load_outputs
from assay.paths import shown_path
from assay.results import (
    CallFailed,
    CandidateSummary,
    ReportContent,
    Result,
    results_document,
    summarize_by_candidate,
)
from assay.vocabulary import TIER3

if TYPE_CHECKING:
    # The baseline and the comparison are loaded only by runs that write or check one: a plain
    # report never pays for them.
    from assay.gate._regressions import Diff, Trials
    from assay.gate._selection import IdFilter
    from assay.gate._shards import Shard

Mode = Literal["report", "write-baseline", "check"]
# Where the undecided verdict starts quoting the first errors (the provider's or judge's own
# words): a run record keeps the verdict and leaves the quotes out.
QUOTED_ERRORS: Final = "; first: "


@dataclass(frozen=True, slots=True)
class GateOptions:
    """What the user asked for (flags already parsed)."""

    path: Path | None = None
    outputs: Path | None = None
    example: bool = False
    tiers: tuple[Tier, ...] = ()
    similarity: str | None = None
    baseline: Path | None = None
    mode: Mode = "report"
    force: bool = False
    no_cache: bool = False
    candidates: Path | None = None
    judge: bool = False
    progress: bool = False
    alpha: float | None = None
    max_repeats: int | None = None
    shard: Shard | None = None
    # -k / --filter: only the goldens whose id matches (see assay.gate._selection).
    filter: IdFilter | None = None
    # A live run's overrides of its candidates file's settings.
    repeats: int | None = None
    max_concurrency: int | None = None


@dataclass(slots=True)
class GateRun:
    """Everything a renderer needs to show a gate run."""

    results: list[Result]
    summaries: list[CandidateSummary]
    golden_count: int
    mode: Mode
    baseline_path: Path | None = None
    diff: Diff | None = None
    gate_failures: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)
    # For views that show content (the HTML report's detail panels): never serialised here.
    goldens: dict[str, Golden] = field(default_factory=dict, repr=False)
    outputs: dict[str, dict[str, Any]] = field(default_factory=dict, repr=False)
    baseline_document: dict[str, Any] | None = field(default=None, repr=False)
    # The evidence behind each random result, and why the gate could not decide (if it could
    # not): too many errors. Undecided wins over failed: exit 1, never 2, on broken calls.
    trials: dict[tuple[str, str], Trials] = field(default_factory=dict, repr=False)
    undecided: list[str] = field(default_factory=list)
    # A live run's answers go into its --json results (static outputs are the user's file).
    live: bool = False
    shard: str | None = None
    # A shard's evidence for `assay merge` (see assay.gate._partial): only in a shard's document.
    partial: dict[str, Any] | None = field(default=None, repr=False)
    # Judge asserts skipped because cheaper asserts decided their golden (None: the run
    # scored no judge assert, and its document has no such key).
    judge_saved: int | None = None

    @property
    def exit_code(self) -> int:
        if self.undecided:
            return 1
        return 2 if self.gate_failures else 0

    @property
    def verdict(self) -> str:
        if self.undecided:
            return "undecided"
        return "failed" if self.gate_failures else "passed"

    def to_dict(self) -> dict[str, Any]:
        """The ``--json`` document (schema version 2); every view reads this."""
        out = results_document("gate", self.results, self.summaries)
        for result in out["results"]:
            # A live run's answers are in its results; of static outputs (the user's own file),
            # those that did not pass, so that every report can show what was said.
            if not self.live and result["status"] == "pass":
                continue
            produced = self.outputs.get(result["candidate"], {})
            if result["id"] in produced and (result["status"] != "error" or not self.live):
                result["output"] = produced[result["id"]]
        summary = out["summary"]
        summary["goldens"] = self.golden_count
        summary["mode"] = self.mode
        summary["gate"] = self.verdict
        if self.shard is not None:
            summary["shard"] = self.shard
        if self.gate_failures:
            summary["gate_failures"] = list(self.gate_failures)
        if self.undecided:
            summary["undecided"] = list(self.undecided)
        if self.notes:
            summary["notes"] = list(self.notes)
        if self.stats:
            summary["model_calls"] = dict(self.stats)
        if self.judge_saved is not None:
            summary["judge_calls_saved"] = self.judge_saved
        if self.baseline_path is not None:
            summary["baseline"] = shown_path(self.baseline_path)
        if self.diff is not None:
            out["regressions"] = [r.to_dict() for r in self.diff.regressions]
            summary["baseline_notes"] = list(self.diff.notes)
        if self.partial is not None:
            out["partial"] = self.partial
        return out

    def content(self) -> ReportContent:
        """What views that show content (the HTML detail panels) may read besides the document."""
        return ReportContent(self.goldens, self.outputs, self.baseline_document)


def example_paths() -> tuple[Path, Path]:
    """The packaged example: (goldens folder, outputs file), inside the wheel."""
    from importlib import resources  # 4 ms to import; only the example needs it

    example = resources.files("assay").joinpath("data", "example")
    return Path(str(example.joinpath("goldens"))), Path(str(example.joinpath("outputs.json")))


def _select(goldens: Iterable[Golden], tiers: tuple[Tier, ...]) -> Iterator[Golden]:
    if not tiers:
        return iter(goldens)
    wanted = set(tiers)
    return (g for g in goldens if g.tier in wanted)


def load_selected(
    options: GateOptions, config: Config, meanwhile: _Meanwhile | None = None
) -> LoadedSuite:
    """The goldens this run scores (those of its shard, with ``--shard``; those ``--filter``
    matches, with it).

    A large suite is loaded by one process per core, which also score it against static
    outputs (:mod:`assay.gate._load`; the results come keyed by golden id in the suite); a
    small one, a shard, or a platform without a safe fork loads here. ``meanwhile`` is done
    here while the workers run, when there are workers.
    """
    from assay.gate import _load

    root = example_paths()[0] if options.example else options.path
    project = root is None  # the project's goldens folder, plus packaged defaults
    if project and config.goldens.exists():
        root = config.goldens
    if options.shard is None and root is not None:
        outputs = example_paths()[1] if options.example else options.outputs
        static = options.candidates is None and not (options.judge or config.judge.verified)
        backend = options.similarity or config.similarity
        suite = _load.load(
            root,
            strict=config.strict,
            tiers=options.tiers,
            scoring=_load.StaticScoring(outputs, backend, config)
            if static and outputs is not None
            else None,
            meanwhile=meanwhile,
            meanwhile_us=0.0 if meanwhile is None else meanwhile.cost_us,
            fingerprints=options.mode != "report",
        )
        if suite is not None and project:
            tiers = options.tiers or None
            own = load_suite(root, tiers, strict=config.strict, own=suite.goldens)
            return suite.keep(_filtered(own, options))
        if suite is not None:
            return suite.keep(_filtered(_select(suite.goldens, options.tiers), options))
    with settled_objects():  # a large suite's objects, filed once (see there)
        goldens = load_whole(options, config)
    chosen = goldens if options.shard is None else options.shard.select(goldens)
    return LoadedSuite(_filtered(chosen, options))


def _filtered(goldens: Iterable[Golden], options: GateOptions) -> list[Golden]:
    chosen = options.filter
    return list(goldens) if chosen is None else chosen.select(goldens)


class _Meanwhile:
    """The baseline, read while the workers load the suite (it is the next step anyway)."""

    # Reading and validating a baseline costs about 0.016 µs per byte (10,000 goldens: 2.3 MB
    # in 36 ms, measured with bench/big_suite.py's suite).
    _US_PER_BYTE = 0.016

    def __init__(self, path: Path) -> None:
        self.path = path
        self.document: dict[str, Any] | None = None
        try:
            self.cost_us = path.stat().st_size * self._US_PER_BYTE
        except OSError:
            self.cost_us = 0.0

    def __call__(self) -> None:
        self.document = _load_baseline(self.path)


def load_whole(options: GateOptions, config: Config) -> list[Golden]:
    """The goldens of the suite and tiers asked for, before any ``--shard`` selection."""
    strict = config.strict
    if options.example:
        goldens = list(_select(iter_goldens(example_paths()[0], strict=strict), options.tiers))
    elif options.path is not None:
        goldens = list(_select(iter_goldens(options.path, strict=strict), options.tiers))
    else:
        goldens = load_suite(config.goldens, options.tiers or None, strict=strict)
    return goldens


def _outputs(
    options: GateOptions, config: Config, suite: LoadedSuite, by_id: dict[str, Golden]
) -> tuple[dict[str, dict[str, list[Any]]], dict[str, Any], Any]:
    """Every candidate's outputs, as lists (one per repeat), run statistics, and for a live
    run its candidates file and finish reasons (None for static outputs)."""
    if options.candidates is not None:
        from assay.models import generate_outputs, load_candidates_file

        spec = load_candidates_file(options.candidates)
        if options.repeats is not None:
            spec = replace(spec, repeats=options.repeats)
        if options.max_concurrency is not None:
            spec = replace(spec, max_concurrency=options.max_concurrency)
        live = generate_outputs(
            suite.goldens,
            spec,
            root=config.root,
            use_cache=not options.no_cache,
            progress=options.progress,
        )
        stats = {"repeats": live.repeats, **live.stats.to_dict()}
        return live.outputs, stats, (spec, live.finish, live.measured)
    outputs_path = example_paths()[1] if options.example else options.outputs
    if outputs_path is None:
        raise ConfigError(
            "no candidate outputs: pass --outputs FILE, --candidates FILE or --example",
            field="--outputs",
        )
    if suite.prescored is not None:  # loaded by workers, which read the outputs file already
        given = suite.prescored.outputs_for(outputs_path, by_id)
        if given is not None:
            return given, {}, None
    flat = load_outputs(outputs_path, by_id)
    return {c: {g: [o] for g, o in m.items()} for c, m in flat.items()}, {}, None


def _prime(
    similarity: Any, goldens: list[Golden], outputs: dict[str, dict[str, list[Any]]]
) -> None:
    """Let a batching backend (embeddings) encode every text of the run up front."""
    prime = getattr(similarity, "prime", None)
    if prime is None:
        return
    texts = []
    for golden in goldens:
        if golden.asserts or not golden.has_expected:
            continue
        texts.append(as_text(golden.expected))
        for produced in outputs.values():
            texts.extend(as_text(o) for o in produced.get(golden.id, []) if not _failed(o))
    prime(texts)


def _failed(output: Any) -> bool:
    return isinstance(output, CallFailed)


@dataclass(slots=True)
class _Scoring:
    """What scoring an output needs, shared by the first look and any extra repeats."""

    similarity: Any
    backend_name: str
    ctx: Any
    judging: bool
    config: Config
    use_cache: bool
    judge_stats: Any = None  # a RunStats once the judge has been called
    # Judge asserts scored (every repeat) and those skipped because cheaper asserts had
    # already decided their golden: each skip is a judge call saved.
    judge_asserts: int = 0
    judge_saved: int = 0

    def score(
        self,
        outputs: dict[str, dict[str, list[Any]]],
        goldens: list[Golden],
        by_id: dict[str, Golden],
        *,
        fill_missing: bool = True,
        prescored: Prescored | None = None,
        finish: dict[str, dict[str, list[str | None]]] | None = None,
        measured: dict[str, dict[str, list[tuple[float | None, float | None]]]] | None = None,
    ) -> tuple[list[tuple[str, str]], list[list[Result]]]:
        """One result per repeat for each (candidate, golden), in candidate then suite order;
        a golden with no output is ``no-output`` (or skipped, without ``fill_missing``)."""
        keys: list[tuple[str, str]] = []
        per_pair: list[list[Result]] = []
        pending: list[tuple[int, int, Any]] = []
        ready = None  # (golden, candidate index) -> the result a worker computed, if any
        prepared = prescored if fill_missing and finish is None and not self.judging else None
        if prepared is not None:
            ready = prepared.lookup(outputs, self.config, self.backend_name)
        for position, (candidate, produced) in enumerate(outputs.items()):
            whole = prepared.all_of(goldens, position) if prepared and ready else None
            if whole is not None:  # the workers scored every golden: all at once
                with settled_objects():  # only these lists, no cycle: filed once
                    keys.extend([(candidate, g.id) for g in goldens])
                    per_pair.extend([[r] for r in whole])
                continue
            for golden in goldens:
                done = ready(golden, position) if ready is not None else None
                if done is not None:
                    keys.append((candidate, golden.id))
                    per_pair.append([done])
                    continue
                repeats = produced.get(golden.id)
                if not repeats:
                    if not fill_missing:
                        continue
                    repeats = [NO_OUTPUT]
                results = []
                reasons = (finish or {}).get(candidate, {}).get(golden.id) or []
                # (latency, cost) of each live call, for the latency and cost asserts.
                took = (measured or {}).get(candidate, {}).get(golden.id) or []
                for index, output in enumerate(repeats):
                    if _failed(output):
                        results.append(error_result(golden, candidate, output.message))
                        continue
                    result = evaluate(
                        golden,
                        output,
                        candidate,
                        similarity=self.similarity,
                        similarity_name=self.backend_name,
                        ctx=self.ctx,
                        finish_reason=reasons[index] if index < len(reasons) else None,
                        latency_ms=took[index][0] if index < len(took) else None,
                        cost_usd=took[index][1] if index < len(took) else None,
                    )
                    if self.judging and result.status == "needs-judge":
                        pending.append((len(per_pair), len(results), output))
                    results.append(result)
                keys.append((candidate, golden.id))
                per_pair.append(results)
        if pending:
            from assay.cascade._judge import apply_judge
            from assay.models import RunStats

            if self.judge_stats is None:
                self.judge_stats = RunStats()

            judged = apply_judge(
                [(per_pair[p][r], out, by_id[per_pair[p][r].id]) for p, r, out in pending],
                self.config.judge,
                root=self.config.root,
                use_cache=self.use_cache,
                stats=self.judge_stats,
            )
            for (p, r, _), result in zip(pending, judged, strict=True):
                per_pair[p][r] = result
        self._count_judge_asserts(per_pair)
        return keys, per_pair

    def _count_judge_asserts(self, per_pair: list[list[Result]]) -> None:
        # A result holding a judge check always has a note (a skip, the judge's verdict, a
        # pending judge, a judge error): the common note-less result is not looked into.
        for results in per_pair:
            for result in results:
                if not result.notes:
                    continue
                for check in result.checks:
                    if check.op == JUDGE_OP:
                        self.judge_asserts += 1
                        self.judge_saved += is_skipped(check)


def _combine(per_pair: list[list[Result]]) -> list[Result]:
    return [rs[0] if len(rs) == 1 else combine_repeats(rs) for rs in per_pair]


def run_gate(options: GateOptions, config: Config) -> GateRun:
    """Score outputs against goldens; write or check the baseline as asked.

    Raises:
        AssayError: for any bad input (goldens, outputs, baseline, config).
    """
    suite_ids: list[str] | None = None
    checked = options.mode == "check"
    early = _Meanwhile(options.baseline or config.baseline) if checked else None
    if options.shard is None:
        suite = load_selected(options, config, early)
    else:  # a shard's partial places each of its goldens in the whole suite's order
        whole = load_whole(options, config)
        suite_ids = [g.id for g in whole]
        suite = LoadedSuite(list(options.shard.select(whole)))
        del whole
    goldens = suite.goldens
    if not goldens:
        _nothing_selected(options, config)
    by_id = {g.id: g for g in goldens}
    # Read the baseline first: a missing one fails before any model call, and adaptive
    # repeats compare with it between looks.
    document = None
    if checked:
        document = early.document if early is not None and early.document is not None else None
        if document is None:
            document = _load_baseline(options.baseline or config.baseline)
    outputs, stats, live_info = _outputs(options, config, suite, by_id)
    spec, finish, measured = live_info if live_info is not None else (None, None, None)
    backend_name = options.similarity or config.similarity
    similarity = get_backend(backend_name)
    _prime(similarity, goldens, outputs)
    # The run's backend goes to the checks too: it is a ``similar`` assert's default.
    ctx = replace(check_context(config), similarity=backend_name, similarity_fn=similarity)
    scoring = _Scoring(
        similarity,
        backend_name,
        ctx,
        options.judge or config.judge.verified,
        config,
        not options.no_cache,
    )
    keys, per_pair = scoring.score(
        outputs, goldens, by_id, prescored=suite.prescored, finish=finish, measured=measured
    )
    spec_notes: list[str] = list(spec.notes) if spec is not None else []
    strays: dict[str, tuple[int, list[str]]] = {}
    for candidate, produced in outputs.items():
        # Outputs of the other shards' goldens are expected in a shard's outputs file.
        shard = options.shard
        chosen = options.filter  # so are those of the goldens --filter left out
        stray = sorted(
            k
            for k in produced
            if k not in by_id
            and (shard is None or shard.holds(str(k)))
            and (chosen is None or chosen.holds(str(k)))
        )
        if stray:
            strays[candidate] = (len(stray), stray[:3])
    notes = [*spec_notes, *stray_notes(strays)]
    live = spec is not None
    adaptive: _Adaptive | None = None
    max_repeats = options.max_repeats or config.gate.max_repeats
    if document is not None and spec is not None and max_repeats and max_repeats > spec.repeats:
        adaptive = _adaptive_repeats(
            document, keys, per_pair, spec, max_repeats, options, config, by_id, scoring, stats
        )
    if scoring.judge_stats is not None:  # judge calls are counted apart from the candidates'
        stats = {**stats, "judge": scoring.judge_stats.to_dict()}
    results = _combine(per_pair)
    summaries = summarize_by_candidate(results, list(outputs))
    run = GateRun(results, summaries, len(goldens), options.mode, notes=notes, stats=stats)
    if scoring.judge_asserts:
        run.judge_saved = scoring.judge_saved
    run.live = live
    run.shard = None if options.shard is None else str(options.shard)
    run.goldens = by_id
    run.outputs = {
        c: {g: (o[0].message if _failed(o[0]) else o[0]) for g, o in m.items() if o}
        for c, m in outputs.items()
    }
    gating = options.mode != "report" or config.min_pass_rate is not None
    tally = ErrorTally.of(per_pair)
    if gating or options.shard is not None:  # a partial carries the evidence for its merge
        run.trials = _trials(per_pair, results, live=live)
    step = GateStep(
        mode=options.mode,
        baseline=options.baseline or config.baseline,
        force=options.force,
        alpha=config.gate.alpha if options.alpha is None else options.alpha,
        tiers=options.tiers,
        suite=suite_of(options, config),
        path_given=options.path is not None,
        sharded=options.shard is not None or options.filter is not None,
        # The fingerprints the loading processes computed, when they did.
        goldens=suite.fingerprints_of() or by_id,
        strict=[g.id for g in goldens if g.fields.get("gate") == "strict"],
    )
    looks, first_look = (1, None) if adaptive is None else (adaptive.looks, adaptive.first_look)
    if options.shard is not None and suite_ids is not None:
        from assay.gate._partial import gate_partial

        run.partial = gate_partial(
            run,
            step,
            options,
            config,
            suite_ids=suite_ids,
            candidates=list(outputs),
            tally=tally,
            strays=strays,
            spec_notes=spec_notes,
            looks=looks,
            first_look=first_look,
            judging=scoring.judging,
            similarity=backend_name,
        )
    conclude(run, step, config, document, tally, looks=looks, first_look=first_look)
    return run


def stray_notes(strays: dict[str, tuple[int, list[str]]]) -> list[str]:
    """The note for each candidate whose outputs name goldens the run did not select:
    candidate -> (how many, the first three ids in sorted order)."""
    return [
        f"candidate '{candidate}': {count} output(s) name no selected "
        f"golden (e.g. {', '.join(examples)})"
        for candidate, (count, examples) in strays.items()
    ]


def conclude(
    run: GateRun,
    step: GateStep,
    config: Config,
    document: dict[str, Any] | None,
    tally: ErrorTally,
    *,
    looks: int = 1,
    first_look: dict[tuple[str, str], Trials] | None = None,
) -> None:
    """The verdict of a scored run (``run.trials`` already set): can the gate decide, the
    baseline written or compared with, ``min_pass_rate``. A merge of shards ends here too."""
    if step.mode != "report" or config.min_pass_rate is not None:
        run.undecided = tally.reasons(config.gate.max_error_rate)
    _baseline_step(run, step, config, document, looks, first_look)
    if config.min_pass_rate is not None:
        _min_pass_rate(run, config.min_pass_rate)


@dataclass(frozen=True, slots=True)
class _Adaptive:
    """How adaptive repeats went: the planned looks and the first look's evidence."""

    looks: int
    first_look: dict[tuple[str, str], Trials]


def _adaptive_repeats(
    document: dict[str, Any],
    keys: list[tuple[str, str]],
    per_pair: list[list[Result]],
    spec: Any,
    max_repeats: int,
    options: GateOptions,
    config: Config,
    by_id: dict[str, Golden],
    scoring: _Scoring,
    stats: dict[str, Any],
) -> _Adaptive:
    """Give the goldens whose comparison is still open more trials, a batch of ``repeats`` at a
    time, up to ``max_repeats`` in all; model calls go only where the answer is uncertain.

    The error rate holds: every look may reject, so the per-golden level is alpha divided by
    the planned number of looks (Bonferroni), and the suite test reads the first look only.
    ``per_pair`` grows in place and ``stats`` counts the extra calls.
    """
    from assay.gate._regressions import Rules, undecided_pairs
    from assay.models import generate_outputs

    looks = -(-max_repeats // spec.repeats)
    rules = Rules(
        config.gate.alpha if options.alpha is None else options.alpha,
        config.gate.score_tolerance,
        looks,
    )
    strict = [g.id for g in by_id.values() if g.fields.get("gate") == "strict"]
    first_look = _trials(per_pair, _combine(per_pair), live=True)
    index = {key: i for i, key in enumerate(keys)}
    goldens = list(by_id.values())
    done = spec.repeats
    while done < max_repeats:
        results = _combine(per_pair)
        trials = _trials(per_pair, results, live=True)
        open_ = undecided_pairs(
            document, results, trials, selected=by_id, strict=strict, rules=rules
        )
        if not open_:
            break
        batch = min(spec.repeats, max_repeats - done)
        extra = generate_outputs(
            [g for g in goldens if any((c, g.id) in open_ for c, _ in keys)],
            spec,
            root=config.root,
            use_cache=not options.no_cache,
            progress=options.progress,
            repeats=range(done, done + batch),
            only=open_,
        )
        for name, value in extra.stats.to_dict().items():
            stats[name] = stats.get(name, 0) + value
        extra_keys, extra_results = scoring.score(
            extra.outputs,
            goldens,
            by_id,
            fill_missing=False,
            finish=extra.finish,
            measured=extra.measured,
        )
        for key, repeats in zip(extra_keys, extra_results, strict=True):
            per_pair[index[key]].extend(repeats)
        done += batch
    stats["repeats_max"] = max(len(rs) for rs in per_pair)
    return _Adaptive(looks, first_look)


def _trials(
    per_pair: list[list[Result]], results: list[Result], *, live: bool
) -> dict[tuple[str, str], Trials]:
    """The repeats behind each result whose outcome is random (a live output, a judge, more
    than one repeat); a deterministic result is one trial and needs no record of its own."""
    from assay.gate._regressions import Trials

    out: dict[tuple[str, str], Trials] = {}
    for repeats, result in zip(per_pair, results, strict=True):
        if live or len(repeats) > 1 or (result.decided_by == TIER3 and result.passed is not None):
            out[(result.candidate, result.id)] = Trials.of(repeats, random=live)
    return out


@dataclass(slots=True)
class ErrorTally:
    """The errors among a run's results, enough to say why the gate cannot decide.

    ``samples`` are (candidate, golden id, repeat, notes) of error results in run order; a run
    of many identical errors keeps three of each notes: no later one can change the message.
    """

    total: int = 0
    errors: int = 0
    pairs: int = 0
    samples: list[tuple[str, str, int, tuple[str, ...]]] = field(default_factory=list)

    @classmethod
    def of(cls, per_pair: list[list[Result]]) -> ErrorTally:
        tally = cls()
        seen: dict[tuple[str, ...], int] = {}
        for repeats in per_pair:
            tally.total += len(repeats)
            had_error = False
            for index, r in enumerate(repeats):
                if r.status != "error":
                    continue
                tally.errors += 1
                had_error = True
                if seen.get(r.notes, 0) < 3:
                    seen[r.notes] = seen.get(r.notes, 0) + 1
                    tally.samples.append((r.candidate, r.id, index, r.notes))
            tally.pairs += had_error
        return tally

    def reasons(self, max_error_rate: float) -> list[str]:
        """Why the gate cannot decide: more errors (failed calls, judge errors) than allowed.

        A failed call says nothing about the candidate's quality, so it is never a regression;
        but a run with too many of them has too little evidence to pass either.
        """
        if self.total == 0 or self.errors <= max_error_rate * self.total:
            return []
        first: list[str] = []
        for _, _, _, notes in self.samples:
            note = next((n for n in notes if n not in first), None)
            if note is not None and len(first) < 3:
                first.append(note)
        why = "; ".join(first) if first else "no message"
        return [
            f"the gate cannot decide: {self.errors} of {self.total} result(s) are errors "
            f"(max_error_rate {max_error_rate:g}), so {self.pairs} golden(s) were not "
            f"decided{QUOTED_ERRORS}{why}"
        ]


def _min_pass_rate(run: GateRun, minimum: float) -> None:
    """A candidate whose pass rate over its decided results is below ``minimum`` fails the
    gate; errors are left out of the rate (an outage is not a quality drop)."""
    decided: dict[str, list[bool]] = {}
    for r in run.results:
        if r.status != "error":
            decided.setdefault(r.candidate, []).append(r.status == "pass")
    for s in run.summaries:
        outcomes = decided.get(s.candidate, [])
        rate = sum(outcomes) / len(outcomes) if outcomes else 0.0
        if rate < minimum:
            run.gate_failures.append(
                f"candidate '{s.candidate}': pass rate {rate:.1%} is below "
                f"min_pass_rate {minimum:.1%}"
            )


def _nothing_selected(options: GateOptions, config: Config) -> None:
    """A run of no goldens proves nothing: a gate over it must not say "passed".

    Raises:
        GoldenError: always, naming where the goldens were looked for and the tiers.
    """
    where = "the packaged example" if options.example else str(options.path or config.goldens)
    tiers = f" of tier {', '.join(options.tiers)}" if options.tiers else ""
    if options.shard is not None:
        raise GoldenError(
            f"shard {options.shard} holds no goldens{tiers}: a run of nothing cannot pass or "
            "fail (use fewer shards)",
            source=where,
            field="--shard",
        )
    raise GoldenError(
        f"no goldens{tiers} selected: a run of nothing cannot pass or fail",
        source=where,
        field="--tier" if options.tiers else None,
    )


def _load_baseline(path: Path) -> dict[str, Any]:
    from assay.gate import _baseline as baseline

    return baseline.load(path)


def suite_of(options: GateOptions, config: Config) -> str:
    """What suite a run loaded, as the baseline records it: a baseline golden missing from a
    run is "removed" only when the run loaded the same suite (a subset folder is no removal)."""
    if options.example:
        return "example"
    root = options.path if options.path is not None else config.goldens
    resolved = root.resolve()
    try:
        name = resolved.relative_to(config.root.resolve()).as_posix()
    except ValueError:
        name = resolved.as_posix()
    # Without PATH the packaged defaults fill the tiers the project lacks: a different suite.
    return name if options.path is not None else f"{name} (with packaged defaults)"


@dataclass(frozen=True, slots=True)
class GateStep:
    """What the baseline step needs to know of a run: the mode, the baseline, the suite.

    Attributes:
        baseline: the baseline file written or compared with.
        alpha: the significance level of random outcomes (flag or ``[gate]``).
        suite: what the run loaded (see :func:`suite_of`).
        path_given: the goldens came from a PATH (a schema 1 baseline records no suite).
        sharded: the run is one shard, or a --filter selection: the goldens it lacks are not
            removed from the suite.
        goldens: the selected goldens, as id -> golden or id -> fingerprint (a merge).
        strict: ids of the goldens with ``gate: strict``.
    """

    mode: Mode
    baseline: Path
    force: bool
    alpha: float
    tiers: tuple[Tier, ...]
    suite: str
    path_given: bool
    sharded: bool
    goldens: Mapping[str, Golden] | Mapping[str, str]
    strict: list[str]


def _baseline_step(
    run: GateRun,
    step: GateStep,
    config: Config,
    document: dict[str, Any] | None,
    looks: int,
    first_look: dict[tuple[str, str], Trials] | None,
) -> None:
    if step.mode == "report":
        return
    from assay.gate import _baseline as baseline_mod
    from assay.gate._regressions import Rules
    from assay.gate._regressions import diff as regressions_diff

    baseline_path = step.baseline
    if step.mode == "write-baseline":
        if run.undecided:
            shown = shown_path(baseline_path)
            run.notes.append(f"baseline not written to {shown}: {run.undecided[0]}")
            return
        document = baseline_mod.build(
            run.results, step.goldens, run.summaries, trials=run.trials, suite=step.suite
        )
        baseline_mod.write(baseline_path, document, force=step.force)
        run.baseline_path = baseline_path
    elif step.mode == "check" and document is not None:
        run.baseline_path = baseline_path
        run.baseline_document = document
        recorded = document.get("suite")
        whole = recorded == step.suite if recorded is not None else not step.path_given
        # The goldens a shard lacks are in the other shards: not removed from the suite.
        whole = whole and not step.sharded
        run.diff = regressions_diff(
            document,
            run.results,
            run.trials,
            selected=step.goldens,
            whole_suite=whole,
            tiers=step.tiers or None,
            strict=step.strict,
            changed=baseline_mod.changed_goldens(document, step.goldens),
            rules=Rules(step.alpha, config.gate.score_tolerance, looks),
            first_look=first_look,
        )
        if document.get("schema_version") == 1:
            run.diff.notes.append(
                "the baseline is schema 1 (one trial per golden, no suite recorded): "
                "rewrite it with --write-baseline to compare random outcomes fully"
            )
        if run.diff.regressions:
            run.gate_failures.append(
                f"{len(run.diff.regressions)} regression(s) against {shown_path(baseline_path)}"
            )
