"""The tier 3 judge adapter: the one place a model is asked to grade an output.

It is quarantined on purpose. It runs only when asked (``--judge``) or when the ``[judge]`` block
of assay.toml says ``verified = true``; otherwise goldens that reach tier 3 are reported
``needs-judge`` and this module is never called. Configuration (assay.toml)::

    [judge]
    verified = false                       # flip once you have checked the judge on goldens
    rubric_prompt = "..."                  # optional; {rubric}, {output}, {expected} placeholders
    [judge.provider]                       # any provider of the candidates file
    type = "openai"
    base_url = "http://127.0.0.1:8000/v1"
    model = "judge-model"

The judge is asked for ``{"score": 0..1, "reason": "..."}``. The verdict is parsed robustly (JSON
in prose or in a code fence, or a bare number); an unparseable verdict is asked for once more
and then reported as ``judge-error``: never a pass. Judge calls are cached like outputs.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TypedDict

from assay.errors import ConfigError

if TYPE_CHECKING:
    from assay.goldens import Golden
    from assay.models import OutputCache
    from assay.results import Result


class Verdict(TypedDict):
    score: float
    reason: str


JUDGE_CONFIG: Final[dict[str, Any]] = {
    "verified": False,
    "provider": None,
    "rubric_prompt": (
        "You are grading an answer against a rubric.\n\nRubric:\n{rubric}\n\n"
        "Reference answer (may be empty):\n{expected}\n\nAnswer to grade:\n{output}\n\n"
        'Reply with only a JSON object: {{"score": <number from 0 to 1>, "reason": "<one '
        'sentence>"}}'
    ),
}
_KEYS: Final = frozenset({"verified", "provider", "rubric_prompt"})
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)
_BARE_NUMBER = re.compile(r"^\s*(?:score\s*[:=]\s*)?(\d+(?:\.\d+)?)\s*\.?\s*$", re.IGNORECASE)


def settings(config: Mapping[str, Any] | None, source: str | None = None) -> dict[str, Any]:
    """The judge block: defaults overridden by assay.toml's [judge] (``source``), validated."""
    block = dict(config or {})
    unknown = set(block) - _KEYS
    if unknown:
        raise ConfigError(
            f"unknown judge setting (known: {', '.join(sorted(_KEYS))})",
            source=source,
            field=f"judge.{sorted(unknown)[0]}",
        )
    if "verified" in block and not isinstance(block["verified"], bool):
        raise ConfigError("must be true or false", source=source, field="judge.verified")
    if "rubric_prompt" in block and not isinstance(block["rubric_prompt"], str):
        raise ConfigError("must be a string", source=source, field="judge.rubric_prompt")
    return {**JUDGE_CONFIG, **block}


def judge_prompt(block: Mapping[str, Any], output: str, rubric: str, expected: str) -> str:
    template = str(block.get("rubric_prompt") or JUDGE_CONFIG["rubric_prompt"])
    return (
        template.replace("{{", "\x00")
        .replace("}}", "\x01")
        .replace("{rubric}", rubric)
        .replace("{expected}", expected)
        .replace("{output}", output)
        .replace("\x00", "{")
        .replace("\x01", "}")
    )


def _verdict_from(value: Any) -> Verdict | None:
    if isinstance(value, Mapping) and "score" in value:
        score = value["score"]
        if (
            isinstance(score, int | float)
            and not isinstance(score, bool)
            and math.isfinite(score)
            and 0 <= score <= 1
        ):
            reason = value.get("reason")
            return {"score": float(score), "reason": reason if isinstance(reason, str) else ""}
    return None


def parse_verdict(text: str) -> Verdict | None:
    """Find ``{score, reason}`` in a judge's reply: whole JSON, a fenced block, JSON in prose,
    or a bare number in [0, 1]. None when there is no valid verdict."""
    candidates = [text, *(_FENCE.findall(text))]
    for candidate in candidates:
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
        found = _verdict_from(value)
        if found is not None:
            return found
    bare = _BARE_NUMBER.match(text)
    if bare is not None:
        score = float(bare.group(1))
        if 0 <= score <= 1:
            return {"score": score, "reason": ""}
    return None


