"""Fixed runs for the report views (Markdown, text, JUnit, HTML) and their snapshot files.

``sample_run`` is a ``--check`` run with every status and hostile text, ``example_run`` the
packaged example scored as ``assay gate --example`` does, ``agent_document`` a scored agent run with
a fixed id, time and version. Regenerate the snapshots after an intended change with
``ASSAY_UPDATE_SNAPSHOTS=1 pytest tests/views`` and review the diff.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from assay.agent import parse_record, run_document, score_tasks
from assay.asserts import CheckResult
from assay.config import load_config
from assay.gate import Diff, Regression, Verdict
from assay.gate._run import GateOptions, GateRun, run_gate
from assay.goldens import iter_goldens, packaged_root
from assay.results import Result, rank, summarize

SNAPSHOTS = Path(__file__).resolve().parents[1] / "views" / "snapshots"
UPDATE = os.environ.get("ASSAY_UPDATE_SNAPSHOTS") == "1"

# A reason that tries every way text can break a report: markup, table pipes, code ticks,
# newlines, an entity, a Markdown link and emphasis.
NASTY = "</script><script>alert(1)</script> | `tick` *bold* [link](x) &amp;\nsecond line"


def check_snapshot(name: str, text: str) -> None:
    """Compare ``text`` with ``tests/views/snapshots/name`` byte for byte (or rewrite it when
    ``ASSAY_UPDATE_SNAPSHOTS=1``)."""
    path = SNAPSHOTS / name
    if UPDATE:
        path.write_bytes(text.encode("utf-8"))
    assert path.is_file(), f"missing snapshot {path}; run with ASSAY_UPDATE_SNAPSHOTS=1"
    assert text == path.read_bytes().decode("utf-8")


def checks(*items: tuple[str, bool, str | None]) -> tuple[CheckResult, ...]:
    out = []
    for text, passed, reason in items:
        op = text.split(":", 1)[0]
        evidence = None if passed else {"reason": "mismatch"}
        out.append(CheckResult(text, op, passed, reason, evidence))
    return tuple(out)


def sample_results() -> list[Result]:
    """Every status, two candidates (one with a pipe in its name), hostile text in reasons."""
    brief, verbose = "brief", "verbose|v2"
    sql_ok = checks(("contains:FROM", True, None), ("contains:users", True, None))
    return [
        Result("sql-active-users", "smoke", brief, "pass", True, 1.0, "tier1-asserts", sql_ok),
        Result(
            "json-invoice",
            "smoke",
            brief,
            "fail",
            False,
            0.5,
            "tier1-asserts",
            checks(
                ("is-json", True, None),
                ("equals:INV-1042 @/invoice", False, "expected 'INV-1042', got 'INV-1O42'"),
            ),
        ),
        Result("explain-cache", "standard", brief, "pass", True, 0.83, "tier2-rapidfuzz"),
        Result(
            "deploy-friday",
            "smoke",
            brief,
            "needs-judge",
            None,
            None,
            "tier3-judge",
            notes=("tier 3: needs a judge (not called in deterministic mode)",),
        ),
        Result(
            "summary-no-pii",
            "standard",
            brief,
            "no-output",
            False,
            0.0,
            None,
            notes=("no output for this golden",),
        ),
        Result(
            "xss-<script>",
            "adversarial",
            brief,
            "fail",
            False,
            0.0,
            "tier1-asserts",
            checks(("not-contains:<script>", False, NASTY)),
        ),
        Result(
            "bad-output",
            "stretch",
            brief,
            "error",
            None,
            None,
            None,
            notes=("the output could not be decoded",),
        ),
        Result("sql-active-users", "smoke", verbose, "pass", True, 1.0, "tier1-asserts", sql_ok),
        Result(
            "explain-cache",
            "standard",
            verbose,
            "fail",
            False,
            0.42,
            "tier2-rapidfuzz",
            (),
            ("similarity 0.420 below threshold 0.6",),
        ),
        Result("deploy-friday", "smoke", verbose, "needs-judge", None, None, "tier3-judge"),
    ]


def sample_run() -> GateRun:
    """A ``--check`` run with three regressions, notes, and a failed gate."""
    results = sample_results()
    by_candidate: dict[str, list[Result]] = {}
    for r in results:
        by_candidate.setdefault(r.candidate, []).append(r)
    summaries = rank([summarize(c, rs) for c, rs in by_candidate.items()])
    diff = Diff(
        [
            Regression(
                "brief",
                "json-invoice",
                "passed in the baseline, now fail: "
                "equals:INV-1042 @/invoice (expected 'INV-1042', got 'INV-1O42')",
            ),
            Regression("brief", "summary-no-pii", "passed in the baseline, now no-output"),
            Regression("verbose|v2", "explain-cache", "score dropped 0.910 → 0.420"),
        ],
        ["1 golden(s) not in the baseline: brief/xss-<script>"],
    )
    verdict = Verdict(
        mode="check",
        failures=("3 regression(s) against assay-baseline.json",),
        diff=diff,
        baseline_path=Path("assay-baseline.json"),
    )
    return GateRun(
        results,
        summaries,
        golden_count=7,
        verdict=verdict,
        notes=["candidate 'verbose|v2': 1 output(s) name no selected golden (e.g. old-id)"],
    )


def example_run(tmp_path: Path) -> GateRun:
    """The packaged example, scored as ``assay gate --example`` does."""
    return run_gate(GateOptions(example=True), load_config(tmp_path))


def agent_document() -> dict[str, Any]:
    """A scored agent run over the packaged tasks: one pass, one test regression, the rest
    incomplete (no telemetry); fixed id, time and version so snapshots are stable."""
    tasks = list(iter_goldens(packaged_root()))
    records = {
        "smoke-fix-off-by-one": {
            "completion_signals_checked": 2,
            "completion_signals_passed": 2,
            "files_modified": ["src/pages.py", "tests/test_pages.py"],
            "cost_usd": 0.1,
            "duration_s": 30,
        },
        "smoke-pin-dependency": {"tests_failed": 2, "cost_usd": 0.2, "duration_s": 50},
    }
    telemetry = {k: parse_record({"task_id": k, **v}, k) for k, v in records.items()}
    document = run_document(score_tasks(tasks, telemetry), {"tiers": ["smoke", "standard"]})
    document.update(
        run_id="eval_run_20250101T000000_000000Z",
        created_at="2025-01-01T00:00:00.000000+00:00",
        assay_version="0.0.0-test",
    )
    return document
