"""Live candidates: render each candidate's prompt for each golden and call the model.

Outputs come back as ``{candidate: {golden_id: [output per repeat]}}``, where a call that failed
after its retries is a :class:`CallFailed` (scored as ``error``, never cached).
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay.cascade import CallFailed
from assay.errors import ConfigError
from assay.goldens import Golden
from assay.models._cache import OutputCache, default_cache_path
from assay.models._candidates_file import CandidatesFile
from assay.models._runner import Call, RunStats, run_calls
from assay.models._template import render


@dataclass(slots=True)
class LiveOutputs:
    outputs: dict[str, dict[str, list[Any]]]
    repeats: int
    stats: RunStats


def prompt_context(golden: Golden) -> dict[str, Any]:
    """What a prompt template may use: never the expected answer, rubric or asserts."""
    context: dict[str, Any] = {"id": golden.id, "tier": golden.tier, "input": golden.input}
    for name in ("title", "role"):
        if golden.fields.get(name) is not None:
            context[name] = golden.fields[name]
    return context


def build_calls(
    goldens: Sequence[Golden],
    spec: CandidatesFile,
    *,
    repeats: range | None = None,
    only: Collection[tuple[str, str]] | None = None,
) -> list[Call]:
    """Every call of the run: each candidate × golden × repeat index in ``repeats`` (default
    the file's ``range(repeats)``), or only the (candidate, golden) pairs in ``only``."""
    indexes = range(spec.repeats) if repeats is None else repeats
    calls = []
    for candidate in spec.candidates:
        where = f"{spec.source} (candidate {candidate.id})"
        for golden in goldens:
            if only is not None and (candidate.id, golden.id) not in only:
                continue
            prompt = render(candidate.prompt, prompt_context(golden), where=where)
            for repeat in indexes:
                calls.append(Call(candidate.id, golden.id, repeat, prompt, candidate.provider))
    return calls


def generate_outputs(
    goldens: Sequence[Golden],
    spec: CandidatesFile,
    *,
    root: Path,
    use_cache: bool = True,
    progress: bool = False,
    repeats: range | None = None,
    only: Collection[tuple[str, str]] | None = None,
) -> LiveOutputs:
    """Make (or read from the cache) every call of the run.

    Args:
        repeats: the repeat indexes to call (default ``range(spec.repeats)``); adaptive repeats
            ask for later indexes of some goldens, each a call of its own in the cache.
        only: just these (candidate, golden id) pairs.
    """
    calls = build_calls(goldens, spec, repeats=repeats, only=only)
    cache = OutputCache(default_cache_path(root)) if use_cache else None
    try:
        outcomes, stats = asyncio.run(
            run_calls(calls, cache=cache, max_concurrency=spec.max_concurrency, progress=progress)
        )
    except ConfigError as exc:
        if exc.source is None:  # name the candidates file the provider came from
            raise ConfigError(exc.message, source=spec.source, field=exc.field) from None
        raise
    finally:
        if cache is not None:
            cache.close()
    outputs: dict[str, dict[str, list[Any]]] = {c.id: {} for c in spec.candidates}
    for call, outcome in zip(calls, outcomes, strict=True):
        value: Any = (
            outcome.completion.text
            if outcome.completion is not None
            else CallFailed(outcome.error or "the call failed")
        )
        outputs[call.candidate].setdefault(call.golden, []).append(value)
    return LiveOutputs(outputs, len(range(spec.repeats) if repeats is None else repeats), stats)