async def judge_texts(
    items: Sequence[tuple[str, str, str]],
    block: Mapping[str, Any],
    *,
    cache: OutputCache | None,
    max_concurrency: int = 16,
) -> list[tuple[Verdict | None, str | None]]:
    """Judge ``(output, rubric, expected)`` triples; each gets a verdict or an error text."""
    from assay.models import Call, provider_config, run_calls

    raw = block.get("provider")
    if not isinstance(raw, Mapping):
        raise ConfigError(
            "the judge needs a provider: add a [judge.provider] block to assay.toml",
            field="judge.provider",
        )
    config = provider_config(raw, "assay.toml", "judge.provider")
    source = "assay.toml [judge.provider]"
    prompts = [judge_prompt(block, output, rubric, expected) for output, rubric, expected in items]
    results: list[tuple[Verdict | None, str | None]] = [(None, None)] * len(items)
    pending = list(range(len(items)))
    for attempt in (0, 1):  # one more ask for an unparseable verdict, then judge-error
        calls = [Call("judge", str(i), attempt, prompts[i], config, "judge") for i in pending]
        try:
            outcomes, _stats = await run_calls(
                calls,
                cache=cache,
                max_concurrency=max_concurrency,
                accept=lambda text: parse_verdict(text) is not None,
            )
        except ConfigError as exc:
            if exc.source is None:
                raise ConfigError(exc.message, source=source, field=exc.field) from None
            raise
        retry = []
        for i, outcome in zip(pending, outcomes, strict=True):
            if outcome.completion is None:
                results[i] = (None, f"the judge call failed: {outcome.error}")
                continue
            verdict = parse_verdict(outcome.completion.text)
            if verdict is None:
                results[i] = (None, "the judge's verdict could not be parsed")
                retry.append(i)
            else:
                results[i] = (verdict, None)
        pending = retry
        if not pending:
            break
    return results


def apply_judge(
    pending: Sequence[tuple[Result, Any, Golden]],
    block: Mapping[str, Any],
    *,
    root: Path,
    use_cache: bool,
) -> list[Result]:
    """Decide ``needs-judge`` results with the judge: pass when score ≥ the golden's threshold;
    an unusable verdict or a failed call is ``error`` (judge-error), never a pass."""
    import asyncio

    from assay.asserts import as_text
    from assay.models import OutputCache, default_cache_path

    items = [
        (
            as_text(output),
            golden.rubric or "",
            as_text(golden.expected) if golden.has_expected else "",
        )
        for _, output, golden in pending
    ]
    cache = OutputCache(default_cache_path(root)) if use_cache else None
    try:
        verdicts = asyncio.run(judge_texts(items, block, cache=cache))
    finally:
        if cache is not None:
            cache.close()
    decided = []
    for (result, _, golden), (verdict, error) in zip(pending, verdicts, strict=True):
        if verdict is None:
            decided.append(
                replace(
                    result,
                    status="error",
                    passed=False,
                    score=None,
                    decided_by="tier3-judge",
                    notes=(f"judge-error: {error}",),
                )
            )
            continue
        passed = verdict["score"] >= golden.threshold
        note = (
            f"judge: {verdict['score']:.2f} ({verdict['reason']})"
            if verdict["reason"]
            else (f"judge: {verdict['score']:.2f}")
        )
        decided.append(
            replace(
                result,
                status="pass" if passed else "fail",
                passed=passed,
                score=verdict["score"],
                decided_by="tier3-judge",
                notes=(note,),
            )
        )
    return decided


def judge(output: str, rubric: str, config: Mapping[str, Any] | None = None) -> Verdict:
    """Grade one ``output`` against ``rubric`` with the configured judge (blocking).

    Raises:
        ConfigError: no judge provider is configured, or the judge's verdict is unusable.
    """
    import asyncio

    verdicts = asyncio.run(judge_texts([(output, rubric, "")], settings(config), cache=None))
    verdict, error = verdicts[0]
    if verdict is None:
        raise ConfigError(f"judge-error: {error}", field="judge")
    return verdict
