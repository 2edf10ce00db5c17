"""A gate run's saved record (``.assay/runs/``, beside the agent runs'): what it came to, with
nothing of the suite's content in it.

Run records stay on disk and may be shared, so they hold no ground truth and no model content:
each check by its op only (``contains``, never ``contains:Paris``, which is the expected
answer), no reasons, evidence, notes or outputs (the run's report, which the user asked for,
shows those), and each regression by its kind only (``passed in the baseline, now fail``).
What remains is enough to list the run, show its summary and verdict, and tell which goldens
failed by which checks.

The results are kept as rows, ``[id, candidate, tier, status, score, decided_by, [failed check
ops]]``, so that saving a 10,000-golden run costs a few milliseconds, not the tens a full result
record per golden would; :func:`expand_rows` gives them back as result records for the views.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from assay.gate._verdict import QUOTED_ERRORS
from assay.vocabulary import STATUSES

if TYPE_CHECKING:
    from assay.gate._run import GateRun

# The summary keys a record keeps (the baseline path is the project-relative one).
_SUMMARY_KEYS: Final = tuple(
    "goldens mode gate shard filter gate_failures model_calls judge_calls_saved baseline".split()
)


def _redacted_why(why: str) -> str:
    """A regression's reason without what it quotes: the exact rule's reason names the failed
    checks with their arguments after a colon; the statistical one names only numbers."""
    head, sep, _ = why.partition(": ")
    return head if sep and head.startswith("passed in the baseline") else why


def gate_record(
    run: GateRun, document: dict[str, Any], *, keep_outputs: bool = False, root: Path | None = None
) -> dict[str, Any]:
    """The record to save of ``run`` (``document`` is its ``--json`` document); with
    ``keep_outputs`` (``keep_outputs = true`` in assay.toml) each result's output too; with the
    project's ``root``, the git branch and commit it is at."""
    rows = [
        [
            r.id,
            r.candidate,
            r.tier,
            r.status,
            r.score,
            r.decided_by,
            [c.recorded_op() for c in r.checks if not c.passed] if r.status != "pass" else [],
        ]
        for r in run.results
    ]
    given = document["summary"]  # the document's totals are the run's results' (the one source)
    summary = {
        "total": given["total"],
        "counts": dict(given["counts"]),
        "pass_rate": given["pass_rate"],
        "mean_score": given["mean_score"],
        "candidates": [s.to_dict() for s in run.summaries],
    }
    summary.update({key: given[key] for key in _SUMMARY_KEYS if key in given})
    if "undecided" in given:
        # Why the gate could not decide, without the first errors it quotes: a provider's or
        # judge's error message may hold the prompt, the output or the rubric.
        summary["undecided"] = [r.split(QUOTED_ERRORS, 1)[0] for r in given["undecided"]]
    record: dict[str, Any] = {"kind": "gate", "rows": rows, "summary": summary}
    record["command"] = "eval" if run.live else "gate"  # which one ran: `assay view` shows it
    if root is not None:
        record["git"] = git_state(root)
    if keep_outputs:
        record |= _kept_outputs(run)
    if "regressions" in document:
        record["regressions"] = [
            {"id": r["id"], "candidate": r["candidate"], "why": _redacted_why(r["why"])}
            for r in document["regressions"]
        ]
    record["created_at"] = datetime.now(UTC).isoformat(timespec="microseconds")
    return record


def git_state(root: Path) -> dict[str, str | None] | None:
    """The branch and commit the project is at (None outside a git checkout), read from the
    files git keeps (no git process: a save costs microseconds); on CI, the CI's own names."""
    sha, ref = os.environ.get("GITHUB_SHA"), os.environ.get("GITHUB_HEAD_REF")
    if sha:
        return {"branch": ref or os.environ.get("GITHUB_REF_NAME") or None, "commit": sha}
    for folder in (root, *root.parents):
        git = folder / ".git"
        try:
            if git.is_file():  # a worktree: the file names its git folder
                git = folder / git.read_text(encoding="utf-8").partition("gitdir:")[2].strip()
            if git.is_dir():
                return _head(git)
        except (OSError, ValueError):  # unreadable or not git's: no git state, not an error
            return None
    return None


def _head(git: Path) -> dict[str, str | None] | None:
    head = (git / "HEAD").read_text(encoding="utf-8").strip()
    if not head.startswith("ref: "):
        return {"branch": None, "commit": head or None}  # detached
    ref = head[5:]
    common = git / "commondir"
    shared = git / common.read_text(encoding="utf-8").strip() if common.is_file() else git
    commit = None
    for where in (git, shared):
        if (where / ref).is_file():
            commit = (where / ref).read_text(encoding="utf-8").strip()
            break
    else:
        packed = shared / "packed-refs"
        lines = packed.read_text(encoding="utf-8").splitlines() if packed.is_file() else []
        commit = next((ln.split()[0] for ln in lines if ln.endswith(f" {ref}")), None)
    return {"branch": ref.removeprefix("refs/heads/"), "commit": commit}


def _kept_outputs(run: GateRun) -> dict[str, Any]:
    """Each result's output by candidate and golden id, and the distinct answers of the repeats
    that did not pass with their counts: model answers the user chose to keep (never the
    golden's expected answer, which the record never holds)."""
    outputs: dict[str, dict[str, Any]] = {}
    for r in run.results:
        produced = run.outputs.get(r.candidate, {})
        if r.id in produced:
            outputs.setdefault(r.candidate, {})[r.id] = produced[r.id]
    failing: dict[str, dict[str, Any]] = {}
    for (candidate, golden_id), answers in run.failing.items():
        failing.setdefault(candidate, {})[golden_id] = [[o, n] for o, n in answers]
    return {"outputs": outputs, "failing_outputs": failing}


def expand_rows(rows: list[Any]) -> list[dict[str, Any]]:
    """A gate record's rows as result records (each failed check by its op, as saved).

    Raises:
        ValueError: a row that is not of the shape :func:`gate_record` writes.
    """
    out = []
    for row in rows:
        golden_id, candidate, tier, status, score, decided_by, failed = row
        number = score is None or (isinstance(score, (int, float)) and not isinstance(score, bool))
        if not (
            isinstance(golden_id, str)
            and isinstance(candidate, str)
            and (tier is None or isinstance(tier, str))
            and status in STATUSES
            and number
            and (decided_by is None or isinstance(decided_by, str))
            and isinstance(failed, list)
            and all(isinstance(op, str) for op in failed)
        ):
            raise ValueError("not a gate record row")
        passed = True if status == "pass" else None if status == "needs-judge" else False
        checks = [
            {"text": op, "op": op, "passed": False, "reason": None, "evidence": None}
            for op in failed
        ]
        out.append(
            {
                "id": golden_id,
                "tier": tier,
                "candidate": candidate,
                "status": status,
                "passed": passed,
                "score": score,
                "decided_by": decided_by,
                "checks": checks,
            }
        )
    return out
