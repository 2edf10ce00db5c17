"""The assertion cascade: tier 1 asserts, then tier 2 similarity, then the tier 3 judge.

- :mod:`~assay.cascade._cascade`: one golden's output through the tiers, cheap ones first;
- :mod:`~assay.cascade._judge`: the LLM judge, batched over the run's pending goldens;
- :mod:`~assay.cascade._schemas`: the check context built from the config (registered schemas).
"""

from __future__ import annotations

from assay.cascade._cascade import (
    NO_OUTPUT,
    combine_repeats,
    error_result,
    evaluate,
    finish_judged,
    is_pending_judge,
    is_skipped,
)
from assay.cascade._schemas import check_context

__all__ = [
    "NO_OUTPUT",
    "check_context",
    "combine_repeats",
    "error_result",
    "evaluate",
    "finish_judged",
    "is_pending_judge",
    "is_skipped",
]
