"""``evaluate_prompt_candidates``: every candidate on every item, scored, aggregated, ranked.

Pairs are numbered candidate-major (candidates in input order, then items in input order). With
``max_concurrency=1`` they run strictly in that order; with N > 1, N workers take the next pair
number from one shared counter, so at most N pairs are in flight and no task is created per pair.
Each result is stored under its pair number and aggregated in pair order, so the returned scores
are identical to a sequential run's.

``run_candidate`` and ``scorer`` may be sync or async: whatever a call returns is awaited when it
is awaitable. A sync callable runs on the event loop's thread, so while it runs no other pair
makes progress: blocking I/O belongs in an async callable (or ``asyncio.to_thread``).
"""

from __future__ import annotations

import asyncio
import functools
import inspect
from collections.abc import Callable, Coroutine, Sequence
from typing import Any, Final, ParamSpec, TypeVar

from assay.asserts import CheckResult
from assay.comparison._abort import AbortController, AbortSignal
from assay.comparison._types import UNSET, check_ids, field_of
from assay.errors import ValidationError
from assay.models import gather_or_cancel
from assay.results import CandidateSummary, Result, rank, summarize
from assay.validate import At, Int, is_number
from assay.vocabulary import SCORER, Status

P = ParamSpec("P")
T = TypeVar("T")
# Sync or async: the result is awaited when it is awaitable (so ``Awaitable[Any] | Any``).
RunCandidate = Callable[[Any, Any, AbortSignal], Any]
Scorer = Callable[[dict[str, Any], AbortSignal], Any]
_CONCURRENCY: Final = Int(at_least=1, message="max_concurrency must be an integer >= 1")


