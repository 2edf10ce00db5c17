"""Prompt-candidate comparison: run N prompt variants over the same items, score, rank."""

from assay.comparison._abort import AbortController, AbortError, AbortSignal
from assay.comparison._evaluate import (
    evaluate_prompt_candidates,
    evaluate_prompt_candidates_sync,
)
from assay.comparison._scorer import evaluate_deterministic_scorer
from assay.comparison._types import UNSET, EvaluationItem, PromptCandidate

__all__ = [
    "UNSET",
    "AbortController",
    "AbortError",
    "AbortSignal",
    "EvaluationItem",
    "PromptCandidate",
    "evaluate_deterministic_scorer",
    "evaluate_prompt_candidates",
    "evaluate_prompt_candidates_sync",
]
