"""The goldens gate as a library call: goldens + outputs → results → baseline write / check.

Commands parse flags and call :func:`run_gate`; renderers print the :class:`GateRun` it returns.
A run goes through named phases: load the suite, read the baseline, get the outputs, score
them, conclude; the run is built once, at the end.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay.errors import ConfigError, GoldenError
from assay.gate._options import GateOptions
from assay.gate._suite import LoadedSuite, StaticScoring
from assay.gate._verdict import (
    ErrorTally,
    Evidence,
    GateStep,
    Mode,
    Verdict,
    conclude,
    stray_notes,
)
from assay.goldens import (
    Golden,
    Tier,
    check_python_files,
    iter_goldens,
    load_suite,
    suite_name,
)
from assay.results import (
    CandidateSummary,
    ReportContent,
    Result,
    results_document,
    summarize_by_candidate,
)

if TYPE_CHECKING:
    from assay.config import Config
    from assay.gate._regressions import Diff, Trials
    from assay.gate._score import Finish, Measured, Outputs, Scorer


@dataclass(frozen=True, slots=True)
class GateRun:
    """Everything a renderer needs to show a gate run, built once when the run is over."""

    results: list[Result]
    summaries: list[CandidateSummary]
    golden_count: int
    verdict: Verdict
    notes: list[str] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)
    # For views that show content (the HTML report's detail panels): never serialised here.
    goldens: Mapping[str, Golden] = field(default_factory=dict, repr=False)
    outputs: dict[str, dict[str, Any]] = field(default_factory=dict, repr=False)
    # The evidence behind each random result.
    trials: Mapping[tuple[str, str], Trials] = field(default_factory=dict, repr=False)
    # A live run's answers go into its --json results (static outputs are the user's file).
    live: bool = False
    shard: str | None = None
    # -k / --filter's patterns, for the record (``assay runs list`` labels such a run).
    filter: tuple[str, ...] = ()
    # A shard's evidence for `assay merge` (see assay.gate._partial): only in a shard's document.
    partial: dict[str, Any] | None = field(default=None, repr=False)
    # Judge asserts skipped because cheaper asserts decided their golden (None: the run
    # scored no judge assert, and its document has no such key).
    judge_saved: int | None = None
    # Per (candidate, golden id) of several repeats not all passed: the distinct answers of the
    # repeats that did not pass, with their counts (what a failing golden said).
    failing: Mapping[tuple[str, str], list[tuple[Any, int]]] = field(
        default_factory=dict, repr=False
    )

    @property
    def mode(self) -> Mode:
        return self.verdict.mode

    @property
    def exit_code(self) -> int:
        return self.verdict.exit_code

    @property
    def undecided(self) -> tuple[str, ...]:
        """Why the gate could not decide (too many errors); undecided wins over failed."""
        return self.verdict.undecided

    @property
    def gate_failures(self) -> tuple[str, ...]:
        return self.verdict.failures

    @property
    def diff(self) -> Diff | None:
        return self.verdict.diff

    @property
    def baseline_path(self) -> Path | None:
        return self.verdict.baseline_path

    @property
    def baseline_document(self) -> dict[str, Any] | None:
        found = self.verdict.baseline_document
        return None if found is None else dict(found)

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
            failing = self.failing.get((result["candidate"], result["id"]))
            if failing:  # repeats: the first answer may have passed; show those that did not
                if "output" in result:
                    result["output"] = failing[0][0]
                result["failing_outputs"] = [{"output": o, "count": n} for o, n in failing]
        out["summary"]["goldens"] = self.golden_count
        out = self.verdict.apply(out)
        summary = out["summary"]
        if self.shard is not None:
            summary["shard"] = self.shard
        if self.filter:
            summary["filter"] = list(self.filter)
        notes = [*self.notes, *self.verdict.notes]
        if notes:
            summary["notes"] = notes
        if self.stats:
            summary["model_calls"] = dict(self.stats)
        if self.judge_saved is not None:
            summary["judge_calls_saved"] = self.judge_saved
        if self.partial is not None:
            out["partial"] = self.partial
        return out

    def content(self) -> ReportContent:
        """What views that show content (the HTML detail panels) may read besides the document."""
        return ReportContent(dict(self.goldens), self.outputs, self.baseline_document)


def example_paths() -> tuple[Path, Path]:
    """The packaged example: (goldens folder, outputs file), inside the wheel."""
    from importlib import resources  # 4 ms to import; only the example needs it

    example = resources.files("assay").joinpath("data", "example")
    return Path(str(example.joinpath("goldens"))), Path(str(example.joinpath("outputs.json")))


# --------------------------------------------------------------------------- phase 1: load


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
    project = root is None  # the project's goldens folder (see assay.goldens.load_suite)
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
            scoring=StaticScoring(outputs, backend, config)
            if static and outputs is not None
            else None,
            meanwhile=meanwhile,
            fingerprints=options.mode != "report",
        )
        if suite is not None and project:
            tiers = options.tiers or None
            own = load_suite(
                root, tiers, strict=config.strict, own=suite.goldens, packaged=options.packaged
            )
            return suite.keep(_filtered(own, options))
        if suite is not None:
            return suite.keep(_filtered(_select(suite.goldens, options.tiers), options))
    goldens = load_whole(options, config)
    chosen = goldens if options.shard is None else options.shard.select(goldens)
    return LoadedSuite(_filtered(chosen, options))


def _filtered(goldens: Iterable[Golden], options: GateOptions) -> list[Golden]:
    chosen = options.filter
    return list(goldens) if chosen is None else chosen.select(goldens)


class _Meanwhile:
    """The baseline, read while the workers load the suite (it is the next step anyway)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.document: dict[str, Any] | None = None

    def __call__(self) -> None:
        from assay.gate._baseline import load_baseline

        self.document = load_baseline(self.path)


