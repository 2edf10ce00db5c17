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
from collections.abc import Mapping
from typing import Any, Final, TypedDict

from .errors import ConfigError


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


def is_verified(config: Mapping[str, Any] | None = None) -> bool:
    """Whether assay.toml marks the judge as verified (then it runs without --judge)."""
    return settings(config).get("verified") is True


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


def judge(output: str, rubric: str, config: Mapping[str, Any] | None = None) -> Verdict:
    """Grade one ``output`` against ``rubric`` with the configured judge (blocking).

    Raises:
        ConfigError: no judge provider is configured, or the judge's verdict is unusable.
    """
    import asyncio

    from .judging import judge_texts

    verdicts = asyncio.run(judge_texts([(output, rubric, "")], settings(config), cache=None))
    verdict, error = verdicts[0]
    if verdict is None:
        raise ConfigError(f"judge-error: {error}", field="judge")
    return verdict