async def _resolve(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


def _target(item: Any, output: Any) -> dict[str, Any]:
    target: dict[str, Any] = {"input": field_of(item, "input"), "output": output}
    if target["input"] is UNSET:
        target["input"] = None
    for key in ("expected", "context"):
        value = field_of(item, key)
        if value is not UNSET:
            target[key] = value
    return target


def _item_result(raw: Any, candidate_id: str, item_id: str) -> Result:
    """Validate a scorer result; the error names the pair, never its content."""
    where = f"scorer result for candidate {candidate_id!r}, item {item_id!r}"
    score, passed, evidence = (field_of(raw, name) for name in ("score", "passed", "evidence"))
    if not is_number(score):
        raise ValidationError(f"{where}: 'score' must be a finite number", field="score")
    if not isinstance(passed, bool):
        raise ValidationError(f"{where}: 'passed' must be a boolean", field="passed")
    check = CheckResult(SCORER, SCORER, passed, None, None if evidence is UNSET else evidence)
    status: Status = "pass" if passed else "fail"
    return Result(item_id, None, candidate_id, status, passed, float(score), SCORER, (check,))


async def evaluate_prompt_candidates(
    candidates: Sequence[Any],
    items: Sequence[Any],
    run_candidate: RunCandidate,
    scorer: Scorer,
    signal: AbortSignal | None = None,
    max_concurrency: int = 1,
) -> list[CandidateSummary]:
    """Run each candidate on each item, score every output, and rank the candidates.

    Args:
        candidates: ``{id, prompt, metadata?}`` dicts or :class:`PromptCandidate` objects.
        items: ``{id, input, expected?, context?}`` dicts or :class:`EvaluationItem` objects.
        run_candidate: ``(candidate, item, signal) -> output``, sync or async (an awaitable
            result is awaited; sync callables run on the event loop's thread).
        scorer: ``(target, signal) -> {score, passed, evidence?}``, sync or async; target is
            ``{input, output, expected?, context?}``.
        signal: an :class:`AbortSignal`, checked before each pair and between run and score;
            ``None`` (the default) means the run cannot be aborted. Both callables always get
            a signal (an internal one that never aborts when none is given).
        max_concurrency: pairs in flight at once (results equal a sequential run's).

    Returns:
        One :class:`CandidateSummary` per candidate (its per-item :class:`Result` records in
        item order), sorted by mean_score desc, pass_rate desc, candidate asc.

    Raises:
        ValidationError: empty candidates (checked first) or items, bad ids, a ``signal`` that
            is neither ``None`` nor an :class:`AbortSignal`, a malformed scorer result (naming
            the pair).
        AbortError: or the abort reason, when ``signal`` is aborted; no pair starts after it.
    """
    candidates, items = list(candidates), list(items)
    signal = _checked(candidates, items, signal, max_concurrency)
    candidate_ids = check_ids(candidates, "candidate", need_prompt=True)
    item_ids = check_ids(items, "item", need_prompt=False)
    signal.throw_if_aborted()
    records: list[Result | None] = [None] * (len(candidates) * len(items))

    async def run_pair(index: int) -> None:
        c, i = divmod(index, len(items))
        output = await _resolve(run_candidate(candidates[c], items[i], signal))
        signal.throw_if_aborted()
        raw = await _resolve(scorer(_target(items[i], output), signal))
        records[index] = _item_result(raw, candidate_ids[c], item_ids[i])

    await _run_pairs(run_pair, len(records), max_concurrency, signal)
    done = [r for r in records if r is not None]
    return rank(
        summarize(cid, done[c * len(items) : (c + 1) * len(items)])
        for c, cid in enumerate(candidate_ids)
    )


def _checked(
    candidates: Sequence[Any],
    items: Sequence[Any],
    signal: AbortSignal | None,
    max_concurrency: int,
) -> AbortSignal:
    """The arguments refused before any pair runs (empty candidates first); the signal the
    callables get (one that never aborts when none is given)."""
    if not candidates:
        raise ValidationError("candidates must not be empty", field="candidates")
    if not items:
        raise ValidationError("items must not be empty", field="items")
    if signal is None:
        signal = AbortController().signal  # never aborted: callbacks always get a signal
    elif not isinstance(signal, AbortSignal):
        raise ValidationError(
            "signal must be an AbortSignal (AbortController().signal) or None", field="signal"
        )
    _CONCURRENCY.check(max_concurrency, At(None, error=ValidationError), "max_concurrency")
    return signal


async def _run_pairs(
    run_pair: Callable[[int], Coroutine[Any, Any, None]],
    total: int,
    max_concurrency: int,
    signal: AbortSignal,
) -> None:
    """``run_pair`` on every pair number, by ``max_concurrency`` workers taking the next
    number from one counter; an abort cancels them all (and is raised as its reason)."""
    next_pair = 0

    async def worker() -> None:
        nonlocal next_pair
        while next_pair < total:
            signal.throw_if_aborted()  # no pair starts after an abort
            index = next_pair
            next_pair += 1
            await run_pair(index)

    workers = [asyncio.ensure_future(worker()) for _ in range(min(max_concurrency, total))]

    def on_abort() -> None:
        for task in workers:
            task.cancel()

    remove = signal.add_listener(on_abort)
    try:
        await gather_or_cancel(workers)
    except asyncio.CancelledError:
        signal.throw_if_aborted()  # the abort's reason, when the abort cancelled the workers
        raise
    finally:
        remove()
    signal.throw_if_aborted()


def _blocking(function: Callable[P, Coroutine[Any, Any, T]]) -> Callable[P, T]:
    """The blocking form of a coroutine function, with its signature; it refuses to run inside
    an event loop, where ``asyncio.run`` would fail."""

    @functools.wraps(function)
    def blocking(*args: P.args, **kwargs: P.kwargs) -> T:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(function(*args, **kwargs))
        raise ValidationError(
            f"{function.__name__}_sync cannot run inside an event loop; "
            f"await {function.__name__} instead"
        )

    blocking.__name__ = blocking.__qualname__ = f"{function.__name__}_sync"
    blocking.__doc__ = f"Blocking form of :func:`{function.__name__}` (same arguments)."
    return blocking


evaluate_prompt_candidates_sync = _blocking(evaluate_prompt_candidates)