def load_whole(options: GateOptions, config: Config) -> list[Golden]:
    """The goldens of the suite and tiers asked for, before any ``--shard`` selection."""
    root = example_paths()[0] if options.example else options.path
    if root is None:
        tiers = options.tiers or None
        return load_suite(config.goldens, tiers, strict=config.strict, packaged=options.packaged)
    return list(_select(iter_goldens(root, strict=config.strict), options.tiers))


def _load(
    options: GateOptions, config: Config
) -> tuple[LoadedSuite, list[str] | None, dict[str, Any] | None]:
    """The suite this run scores, the whole suite's ids (a shard's, for its partial) and, for
    a check, the baseline (read first: a missing one fails before any model call)."""
    early = _Meanwhile(options.baseline or config.baseline) if options.mode == "check" else None
    suite_ids = None
    if options.shard is None:
        suite = load_selected(options, config, early)
    else:  # a shard's partial places each of its goldens in the whole suite's order
        whole = load_whole(options, config)
        suite_ids = [g.id for g in whole]
        suite = LoadedSuite(list(options.shard.select(whole)))
    # An empty shard of a suite that is not empty is a valid empty part (a small suite in many
    # shards): its merge with the others is the whole run.
    if not suite.goldens and not suite_ids:
        _nothing_selected(options, config)
    check_python_files(suite.goldens, config.root)  # a missing checks file fails before a call
    if early is not None and early.document is None:
        early()  # not read while workers loaded the suite
    return suite, suite_ids, None if early is None else early.document


def _nothing_selected(options: GateOptions, config: Config) -> None:
    """A run of no goldens proves nothing: a gate over it must not say "passed". Always raises
    a GoldenError naming where the goldens were looked for and the tiers."""
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
    return name if options.path is not None else suite_name(name, root, packaged=options.packaged)


# --------------------------------------------------------------------------- phase 2: outputs


@dataclass(frozen=True, slots=True)
class Produced:
    """Every candidate's outputs (one per repeat), the model-call statistics, and for a live
    run its candidates file, why each call stopped and what each cost (None: static)."""

    outputs: Outputs
    stats: dict[str, Any] = field(default_factory=dict)
    spec: Any = None
    finish: Finish | None = None
    measured: Measured | None = None


def _outputs(
    options: GateOptions, config: Config, suite: LoadedSuite, by_id: Mapping[str, Golden]
) -> Produced:
    if options.candidates is not None:
        from assay.models import generate_outputs, load_candidates_file, select_candidates

        spec = select_candidates(load_candidates_file(options.candidates), options.candidate_ids)
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
        return Produced(live.outputs, stats, spec, live.finish, live.measured)
    outputs_path = example_paths()[1] if options.example else options.outputs
    if outputs_path is None:
        raise ConfigError(
            "no candidate outputs: pass --outputs FILE, --candidates FILE or --example",
            field="--outputs",
        )
    if suite.prescored is not None:  # loaded by workers, which read the outputs file already
        given = suite.prescored.outputs_for(outputs_path, by_id)
        if given is not None:
            return Produced(given)
    from assay.models import load_outputs

    flat = load_outputs(outputs_path, by_id)
    return Produced({c: {g: [o] for g, o in m.items()} for c, m in flat.items()})


def _strays(
    options: GateOptions, outputs: Outputs, by_id: Mapping[str, Golden]
) -> dict[str, tuple[int, list[str]]]:
    """Per candidate, how many outputs name no selected golden and the first three. Outputs of
    the other shards' goldens, and of those --filter left out, are expected, not strays."""
    shard, chosen = options.shard, options.filter
    strays: dict[str, tuple[int, list[str]]] = {}
    for candidate, produced in outputs.items():
        stray = sorted(
            k
            for k in produced
            if k not in by_id
            and (shard is None or shard.holds(str(k)))
            and (chosen is None or chosen.holds(str(k)))
        )
        if stray:
            strays[candidate] = (len(stray), stray[:3])
    return strays


