"""Ops on how a live call went rather than what it said: latency, cost.

The runner measures each live call (its wall time, its cost from the provider's token counts);
a static output, or one read from the response cache, has no measurement, so the check fails
closed, negated or not: a budget that cannot be checked must never pass.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from assay.asserts._context import CheckContext, OutputView
from assay.asserts._result import ArgumentProblem, Outcome
from assay.validate import is_number


def _budget(args: Mapping[str, Any], unit: str) -> float:
    threshold = args.get("threshold")
    if not is_number(threshold) or threshold < 0:
        raise ArgumentProblem(
            f"argument 'threshold' must be a number >= 0 (the most {unit} allowed)",
            {"reason": "invalid_argument", "argument": "threshold"},
        )
    return float(threshold)


def op_latency(view: OutputView, args: Mapping[str, Any], ctx: CheckContext) -> Outcome:
    budget = _budget(args, "milliseconds")
    measured = view.latency_ms
    if measured is None:
        raise ArgumentProblem("no latency measured (static outputs)", {"reason": "no_latency"})
    if measured <= budget:
        return True, None, None
    return (
        False,
        f"the call took {measured:.0f} ms, over the {budget:g} ms budget",
        {"reason": "over_budget", "latency_ms": measured, "threshold": budget},
    )


def op_cost(view: OutputView, args: Mapping[str, Any], ctx: CheckContext) -> Outcome:
    budget = _budget(args, "USD")
    measured = view.cost_usd
    if measured is None:
        raise ArgumentProblem("no cost measured (static outputs)", {"reason": "no_cost"})
    if measured <= budget:
        return True, None, None
    return (
        False,
        f"the call cost ${measured:.6g}, over the ${budget:g} budget",
        {"reason": "over_budget", "cost_usd": measured, "threshold": budget},
    )
