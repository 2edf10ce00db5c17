"""The fixed value sets every stage shares: tiers, statuses, deciders. One source each; the
CLI's choices, the config validator and the renderers all read them from here."""

from __future__ import annotations

from typing import Final, Literal

Tier = Literal["smoke", "standard", "stretch", "adversarial"]
TIERS: Final[tuple[Tier, ...]] = ("smoke", "standard", "stretch", "adversarial")
# The tiers an agent run scores unless --tier says otherwise (adversarial tasks are opt-in).
DEFAULT_AGENT_TIERS: Final[tuple[Tier, ...]] = ("smoke", "standard", "stretch")

Status = Literal["pass", "fail", "needs-judge", "no-output", "error"]
STATUSES: Final[tuple[Status, ...]] = ("pass", "fail", "needs-judge", "no-output", "error")
# Statuses a report lists as failing (needs-judge is undecided, not failing).
FAILING_STATUSES: Final[tuple[Status, ...]] = ("fail", "error", "no-output")

# Tier 2's built-in similarity backends (a plugin adds a pkg/name one, see asserts._similarity).
BUILTIN_BACKENDS: Final[tuple[str, ...]] = ("none", "difflib", "rapidfuzz", "embedding")

# decided_by values (tier 2 is "tier2-<backend>").
TIER1: Final = "tier1-asserts"
TIER3: Final = "tier3-judge"
AGENT_TELEMETRY: Final = "agent-telemetry"
SCORER: Final = "scorer"


def tier2(backend: str) -> str:
    return f"tier2-{backend}"
