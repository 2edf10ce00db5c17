"""Agent golden benchmark: telemetry, the composite score, the failure taxonomy."""

from ._record import compare_runs, failures_table, run_document
from ._run import DEFAULT_AGENT_TIERS, AgentRun, AttestationCheck, TaskResult, score_tasks
from ._score import COST_BASELINE_USD, DURATION_BASELINE_S, Components, compose
from ._taxonomy import CATEGORIES, classify, glob_regex, owned
from ._telemetry import Telemetry, load_telemetry, parse_record

__all__ = [
    "CATEGORIES",
    "COST_BASELINE_USD",
    "DEFAULT_AGENT_TIERS",
    "DURATION_BASELINE_S",
    "AgentRun",
    "AttestationCheck",
    "Components",
    "TaskResult",
    "Telemetry",
    "classify",
    "compare_runs",
    "compose",
    "failures_table",
    "glob_regex",
    "load_telemetry",
    "owned",
    "parse_record",
    "run_document",
    "score_tasks",
]
