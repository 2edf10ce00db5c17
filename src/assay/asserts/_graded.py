"""The ``similar`` assert: tier 2's similarity as one assert of a golden (the other
model-graded assert, ``judge``, is graded by the gate: see assay.cascade).

``{op: similar, value: "reference", threshold: 0.8, backend: difflib|rapidfuzz}`` scores the
output against ``value`` and passes when the score reaches the threshold. Without ``backend``
it uses the run's similarity backend when that is lexical (or the embedding model, when the
run already loaded it), else rapidfuzz: an assert must never depend on a plugin or load a model
the run did not ask for.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from assay.asserts._context import CheckContext, OutputView
from assay.asserts._result import ArgumentProblem, Outcome
from assay.validate import is_number

DEFAULT_THRESHOLD: Final = 0.8
# What an assert may name: deterministic and offline. The embedding backend is only ever the
# run's own (one model load per run, and the parallel loader already keeps such runs apart).
NAMED_BACKENDS: Final = frozenset({"difflib", "rapidfuzz"})
_FALLBACK: Final = "rapidfuzz"
# The run's own backends an assert without ``backend`` uses; any other run backend: _FALLBACK.
_RUN_BACKENDS: Final = NAMED_BACKENDS | {"embedding"}


def op_similar(view: OutputView, args: Mapping[str, Any], ctx: CheckContext) -> Outcome:
    from assay.asserts._similarity import get_backend

    reference = args.get("value")
    if not isinstance(reference, str) or not reference:
        raise ArgumentProblem("argument 'value' (the reference text) must be a non-empty string")
    threshold = args.get("threshold", DEFAULT_THRESHOLD)
    if not is_number(threshold) or not 0 <= threshold <= 1:
        raise ArgumentProblem("argument 'threshold' must be a number between 0 and 1")
    name = args.get("backend")
    if name is None:
        name = ctx.similarity if ctx.similarity in _RUN_BACKENDS else _FALLBACK
    elif not isinstance(name, str) or name not in NAMED_BACKENDS:  # a list is no name
        raise ArgumentProblem(
            f"argument 'backend' must be one of {sorted(NAMED_BACKENDS)}, not {name!r}",
            {"reason": "invalid_argument"},
        )
    # The run's own function when it is the same backend: the embedding model is loaded once.
    function = ctx.similarity_fn if ctx.similarity == name and ctx.similarity_fn else None
    if function is None:
        function = get_backend(name)
    if function is None:  # get_backend gives None only for "none", which is never chosen
        raise ArgumentProblem(f"no similarity backend {name!r}", {"reason": "invalid_argument"})
    score = max(0.0, min(1.0, float(function(view.text(), reference))))
    evidence: dict[str, Any] = {"score": score, "backend": name}
    if score >= threshold:
        return True, None, evidence
    below = f"similarity {score:.3f} below threshold {threshold:g}"
    return False, below, {**evidence, "reason": "below_threshold"}
