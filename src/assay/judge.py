"""The tier 3 judge adapter: the one place a model is ever asked to grade an output.

It is quarantined on purpose. ``JUDGE_CONFIG`` below is the adapter's config block; it stays
``verified: False`` until someone wires :func:`judge` to a model and checks it against goldens.
While unverified, the cascade never calls it: goldens that reach tier 3 are reported
``needs-judge`` (neither pass nor fail). Wiring the judge changes this file and the ``[judge]``
block of assay.toml, nothing else.
"""

from __future__ import annotations

from typing import Any, Final, TypedDict

from .errors import ConfigError


class Verdict(TypedDict):
    score: float
    reason: str


JUDGE_CONFIG: Final[dict[str, Any]] = {
    "verified": False,
    "provider": None,  # the provider that will answer (not wired yet)
    "model": None,
    "rubric_prompt": "Grade the output against the rubric. Reply with JSON {score, reason}.",
}


def is_verified(config: dict[str, Any] | None = None) -> bool:
    """Whether the judge may be called (the [judge] block of assay.toml overrides the default)."""
    block = {**JUDGE_CONFIG, **(config or {})}
    return block.get("verified") is True


def judge(output: str, rubric: str) -> Verdict:
    """Grade ``output`` against ``rubric``.

    Raises:
        ConfigError: always, until the adapter is wired to a model and verified.
    """
    raise ConfigError(
        "the tier 3 judge is not wired to a model yet (judge.verified is false)",
        field="judge.verified",
    )
