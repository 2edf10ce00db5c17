"""Agent golden benchmark: telemetry, the composite score, the failure taxonomy, saved runs.

Names are imported from their modules when first used: a Ray worker running one task (or a
command needing one of them) does not pay for the whole package.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from assay._lazy import exports_by_module, lazy_exports

if TYPE_CHECKING:
    from assay.agent._benchmark import (
        AgentOptions,
        AgentOutcome,
        attestation_checker,
        execute_agent,
        load_tasks,
        run_agent,
    )
    from assay.agent._composite import COST_BASELINE_USD, DURATION_BASELINE_S, Components, compose
    from assay.agent._execute import Sandbox, TaskRun, TaskWatcher
    from assay.agent._merge import MergedRun, merge_agent, merge_run
    from assay.agent._record import compare_runs, failures_table, run_document
    from assay.agent._saved_runs import load_run, previous_run
    from assay.agent._scoring import AGENT, AgentRun, AttestationCheck, score_tasks
    from assay.agent._tasks import all_tasks, find_task
    from assay.agent._taxonomy import CATEGORIES, classify, glob_regex, owned
    from assay.agent._telemetry import Telemetry, load_telemetry, parse_record
    from assay.gate import list_runs, runs_dir, save_run

# name -> the module that defines it
_EXPORTS: Final = exports_by_module(
    {
        "assay.agent._benchmark": (
            "AgentOptions AgentOutcome attestation_checker execute_agent load_tasks run_agent"
        ),
        "assay.agent._composite": "COST_BASELINE_USD DURATION_BASELINE_S Components compose",
        "assay.agent._execute": "Sandbox TaskRun TaskWatcher",
        "assay.agent._merge": "MergedRun merge_agent merge_run",
        "assay.agent._record": "compare_runs failures_table run_document",
        "assay.agent._saved_runs": "load_run previous_run",
        "assay.agent._scoring": "AGENT AgentRun AttestationCheck score_tasks",
        "assay.agent._tasks": "all_tasks find_task",
        "assay.agent._taxonomy": "CATEGORIES classify glob_regex owned",
        "assay.agent._telemetry": "Telemetry load_telemetry parse_record",
        "assay.gate": "list_runs runs_dir save_run",
    }
)

__all__ = [
    "AGENT",
    "CATEGORIES",
    "COST_BASELINE_USD",
    "DURATION_BASELINE_S",
    "AgentOptions",
    "AgentOutcome",
    "AgentRun",
    "AttestationCheck",
    "Components",
    "MergedRun",
    "Sandbox",
    "TaskRun",
    "TaskWatcher",
    "Telemetry",
    "all_tasks",
    "attestation_checker",
    "classify",
    "compare_runs",
    "compose",
    "execute_agent",
    "failures_table",
    "find_task",
    "glob_regex",
    "list_runs",
    "load_run",
    "load_tasks",
    "load_telemetry",
    "merge_agent",
    "merge_run",
    "owned",
    "parse_record",
    "previous_run",
    "run_agent",
    "run_document",
    "runs_dir",
    "save_run",
    "score_tasks",
]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)
