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


def _within(budget: float, measured: float | None, what: str, key: str, over: str) -> Outcome:
    """``measured`` (``key`` in the evidence) against ``budget``: over it fails, saying ``over``;
    nothing measured is a problem, never a pass."""
    if measured is None:
        raise ArgumentProblem(
            f"no {what} measured (a static output, or an answer cached before assay kept it)",
            {"reason": f"no_{what}"},
        )
    if measured <= budget:
        return True, None, None
    reason = over.format(measured=measured, budget=budget)
    return False, reason, {"reason": "over_budget", key: measured, "threshold": budget}


def op_latency(view: OutputView, args: Mapping[str, Any], ctx: CheckContext) -> Outcome:
    over = "the call took {measured:.0f} ms, over the {budget:g} ms budget"
    return _within(_budget(args, "milliseconds"), view.latency_ms, "latency", "latency_ms", over)


def op_cost(view: OutputView, args: Mapping[str, Any], ctx: CheckContext) -> Outcome:
    over = "the call cost ${measured:.6g}, over the ${budget:g} budget"
    return _within(_budget(args, "USD"), view.cost_usd, "cost", "cost_usd", over)
