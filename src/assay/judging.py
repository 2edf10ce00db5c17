"""Running the tier 3 judge over many outputs: bounded, cached, one retry for a bad verdict."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from .candidates._cache import OutputCache
from .candidates._file import provider_config
from .candidates._runner import Call, run_calls
from .errors import ConfigError
from .goldens import Golden
from .judge import Verdict, judge_prompt, parse_verdict
from .results import Result


async def judge_texts(
    items: Sequence[tuple[str, str, str]],
    block: Mapping[str, Any],
    *,
    cache: OutputCache | None,
    max_concurrency: int = 16,
) -> list[tuple[Verdict | None, str | None]]:
    """Judge ``(output, rubric, expected)`` triples; each gets a verdict or an error text."""
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

    from .asserts import as_text
    from .candidates._cache import default_cache_path

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
