"""The tier 3 judge adapter: the one place a model is asked to grade an output.

It is quarantined on purpose. It runs only when asked (``--judge``) or when the ``[judge]`` block
of assay.toml says ``verified = true``; otherwise goldens that reach tier 3 are reported
``needs-judge`` and this module is never called. Configuration (assay.toml)::

    [judge]
    verified = false                       # flip once you have checked the judge on goldens
    rubric_prompt = "..."                  # optional; {rubric}, {input}, {expected}, {output}
    [judge.provider]                       # any provider of the candidates file
    type = "openai"
    base_url = "http://127.0.0.1:8000/v1"
    model = "judge-model"

The judge is given the rubric, the golden's ``input`` (the question the answer responds to: a
rubric like "answers the question" cannot be graded without it), the reference answer and the
answer, and is asked for ``{"score": 0..1, "reason": "..."}``. Every part of the prompt is in the
judge's cache key, so a changed input is a new judge call. The verdict is parsed robustly (JSON
in prose or in a code fence, or a bare number); an unparseable verdict is asked for once more
and then reported as ``judge-error``: never a pass. Judge calls are cached like outputs.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TypedDict

from assay.asserts import as_text
from assay.cascade._cascade import finish_judged, is_pending_judge, judge_error, judge_note
from assay.errors import ConfigError
from assay.validate import At, is_number
from assay.vocabulary import TIER3

if TYPE_CHECKING:
    from assay.config import JudgeSettings
    from assay.goldens import Golden
    from assay.models import OutputCache, RunStats
    from assay.results import Result


class Verdict(TypedDict):
    score: float
    reason: str


DEFAULT_RUBRIC_PROMPT: Final = (
    "You are grading an answer against a rubric.\n\nRubric:\n{rubric}\n\n"
    "Question or input the answer responds to (may be empty):\n{input}\n\n"
    "Reference answer (may be empty):\n{expected}\n\nAnswer to grade:\n{output}\n\n"
    'Reply with only a JSON object: {{"score": <number from 0 to 1>, "reason": "<one '
    'sentence>"}}'
)
_PLACEHOLDER = re.compile(r"\{\{|\}\}|\{(?:rubric|input|expected|output)\}")
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)
_BARE_NUMBER = re.compile(r"^\s*(?:score\s*[:=]\s*)?(\d+(?:\.\d+)?)\s*\.?\s*$", re.IGNORECASE)


def judge_prompt(
    settings: JudgeSettings, output: str, rubric: str, expected: str, input: str = ""
) -> str:
    """The grading prompt: ``{rubric}``, ``{input}`` (the golden's input, the question),
    ``{expected}`` and ``{output}`` filled in one pass (a placeholder inside the output is not
    expanded again); ``{{`` / ``}}`` are literal braces."""
    template = settings.rubric_prompt or DEFAULT_RUBRIC_PROMPT
    values = {
        "{rubric}": rubric,
        "{input}": input,
        "{expected}": expected,
        "{output}": output,
        "{{": "{",
        "}}": "}",
    }
    return _PLACEHOLDER.sub(lambda m: values[m.group(0)], template)


def _verdict_from(value: Any) -> Verdict | None:
    if isinstance(value, Mapping) and "score" in value:
        score = value["score"]
        if is_number(score) and 0 <= score <= 1:
            reason = value.get("reason")
            return {"score": float(score), "reason": reason if isinstance(reason, str) else ""}
    return None


def parse_verdict(text: str) -> Verdict | None:
    """Find ``{score, reason}`` in a judge's reply: whole JSON, a fenced block, JSON in prose,
    or a bare number in [0, 1]. None when there is no valid verdict."""
    for candidate in [text, *_FENCE.findall(text)]:
        try:
            found = _verdict_from(json.loads(candidate.strip()))
        except ValueError:
            found = None
        if found is not None:
            return found
    decoder = json.JSONDecoder()
    for start in (i for i, ch in enumerate(text) if ch == "{"):
        try:
            value, _ = decoder.raw_decode(text, start)
        except ValueError:
            continue
        if (found := _verdict_from(value)) is not None:
            return found
    if (bare := _BARE_NUMBER.match(text)) is not None:
        score = float(bare.group(1))
        if 0 <= score <= 1:
            return {"score": score, "reason": ""}
    return None


# One thing to judge: (output, rubric, expected, input); expected and input may be "".
JudgeItem = tuple[str, str, str, str]


async def judge_texts(
    items: Sequence[JudgeItem],
    settings: JudgeSettings,
    *,
    cache: OutputCache | None,
    stats: RunStats | None = None,
    root: Path | None = None,
) -> list[tuple[Verdict | None, str | None]]:
    """Judge ``(output, rubric, expected, input)`` items; each gets a verdict or an error text. No
    ``[judge.provider]``, or one that cannot start, is a ConfigError naming the config file.

    ``stats``, when given, counts the judge's calls, tokens and cost (apart from the
    candidates': a run's judge costs money too). ``root``: the project root, where a python
    judge provider's module is found (default: the working directory).
    """
    from assay.models import Call, run_calls

    where = settings.source or "assay.toml"
    config = settings.provider
    if config is None:
        message = "the judge needs a provider: add a [judge.provider] block"
        At(where, "judge.provider").fail(message)
    source = f"{where} [judge.provider]"
    config = structured_config(config, settings)
    if config.type in ("openai", "anthropic") and config.max_tokens is None:
        # As for candidates: a judge that misses its stop token must not run to the timeout.
        config = replace(config, max_tokens=JUDGE_MAX_TOKENS)
    prompts = [judge_prompt(settings, *item) for item in items]
    results: list[tuple[Verdict | None, str | None]] = [(None, None)] * len(items)
    pending = list(range(len(items)))
    for attempt in (0, 1):  # one more ask for an unparseable verdict, then judge-error
        calls = [Call("judge", str(i), attempt, prompts[i], config, "judge") for i in pending]
        try:
            outcomes, made = await run_calls(
                calls,
                cache=cache,
                max_concurrency=16,
                accept=lambda text: parse_verdict(text) is not None,
                root=root,
            )
        except ConfigError as exc:
            if exc.source is None:
                raise ConfigError(exc.message, source=source, field=exc.field) from None
            raise
        if stats is not None:
            stats.add(made)
        retry = []
        for i, outcome in zip(pending, outcomes, strict=True):
            if outcome.completion is None:
                results[i] = (None, f"the judge call failed: {outcome.error}")
            elif (verdict := parse_verdict(outcome.completion.text)) is None:
                results[i] = (None, "the judge's verdict could not be parsed")
                retry.append(i)
            else:
                results[i] = (verdict, None)
        pending = retry
        if not pending:
            break
    return results


# The verdict's shape, for servers that constrain a reply to a JSON schema (OpenAI, llama.cpp,
# vLLM): a small judge model answered "100000…" unconstrained. The score is an enum of tenths
# because llama.cpp ignores minimum / maximum (measured: a bounded number still ran to 10^15),
# and the reason is bounded so a rambling judge ends.
VERDICT_SCHEMA: Final = {
    "type": "object",
    "properties": {
        "score": {"enum": [0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1]},
        "reason": {"type": "string", "maxLength": 200},
    },
    "required": ["score", "reason"],
    "additionalProperties": False,
}


# A verdict is one short JSON object; an HTTP judge without max_tokens gets this many.
JUDGE_MAX_TOKENS: Final = 256


def structured_config(config: Any, settings: JudgeSettings) -> Any:
    """The judge's provider asking for a JSON verdict by ``response_format`` (openai type, when
    ``structured`` and no response_format of its own); any other provider unchanged."""
    if not settings.structured or config.type != "openai" or config.response_format is not None:
        return config
    schema = {"type": "json_schema", "json_schema": {"name": "verdict", "schema": VERDICT_SCHEMA}}
    text = json.dumps(schema, sort_keys=True, separators=(",", ":"))
    return replace(config, response_format=text)


# What a pending result asks the judge: the items of its ``judge`` asserts as (assert index,
# item index), or for a tier 3 result the index of its one item (the golden's rubric).
_Asked = list[tuple[int, int]] | int


def apply_judge(
    pending: Sequence[tuple[Result, Any, Golden]],
    settings: JudgeSettings,
    *,
    root: Path,
    use_cache: bool,
    stats: RunStats | None = None,
) -> list[Result]:
    """Decide ``needs-judge`` results with the judge: pass when score ≥ the golden's threshold;
    an unusable verdict or a failed call is ``error`` (judge-error), never a pass.

    A golden with asserts reached the judge through its ``judge`` asserts: each one still
    pending is one call (its own rubric), all in the same batch, and the result is decided by
    :func:`assay.cascade._cascade.finish_judged`."""
    import asyncio

    from assay.models import OutputCache, default_cache_path

    items, owned = _judge_items(pending)
    cache = OutputCache(default_cache_path(root)) if use_cache else None
    try:
        verdicts = asyncio.run(judge_texts(items, settings, cache=cache, stats=stats, root=root))
    finally:
        if cache is not None:
            cache.close()
    # Each item as finish_judged reads it: (score, reason), or the error text.
    graded = [(v["score"], v["reason"]) if v is not None else str(e) for v, e in verdicts]
    decided = []
    for (result, _, golden), mine in zip(pending, owned, strict=True):
        if isinstance(mine, int):
            decided.append(_tier3_decided(result, golden, *verdicts[mine]))
        else:
            own = {index: graded[item] for index, item in mine}
            decided.append(finish_judged(golden, result, own))
    return decided


def _judge_items(
    pending: Sequence[tuple[Result, Any, Golden]],
) -> tuple[list[JudgeItem], list[_Asked]]:
    """One batch of ``(output, rubric, expected, input)`` items for every pending result, and
    what each result asked (see ``_Asked``)."""
    items: list[JudgeItem] = []
    owned: list[_Asked] = []
    for result, output, golden in pending:
        text = as_text(output)
        expected = as_text(golden.expected) if golden.has_expected else ""
        question = "" if golden.input is None else as_text(golden.input)
        if not golden.asserts:
            owned.append(len(items))
            items.append((text, golden.rubric or "", expected, question))
            continue
        asked: list[tuple[int, int]] = []
        for index, (spec, check) in enumerate(zip(golden.asserts, result.checks, strict=True)):
            if is_pending_judge(check):
                asked.append((index, len(items)))
                items.append((text, str(spec.args["rubric"]), expected, question))
        owned.append(asked)
    return items, owned


def _tier3_decided(
    result: Result, golden: Golden, verdict: Verdict | None, error: str | None
) -> Result:
    """A tier 3 result decided by its verdict: pass at the golden's threshold; no verdict is
    ``error`` (judge-error)."""
    if verdict is None:
        return judge_error(result, [f"judge-error: {error}"])
    passed = verdict["score"] >= golden.threshold
    return replace(
        result,
        status="pass" if passed else "fail",
        passed=passed,
        score=verdict["score"],
        decided_by=TIER3,
        notes=(judge_note(verdict["score"], verdict["reason"]),),
    )


def judge(
    output: str,
    rubric: str,
    settings: JudgeSettings | None = None,
    *,
    expected: str = "",
    input: str = "",
) -> Verdict:
    """Grade one ``output`` against ``rubric`` (what a good answer does), ``expected`` (a
    reference answer) if there is one, and ``input`` (the question the output answers) if
    there is one, with the judge of ``settings`` (default: the ``[judge]`` block of the
    project's config). Blocking; a ConfigError when no judge provider is configured or the
    judge's verdict is unusable.
    """
    import asyncio

    if settings is None:
        from assay.config import load_config

        settings = load_config().judge
    verdicts = asyncio.run(judge_texts([(output, rubric, expected, input)], settings, cache=None))
    verdict, error = verdicts[0]
    if verdict is None:
        raise ConfigError(f"judge-error: {error}", source=settings.source, field="judge")
    return verdict
