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


def similar_backend(args: Mapping[str, Any], ctx: CheckContext) -> str:
    """The backend the assert uses: its own ``backend``, else the run's when lexical or
    embedding, else rapidfuzz.

    Raises:
        ArgumentProblem: ``backend`` names something other than difflib or rapidfuzz.
    """
    named = args.get("backend")
    if named is not None:
        if named not in NAMED_BACKENDS:
            raise ArgumentProblem(
                f"argument 'backend' must be one of {sorted(NAMED_BACKENDS)}, not {named!r}",
                {"reason": "invalid_argument"},
            )
        return str(named)
    if ctx.similarity in NAMED_BACKENDS or ctx.similarity == "embedding":
        return ctx.similarity
    return _FALLBACK


def op_similar(view: OutputView, args: Mapping[str, Any], ctx: CheckContext) -> Outcome:
    from assay.asserts._similarity import get_backend

    reference = args.get("value")
    if not isinstance(reference, str) or not reference:
        raise ArgumentProblem("argument 'value' (the reference text) must be a non-empty string")
    threshold = args.get("threshold", DEFAULT_THRESHOLD)
    if not is_number(threshold) or not 0 <= threshold <= 1:
        raise ArgumentProblem("argument 'threshold' must be a number between 0 and 1")
    name = similar_backend(args, ctx)
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
    return (
        False,
        f"similarity {score:.3f} below threshold {threshold:g}",
        {**evidence, "reason": "below_threshold"},
    )
