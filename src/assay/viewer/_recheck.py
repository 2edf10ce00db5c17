"""A golden's checks worked out again, for the golden page, from the output the run kept.

A run record keeps only which checks failed, never why: a reason may quote the expected answer
(docs/contract.md). When the record kept the output (``keep_outputs``) and the project's golden
is on disk, its deterministic asserts run again now on that output with assay's own cascade, so
the page can say why each check failed. Like the expected answer, the reasons come from the
user's own goldens, read now; nothing of them is written anywhere. No model is called: a
``judge`` or ``similar`` assert, and one on how the call went (latency, cost, the finish
reason: none of it kept), is shown as decided when the run happened, with no reason.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from assay.errors import AssayError

if TYPE_CHECKING:
    from assay.asserts import AssertSpec, CheckContext
    from assay.goldens import Golden

RECOMPUTED: Final = "recomputed from the kept output"
RECORDED: Final = "the run record"
# Ops the kept output alone cannot decide again, and what decided them when the run happened.
_NOT_AGAIN: Final = {
    "judge": "decided by the judge when the run happened",
    "similar": "decided by the similarity backend when the run happened",
    "latency": "decided by the call's measured latency when the run happened",
    "cost": "decided by the call's measured cost when the run happened",
    "natural-stop": "decided by the model's finish reason when the run happened",
}


def _why_not_again(spec: AssertSpec) -> str | None:
    """What decided ``spec`` when the run happened, if the kept output cannot decide it now
    (a group holding such an assert included); None: it can be run again."""
    if spec.op in _NOT_AGAIN:
        return _NOT_AGAIN[spec.op]
    for child in spec.children or ():
        found = _why_not_again(child)
        if found is not None:
            return found
    return None


def recheck(
    row: dict[str, Any], record: dict[str, Any], golden: Golden | None, root: Path
) -> dict[str, Any]:
    """The fields the golden detail gains: ``checks`` (recomputed when it can be), where they
    came from (``checks_source``), why not when they are the record's (``checks_note``), and the
    recomputed verdict beside the recorded one (``recomputed``: null when not recomputed)."""
    kept = _kept_output(record, row)
    why_not = (
        "the run kept no output (keep_outputs = true in assay.toml keeps them)"
        if kept is _NONE
        else "the project's goldens have no golden of this id now"
        if golden is None
        else "the golden has no asserts: similarity or the judge decided it when the run happened"
        if not golden.asserts
        else None
    )
    if why_not is not None:
        return {"checks_source": RECORDED, "checks_note": why_not, "recomputed": None}
    assert golden is not None
    try:
        checks, verdict = _rechecked(golden, kept, row, root)
    except AssayError as exc:  # the config or a registered schema cannot be read now
        return {"checks_source": RECORDED, "checks_note": str(exc), "recomputed": None}
    return {"checks": checks, "checks_source": RECOMPUTED, "checks_note": None, **verdict}


_NONE: Final[Any] = object()


def _kept_output(record: dict[str, Any], row: dict[str, Any]) -> Any:
    """The output the record kept for the row, as it was (a JSON value stays one); _NONE."""
    if row.get("status") == "no-output":
        return _NONE
    for result in record.get("results") or ():
        if result.get("id") == row["id"] and result.get("candidate") == row["candidate"]:
            if "output" in result:  # a --json report carries its own
                return result["output"]
            break
    kept = ((record.get("outputs") or {}).get(row["candidate"])) or {}
    return kept.get(row["id"], _NONE)


def _context(root: Path) -> CheckContext:
    from assay.cascade import check_context
    from assay.config import load_config

    return check_context(load_config(root))


def _rechecked(
    golden: Golden, output: Any, row: dict[str, Any], root: Path
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Every assert's check (recomputed, or as decided then) and the verdict fields."""
    ctx = _context(root)
    # The cascade itself never calls the judge here (no judge is given); a similarity or
    # a measure of the call would be run, so a golden with one goes assert by assert.
    if not any(_why_not_again(s) for s in golden.asserts if s.op != "judge"):
        from assay.cascade import evaluate

        result = evaluate(golden, output, row["candidate"], ctx=ctx)
        checks = [_check_row(c.to_dict()) for c in result.checks]
        if not checks and result.status == "error":  # the golden's transform failed
            checks = [_error_check(n) for n in result.notes]
        return checks, _verdict(row, result.status, result.score)
    view = _view(golden, output, ctx)
    checks = []
    for spec in golden.asserts:
        then = _why_not_again(spec)
        if then is not None or isinstance(view, str):
            checks.append(_decided_then(spec, then or str(view)))
        else:
            from assay.asserts import run_assert

            checks.append(_check_row(run_assert(spec, view, ctx).to_dict()))
    note = "not recomputed: similarity or a measure of the call decided part of it then"
    return checks, {"recomputed": {"status": None, "score": None, "note": note}}


def _view(golden: Golden, output: Any, ctx: CheckContext) -> Any:
    """The output as the asserts read it (after the golden's transform), or why it cannot be."""
    from assay.asserts import OutputView, TransformFailed, apply_transform, function_context

    if golden.transform is not None:
        try:
            output = apply_transform(golden.transform, output, function_context(golden), ctx.root)
        except TransformFailed as failed:
            return f"the golden's transform failed: {failed.message}"
    return OutputView(output, golden=golden)


def _decided_then(spec: AssertSpec, why: str) -> dict[str, Any]:
    """A check the kept output cannot decide again. Its verdict is not known either: a record
    lists a skipped or an ungraded judge assert among the failed ones."""
    return {**_decided_then_op(spec.full_op), "note": why}


def _error_check(note: str) -> dict[str, Any]:
    return {"op": "transform", "passed": False, "reason": note, "recomputed": True}


def _check_row(check: dict[str, Any]) -> dict[str, Any]:
    """A recomputed check as the API shows it (evidence as JSON can carry it); a judge assert
    the cascade left for the judge is shown as the judge decided it then."""
    evidence = check.get("evidence")
    waiting = isinstance(evidence, dict) and evidence.get("reason") == "needs_judge"
    if check["op"] == "judge" and waiting:
        return {**_decided_then_op("judge"), "note": _NOT_AGAIN["judge"]}
    row = {"op": check["op"], "passed": check["passed"], "reason": check["reason"]}
    if evidence is not None:
        row["evidence"] = shown(evidence)
    if isinstance(evidence, dict) and evidence.get("skipped") is True:
        row["skipped"] = True  # cheaper asserts decided the golden: it counts for nothing
    return {**row, "recomputed": True}


def _decided_then_op(op: str) -> dict[str, Any]:
    return {"op": op, "passed": None, "reason": None, "recomputed": False}


def shown(value: Any) -> Any:
    """A golden's value as JSON can carry it (YAML dates and the like as text)."""
    return json.loads(json.dumps(value, default=str, ensure_ascii=False))


def _verdict(row: dict[str, Any], status: str, score: float | None) -> dict[str, Any]:
    """The recomputed verdict, and a note when it is not the one the run recorded."""
    note: str | None
    recorded = row.get("status")
    if status == "needs-judge" and recorded != status:  # the judge finished it then
        why = "not recomputed: the judge decided the rest when the run happened"
        return {"recomputed": {"status": None, "score": None, "note": why}}
    note = None
    if status != recorded:
        note = f"recomputed now: {status}; the run recorded {recorded}: the golden changed since"
        if row.get("repeats"):
            note += ", or the run decided on several answers and this is the kept one"
    return {"recomputed": {"status": status, "score": score, "note": note}}
