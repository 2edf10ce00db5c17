"""Agent golden benchmark: telemetry, the composite score, the failure taxonomy, saved runs."""

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
from assay.agent._gate import AgentVerdict
from assay.agent._merge import merge_agent
from assay.agent._record import compare_runs, failures_table, run_document
from assay.agent._saved_runs import load_run, previous_run
from assay.agent._scoring import AGENT, AgentRun, AttestationCheck, score_tasks
from assay.agent._taxonomy import CATEGORIES, classify, glob_regex, owned
from assay.agent._telemetry import Telemetry, load_telemetry, parse_record
from assay.run_store import RUN_SCHEMA_VERSION, list_runs, runs_dir, save_run

__all__ = [
    "AGENT",
    "CATEGORIES",
    "COST_BASELINE_USD",
    "DURATION_BASELINE_S",
    "RUN_SCHEMA_VERSION",
    "AgentOptions",
    "AgentOutcome",
    "AgentRun",
    "AgentVerdict",
    "AttestationCheck",
    "Components",
    "Sandbox",
    "Telemetry",
    "attestation_checker",
    "classify",
    "compare_runs",
    "compose",
    "execute_agent",
    "failures_table",
    "glob_regex",
    "list_runs",
    "load_run",
    "load_tasks",
    "load_telemetry",
    "merge_agent",
    "owned",
    "parse_record",
    "previous_run",
    "run_agent",
    "run_document",
    "runs_dir",
    "save_run",
    "score_tasks",
]
