"""Live candidates: render each candidate's prompt for each golden and call the model.

A candidate with ``system`` or ``messages`` makes chat calls: its conversation, rendered, is the
call's ``messages`` (sent natively by the openai and anthropic providers) and, flattened by
:func:`flatten_messages`, its ``prompt`` (what the command, python, echo and plugin providers
receive). A conversation of one user message is a plain prompt call.
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay.errors import ConfigError, GoldenError
from assay.goldens import Golden
from assay.models._cache import OutputCache, default_cache_path
from assay.models._calls import Call
from assay.models._candidates_file import CandidatesFile, LiveCandidate
from assay.models._runner import RunStats, run_calls
from assay.models._template import VARS_KEY, render, reserved_var, reserved_var_message
from assay.models.providers import takes_context
from assay.results import CallFailed


@dataclass(slots=True)
class LiveOutputs:
    """Every call's output (a :class:`CallFailed`, scored as ``error`` and never cached, for a
    call that failed after its retries) and why the model stopped, by candidate, golden id and
    repeat: ``{candidate: {golden_id: [output per repeat]}}``."""

    outputs: dict[str, dict[str, list[Any]]]
    repeats: int
    stats: RunStats
    finish: dict[str, dict[str, list[str | None]]]
    # (latency ms, cost USD) of each call, as finish is laid out (a cache hit: as measured
    # when its answer was made; None for a failed call, or a latency cached before they were).
    measured: dict[str, dict[str, list[tuple[float | None, float | None]]]]


def prompt_context(golden: Golden) -> dict[str, Any]:
    """What a prompt template may use: never the expected answer, rubric or asserts. The
    golden's ``vars`` mapping comes under the ``vars`` key (templates see its names at the top
    level, :func:`assay.models.render`); a var named like one of the golden's own names, which
    it would hide from the templates, is a GoldenError."""
    context: dict[str, Any] = {"id": golden.id, "tier": golden.tier, "input": golden.input}
    for name in ("title", "role"):
        if golden.fields.get(name) is not None:
            context[name] = golden.fields[name]
    found = golden.fields.get(VARS_KEY)
    if isinstance(found, Mapping) and found:
        clash = reserved_var(found)
        if clash is not None:
            raise GoldenError(
                reserved_var_message(golden.id, clash),
                source=golden.source,
                field=f"{VARS_KEY}.{clash}",
            )
        context[VARS_KEY] = found
    return context


def flatten_messages(messages: Sequence[tuple[str, str]]) -> str:
    """One text for a provider that takes a prompt: a lone user message is its content; any
    other conversation is each message as ``Role: content``, separated by a blank line."""
    if len(messages) == 1 and messages[0][0] == "user":
        return messages[0][1]
    return "\n\n".join(f"{role.capitalize()}: {content}" for role, content in messages)


def render_conversation(
    candidate: LiveCandidate, context: dict[str, Any], *, where: str
) -> tuple[str, tuple[tuple[str, str], ...] | None]:
    """The rendered (prompt, messages) of one candidate for one golden: ``system`` first, then
    ``messages``, then ``prompt`` as the last user message; messages is None when that is a
    single user message (a plain prompt call, cached as a prompt-only candidate's)."""
    messages: list[tuple[str, str]] = []
    if candidate.system is not None:
        messages.append(("system", render(candidate.system, context, where=where, field="system")))
    for i, (role, content) in enumerate(candidate.messages):
        name = f"messages[{i}].content"
        messages.append((role, render(content, context, where=where, field=name)))
    if candidate.prompt is not None:
        messages.append(("user", render(candidate.prompt, context, where=where)))
    if len(messages) == 1 and messages[0][0] == "user":
        return messages[0][1], None
    return flatten_messages(messages), tuple(messages)


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
    calls: list[Call] = []
    for candidate in spec.candidates:
        where = f"{spec.source} (candidate {candidate.id})"
        # The golden goes with the call only to a provider that reads it (and keys by it).
        with_golden = takes_context(candidate.provider)
        for golden in goldens:
            if only is not None and (candidate.id, golden.id) not in only:
                continue
            context = prompt_context(golden)
            prompt, messages = render_conversation(candidate, context, where=where)
            given = context if with_golden else None
            calls.extend(
                Call(
                    candidate.id,
                    golden.id,
                    repeat,
                    prompt,
                    candidate.provider,
                    messages=messages,
                    context=given,
                )
                for repeat in indexes
            )
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
            run_calls(
                calls,
                cache=cache,
                max_concurrency=spec.max_concurrency,
                progress=progress,
                root=root,
            )
        )
    except ConfigError as exc:
        if exc.source is None:  # name the candidates file the provider came from
            raise ConfigError(exc.message, source=spec.source, field=exc.field) from None
        raise
    finally:
        if cache is not None:
            cache.close()
    outputs: dict[str, dict[str, list[Any]]] = {c.id: {} for c in spec.candidates}
    finish: dict[str, dict[str, list[str | None]]] = {c.id: {} for c in spec.candidates}
    measured: dict[str, dict[str, list[tuple[float | None, float | None]]]] = {
        c.id: {} for c in spec.candidates
    }
    for call, outcome in zip(calls, outcomes, strict=True):
        completion = outcome.completion
        value: Any = (
            (completion.text.strip() if spec.output_strip else completion.text)
            if completion is not None
            else CallFailed(outcome.error or "the call failed")
        )
        outputs[call.candidate].setdefault(call.golden, []).append(value)
        reason = completion.finish_reason if completion is not None else None
        finish[call.candidate].setdefault(call.golden, []).append(reason)
        measured[call.candidate].setdefault(call.golden, []).append(
            (outcome.latency_ms, outcome.cost_usd)
        )
    count = len(range(spec.repeats) if repeats is None else repeats)
    return LiveOutputs(outputs, count, stats, finish, measured)
