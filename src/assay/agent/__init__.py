"""Agent golden benchmark: telemetry, the composite score, the failure taxonomy, saved runs."""

from assay.agent._benchmark import (
    AgentOptions,
    AgentOutcome,
    attestation_checker,
    bench_settings,
    load_tasks,
    run_agent,
)
from assay.agent._composite import COST_BASELINE_USD, DURATION_BASELINE_S, Components, compose
from assay.agent._record import compare_runs, failures_table, run_document
from assay.agent._saved_runs import (
    RUN_SCHEMA_VERSION,
    list_runs,
    load_run,
    previous_run,
    runs_dir,
    save_run,
)
from assay.agent._scoring import (
    DEFAULT_AGENT_TIERS,
    AgentRun,
    AttestationCheck,
    TaskResult,
    score_tasks,
)
from assay.agent._taxonomy import CATEGORIES, classify, glob_regex, owned
from assay.agent._telemetry import Telemetry, load_telemetry, parse_record

__all__ = [
    "CATEGORIES",
    "COST_BASELINE_USD",
    "DEFAULT_AGENT_TIERS",
    "DURATION_BASELINE_S",
    "RUN_SCHEMA_VERSION",
    "AgentOptions",
    "AgentOutcome",
    "AgentRun",
    "AttestationCheck",
    "Components",
    "TaskResult",
    "Telemetry",
    "attestation_checker",
    "bench_settings",
    "classify",
    "compare_runs",
    "compose",
    "failures_table",
    "glob_regex",
    "list_runs",
    "load_run",
    "load_tasks",
    "load_telemetry",
    "owned",
    "parse_record",
    "previous_run",
    "run_agent",
    "run_document",
    "runs_dir",
    "save_run",
    "score_tasks",
]
