"""The assertion cascade: tier 1 asserts, then tier 2 similarity, then the tier 3 judge.

- :mod:`~assay.cascade._cascade`: one golden's output through the tiers, cheap ones first;
- :mod:`~assay.cascade._judge`: the LLM judge, batched over the run's pending goldens;
- :mod:`~assay.cascade._schemas`: the check context built from the config (registered schemas).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from assay._lazy import lazy_exports
from assay.cascade._cascade import NO_OUTPUT, combine_repeats, error_result, evaluate, is_skipped
from assay.cascade._schemas import check_context

if TYPE_CHECKING:
    from assay.cascade._judge import apply_judge

# Resolved on first use (PEP 562): the judge's module loads only when something is judged.
_EXPORTS: dict[str, str] = {"apply_judge": "_judge"}

__all__ = [
    "NO_OUTPUT",
    "apply_judge",
    "check_context",
    "combine_repeats",
    "error_result",
    "evaluate",
    "is_skipped",
]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)
