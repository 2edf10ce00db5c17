"""Prompt-candidate comparison: run N prompt variants over the same items, score, rank."""

from assay.comparison._abort import AbortController, AbortError, AbortSignal
from assay.comparison._evaluate import (
    evaluate_prompt_candidates,
    evaluate_prompt_candidates_sync,
    rank_scores,
)
from assay.comparison._scorer import SCORER_TYPES, evaluate_deterministic_scorer
from assay.comparison._types import (
    UNSET,
    CandidateScore,
    EvaluationItem,
    ItemScore,
    PromptCandidate,
)

__all__ = [
    "SCORER_TYPES",
    "UNSET",
    "AbortController",
    "AbortError",
    "AbortSignal",
    "CandidateScore",
    "EvaluationItem",
    "ItemScore",
    "PromptCandidate",
    "evaluate_deterministic_scorer",
    "evaluate_prompt_candidates",
    "evaluate_prompt_candidates_sync",
    "rank_scores",
]
