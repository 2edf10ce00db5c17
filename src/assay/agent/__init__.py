"""Agent golden benchmark: telemetry, the composite score, the failure taxonomy, saved runs.

Names are imported from their modules when first used: a Ray worker running one task (or a
command needing one of them) does not pay for the whole package.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from assay._lazy import lazy_exports

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
    from assay.agent._execute import Sandbox
    from assay.agent._merge import MergedRun, merge_agent, merge_run
    from assay.agent._record import compare_runs, failures_table, run_document
    from assay.agent._saved_runs import load_run, previous_run
    from assay.agent._scoring import AGENT, AgentRun, AttestationCheck, score_tasks
    from assay.agent._tasks import all_tasks, find_task
    from assay.agent._taxonomy import CATEGORIES, classify, glob_regex, owned
    from assay.agent._telemetry import Telemetry, load_telemetry, parse_record
    from assay.gate import list_runs, runs_dir, save_run

# name -> the module that defines it
_EXPORTS: Final = {
    "AGENT": "assay.agent._scoring",
    "AgentOptions": "assay.agent._benchmark",
    "AgentOutcome": "assay.agent._benchmark",
    "AgentRun": "assay.agent._scoring",
    "AttestationCheck": "assay.agent._scoring",
    "CATEGORIES": "assay.agent._taxonomy",
    "COST_BASELINE_USD": "assay.agent._composite",
    "Components": "assay.agent._composite",
    "DURATION_BASELINE_S": "assay.agent._composite",
    "Sandbox": "assay.agent._execute",
    "Telemetry": "assay.agent._telemetry",
    "all_tasks": "assay.agent._tasks",
    "attestation_checker": "assay.agent._benchmark",
    "classify": "assay.agent._taxonomy",
    "compare_runs": "assay.agent._record",
    "compose": "assay.agent._composite",
    "execute_agent": "assay.agent._benchmark",
    "failures_table": "assay.agent._record",
    "find_task": "assay.agent._tasks",
    "glob_regex": "assay.agent._taxonomy",
    "list_runs": "assay.gate",
    "load_run": "assay.agent._saved_runs",
    "load_tasks": "assay.agent._benchmark",
    "load_telemetry": "assay.agent._telemetry",
    "merge_agent": "assay.agent._merge",
    "merge_run": "assay.agent._merge",
    "MergedRun": "assay.agent._merge",
    "owned": "assay.agent._taxonomy",
    "parse_record": "assay.agent._telemetry",
    "previous_run": "assay.agent._saved_runs",
    "run_agent": "assay.agent._benchmark",
    "run_document": "assay.agent._record",
    "runs_dir": "assay.gate",
    "save_run": "assay.gate",
    "score_tasks": "assay.agent._scoring",
}

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
