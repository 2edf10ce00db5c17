"""Scoring a run's outputs: every (candidate, golden) through the cascade, the judge batched
over the run, and adaptive repeats where a comparison is still open.

The hand-off is :class:`ScoredPairs`: one result per repeat for each (candidate, golden), in
candidate then suite order. The verdict reads it through :meth:`ScoredPairs.results`,
:meth:`ScoredPairs.trials` and :func:`assay.gate._verdict.ErrorTally.of`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from assay.asserts import JUDGE_OP, as_text
from assay.cascade import NO_OUTPUT, combine_repeats, error_result, evaluate, is_skipped
from assay.results import CallFailed
from assay.vocabulary import TIER3

if TYPE_CHECKING:
    from assay.config import Config
    from assay.gate._options import GateOptions
    from assay.gate._regressions import Trials
    from assay.gate._suite import Prescored
    from assay.goldens import Golden
    from assay.results import Result

# candidate -> golden id -> one output per repeat (a CallFailed for a call that failed).
Outputs = dict[str, dict[str, list[Any]]]
# candidate -> golden id -> per repeat: why the model stopped / (latency ms, cost USD).
Finish = dict[str, dict[str, list[str | None]]]
Measured = dict[str, dict[str, list[tuple[float | None, float | None]]]]


@dataclass(slots=True)
class ScoredPairs:
    """One result per repeat for each (candidate, golden id) in ``keys``, in the same order;
    ``answers``, each repeat's output, for the pairs scored here (not those the loading
    processes scored), so a report can show the answers of the repeats that did not pass."""

    keys: list[tuple[str, str]] = field(default_factory=list)
    repeats: list[list[Result]] = field(default_factory=list)
    answers: dict[tuple[str, str], list[Any]] = field(default_factory=dict)

    def add(self, key: tuple[str, str], results: list[Result], answers: Sequence[Any] = ()) -> None:
        self.keys.append(key)
        self.repeats.append(results)
        if answers:
            self.answers[key] = list(answers)

    def extend(self, more: ScoredPairs) -> None:
        """Add ``more``'s repeats to the pairs they belong to (adaptive repeats)."""
        index = {key: i for i, key in enumerate(self.keys)}
        for key, results in zip(more.keys, more.repeats, strict=True):
            self.repeats[index[key]].extend(results)
            self.answers.setdefault(key, []).extend(more.answers.get(key, ()))

    def failing_answers(self) -> dict[tuple[str, str], list[tuple[Any, int]]]:
        """Per pair of several repeats not all passed: the distinct answers of the repeats that
        did not pass (a failed call has none), each with how many repeats gave it, in the
        order they came."""
        out: dict[tuple[str, str], list[tuple[Any, int]]] = {}
        for key, results in zip(self.keys, self.repeats, strict=True):
            answers = self.answers.get(key)
            if len(results) < 2 or not answers or all(r.status == "pass" for r in results):
                continue
            counted: dict[str, list[Any]] = {}
            for result, answer in zip(results, answers, strict=False):
                if result.status != "pass" and answer is not NO_OUTPUT and not failed(answer):
                    counted.setdefault(as_text(answer), [answer, 0])[1] += 1
            if counted:
                out[key] = [(answer, count) for answer, count in counted.values()]
        return out

    def results(self) -> list[Result]:
        return [rs[0] if len(rs) == 1 else combine_repeats(rs) for rs in self.repeats]

    def trials(self, results: Sequence[Result], *, live: bool) -> dict[tuple[str, str], Trials]:
        """The repeats behind each result whose outcome is random (a live output, a judge,
        more than one repeat); a deterministic result is one trial and needs no record."""
        from assay.gate._regressions import Trials

        out: dict[tuple[str, str], Trials] = {}
        for repeats, result in zip(self.repeats, results, strict=True):
            judged = result.decided_by == TIER3 and result.passed is not None
            if live or len(repeats) > 1 or judged:
                out[(result.candidate, result.id)] = Trials.of(repeats, random=live)
        return out


def failed(output: Any) -> bool:
    return isinstance(output, CallFailed)


def prime(similarity: Any, goldens: Sequence[Golden], outputs: Outputs) -> None:
    """Let a batching backend (embeddings) encode every text of the run up front."""
    prime_texts = getattr(similarity, "prime", None)
    if prime_texts is None:
        return
    texts = []
    for golden in goldens:
        if golden.asserts or not golden.has_expected:
            continue
        texts.append(as_text(golden.expected))
        for produced in outputs.values():
            texts.extend(as_text(o) for o in produced.get(golden.id, []) if not failed(o))
    prime_texts(texts)