# --------------------------------------------------------------------------- phase 3: score


def _scorer(
    options: GateOptions, config: Config, goldens: Sequence[Golden], outputs: Outputs
) -> Scorer:
    from assay.asserts import get_backend
    from assay.cascade import check_context
    from assay.gate._score import Scorer, prime

    backend_name = options.similarity or config.similarity
    similarity = get_backend(backend_name)
    prime(similarity, goldens, outputs)
    # The run's backend goes to the checks too: it is a ``similar`` assert's default.
    ctx = replace(check_context(config), similarity=backend_name, similarity_fn=similarity)
    judging = options.judge or config.judge.verified
    return Scorer(similarity, backend_name, ctx, judging, config, not options.no_cache)


# --------------------------------------------------------------------------- the run


def run_gate(options: GateOptions, config: Config) -> GateRun:
    """Score outputs against goldens; write or check the baseline as asked.

    Raises:
        AssayError: for any bad input (goldens, outputs, baseline, config).
    """
    from assay.gate._score import adaptive_repeats, failed

    suite, suite_ids, document = _load(options, config)
    document = _of_candidates(document, options.candidate_ids)
    goldens = suite.goldens
    by_id = {g.id: g for g in goldens}
    produced = _outputs(options, config, suite, by_id)
    scorer = _scorer(options, config, goldens, produced.outputs)
    pairs = scorer.score(
        produced.outputs,
        goldens,
        prescored=suite.prescored,
        finish=produced.finish,
        measured=produced.measured,
    )
    stats = dict(produced.stats)
    looks, first_look = adaptive_repeats(
        options, config, document, goldens, produced.spec, pairs, scorer, stats
    )
    if scorer.judge_stats is not None:  # judge calls are counted apart from the candidates'
        stats["judge"] = scorer.judge_stats.to_dict()
    results = pairs.results()
    summaries = summarize_by_candidate(results, list(produced.outputs))
    live = produced.spec is not None
    gating = options.mode != "report" or config.min_pass_rate is not None
    # A shard's partial carries the evidence for its merge.
    trials = pairs.trials(results, live=live) if gating or options.shard is not None else {}
    evidence = Evidence(results, summaries, trials, ErrorTally.of(pairs.repeats), looks, first_look)
    step = _step(options, config, suite, by_id)
    strays = _strays(options, produced.outputs, by_id)
    spec_notes = list(produced.spec.notes) if live else []
    partial = None
    if options.shard is not None and suite_ids is not None:
        from assay.gate._partial import gate_partial

        partial = gate_partial(
            evidence,
            step,
            options,
            config,
            suite_ids=suite_ids,
            goldens=goldens,
            candidates=list(produced.outputs),
            live=live,
            strays=strays,
            spec_notes=spec_notes,
            judging=scorer.judging,
            similarity=scorer.backend_name,
            judge_saved=scorer.judge_saved if scorer.judge_asserts else None,
        )
    return GateRun(
        results,
        summaries,
        len(goldens),
        conclude(evidence, step, config, document),
        notes=[*spec_notes, *stray_notes(strays)],
        stats=stats,
        goldens=by_id,
        outputs={
            c: {g: (o[0].message if failed(o[0]) else o[0]) for g, o in m.items() if o}
            for c, m in produced.outputs.items()
        },
        trials=trials,
        live=live,
        shard=None if options.shard is None else str(options.shard),
        filter=() if options.filter is None else options.filter.patterns,
        partial=partial,
        judge_saved=scorer.judge_saved if scorer.judge_asserts else None,
        failing=pairs.failing_answers(),
    )


def _of_candidates(
    document: dict[str, Any] | None, candidate_ids: Sequence[str]
) -> dict[str, Any] | None:
    """The baseline as a run of only ``candidate_ids`` (``--candidate``) compares with it: the
    other candidates' entries are not in the run, which is no sign they got worse."""
    entries = None if document is None else document.get("goldens")
    if document is None or not candidate_ids or not isinstance(entries, dict):
        return document
    chosen = set(candidate_ids)
    return {**document, "goldens": {c: e for c, e in entries.items() if c in chosen}}


def _step(
    options: GateOptions, config: Config, suite: LoadedSuite, by_id: Mapping[str, Golden]
) -> GateStep:
    return GateStep(
        mode=options.mode,
        baseline=options.baseline or config.baseline,
        force=options.force,
        alpha=config.gate.alpha if options.alpha is None else options.alpha,
        tiers=options.tiers,
        suite=suite_of(options, config),
        sharded=options.shard is not None or options.filter is not None,
        # The fingerprints the loading processes computed, when they did.
        goldens=suite.fingerprints_of() or by_id,
        strict=[g.id for g in suite.goldens if g.fields.get("gate") == "strict"],
    )
