"""natural-stop: the model ended its answer itself, rather than hitting its length limit."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from assay.asserts._context import CheckContext, OutputView
from assay.asserts._result import Outcome

# What providers call a stop at the length limit (OpenAI / llama.cpp "length", Anthropic
# "max_tokens"); anything else they report (stop, end_turn, stop_sequence, tool_calls) is the
# model's own stop.
TRUNCATED: Final = frozenset({"length", "max_tokens", "model_length"})


def op_natural_stop(view: OutputView, args: Mapping[str, Any], ctx: CheckContext) -> Outcome:
    reason = view.finish_reason
    if reason is None:
        # A static output (or a provider that does not say) cannot show it stopped by itself.
        return False, "no finish reason is known for this output", {"reason": "no_finish_reason"}
    if reason in TRUNCATED:
        cut = f"the output was cut off at the length limit (finish_reason {reason})"
        return False, cut, {"reason": "truncated", "finish_reason": reason}
    return True, None, None