@dataclass(slots=True)
class Scorer:
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
        outputs: Outputs,
        goldens: Sequence[Golden],
        *,
        fill_missing: bool = True,
        prescored: Prescored | None = None,
        finish: Finish | None = None,
        measured: Measured | None = None,
    ) -> ScoredPairs:
        """Every (candidate, golden) scored; a golden with no output is ``no-output`` (or
        skipped, without ``fill_missing``). Results the loading processes computed for these
        outputs are taken as they are."""
        pairs = ScoredPairs()
        pending: list[tuple[int, int, Any]] = []
        usable = prescored if fill_missing and finish is None and not self.judging else None
        ready = usable.lookup(outputs, self.config, self.backend_name) if usable else None
        for position, (candidate, produced) in enumerate(outputs.items()):
            whole = usable.all_of(goldens, position) if usable and ready else None
            if whole is not None:  # the workers scored every golden: all at once
                pairs.keys.extend([(candidate, g.id) for g in goldens])
                pairs.repeats.extend([[r] for r in whole])
                continue
            for golden in goldens:
                done = ready(golden, position) if ready is not None else None
                if done is not None:
                    pairs.add((candidate, golden.id), [done])
                    continue
                repeats = produced.get(golden.id) or ([NO_OUTPUT] if fill_missing else [])
                if not repeats:
                    continue
                reasons = (finish or {}).get(candidate, {}).get(golden.id) or []
                took = (measured or {}).get(candidate, {}).get(golden.id) or []
                results = self._repeats(golden, candidate, repeats, reasons, took)
                for index, result in enumerate(results):
                    if self.judging and result.status == "needs-judge":
                        pending.append((len(pairs.repeats), index, repeats[index]))
                pairs.add((candidate, golden.id), results, repeats)
        if pending:
            self._judge(pairs, pending, {g.id: g for g in goldens})
        self._count_judge_asserts(pairs)
        return pairs

    def _repeats(
        self,
        golden: Golden,
        candidate: str,
        repeats: Sequence[Any],
        reasons: Sequence[str | None],
        took: Sequence[tuple[float | None, float | None]],
    ) -> list[Result]:
        """One result per repeat's output; ``took`` is each live call's (latency, cost), for
        the latency and cost asserts."""
        results = []
        for index, output in enumerate(repeats):
            if failed(output):
                results.append(error_result(golden, candidate, output.message))
                continue
            results.append(
                evaluate(
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
            )
        return results

    def _judge(
        self, pairs: ScoredPairs, pending: list[tuple[int, int, Any]], by_id: Mapping[str, Golden]
    ) -> None:
        """The run's judge batch: every result left ``needs-judge``, judged in one go."""
        from assay.cascade import apply_judge
        from assay.models import RunStats

        if self.judge_stats is None:
            self.judge_stats = RunStats()
        rows = pairs.repeats
        judged = apply_judge(
            [(rows[p][r], out, by_id[rows[p][r].id]) for p, r, out in pending],
            self.config.judge,
            root=self.config.root,
            use_cache=self.use_cache,
            stats=self.judge_stats,
        )
        for (p, r, _), result in zip(pending, judged, strict=True):
            rows[p][r] = result

    def _count_judge_asserts(self, pairs: ScoredPairs) -> None:
        # A result holding a judge check always has a note (a skip, the judge's verdict, a
        # pending judge, a judge error): the common note-less result is not looked into.
        for results in pairs.repeats:
            for result in results:
                if not result.notes:
                    continue
                for check in result.checks:
                    if check.op == JUDGE_OP:
                        self.judge_asserts += 1
                        self.judge_saved += is_skipped(check)


def adaptive_repeats(
    options: GateOptions,
    config: Config,
    document: Mapping[str, Any] | None,
    goldens: Sequence[Golden],
    spec: Any,
    pairs: ScoredPairs,
    scorer: Scorer,
    stats: dict[str, Any],
) -> tuple[int, dict[tuple[str, str], Trials] | None]:
    """Adaptive repeats, when a live check (``spec``: its candidates file) allows more than
    its repeats: the goldens whose comparison is still open get more trials, a batch of
    ``repeats`` at a time, up to ``max_repeats`` in all; model calls go only where the answer
    is uncertain.

    The error rate holds: every look may reject, so the per-golden level is alpha divided by
    the planned number of looks (Bonferroni), and the suite test reads the first look only.
    ``pairs`` grows in place and ``stats`` counts the extra calls. Returns (the planned looks,
    the first look's evidence); (1, None) when there are no adaptive repeats.
    """
    max_repeats = options.max_repeats or config.gate.max_repeats
    if document is None or spec is None or not max_repeats or max_repeats <= spec.repeats:
        return 1, None
    from assay.gate._regressions import Rules, undecided_pairs
    from assay.models import generate_outputs

    alpha = config.gate.alpha if options.alpha is None else options.alpha
    looks = -(-max_repeats // spec.repeats)
    rules = Rules(alpha, config.gate.score_tolerance, looks)
    selected = {g.id: g for g in goldens}
    strict = [g.id for g in goldens if g.fields.get("gate") == "strict"]
    first_look = pairs.trials(pairs.results(), live=True)
    done = spec.repeats
    while done < max_repeats:
        results = pairs.results()
        trials = pairs.trials(results, live=True)
        open_ = undecided_pairs(
            document, results, trials, selected=selected, strict=strict, rules=rules
        )
        if not open_:
            break
        batch = min(spec.repeats, max_repeats - done)
        extra = generate_outputs(
            [g for g in goldens if any((c, g.id) in open_ for c, _ in pairs.keys)],
            spec,
            root=config.root,
            use_cache=not options.no_cache,
            progress=options.progress,
            repeats=range(done, done + batch),
            only=open_,
        )
        for name, value in extra.stats.to_dict().items():
            stats[name] = stats.get(name, 0) + value
        pairs.extend(
            scorer.score(
                extra.outputs,
                goldens,
                fill_missing=False,
                finish=extra.finish,
                measured=extra.measured,
            )
        )
        done += batch
    stats["repeats_max"] = max(len(rs) for rs in pairs.repeats)
    return looks, first_look
