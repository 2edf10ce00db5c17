"""Calling models: providers, the bounded retrying runner, the output cache, prompt templates,
the candidates file and live outputs for the gate.

The gate, the judge and the prompt-comparison API all call models through these names. They are
resolved on first use (PEP 562): ``asyncio``, ``sqlite3`` and ``httpx`` load only when a run
really calls a model.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from assay._lazy import exports_by_module, lazy_exports

if TYPE_CHECKING:
    from assay.models._cache import (
        DamagedCacheError,
        OutputCache,
        default_cache_path,
        remove_cache_files,
    )
    from assay.models._calls import CALL_WATCHERS, Call, CallEnded, Outcome
    from assay.models._candidates_file import (
        CandidatesFile,
        LiveCandidate,
        load_candidates_file,
        provider_config,
        select_candidates,
        settings_refused_by,
    )
    from assay.models._live import LiveOutputs, generate_outputs
    from assay.models._pool import gather_or_cancel
    from assay.models._runner import RunStats, run_calls
    from assay.models._static import RawOutputs, load_outputs, read_outputs
    from assay.models._template import render
    from assay.models.providers import (
        SAMPLING_SETTINGS,
        Completion,
        Provider,
        ProviderConfig,
        ProviderError,
    )

_EXPORTS: Final = exports_by_module(
    {
        "_cache": "DamagedCacheError OutputCache default_cache_path remove_cache_files",
        "_calls": "CALL_WATCHERS Call CallEnded Outcome",
        "_candidates_file": (
            "CandidatesFile LiveCandidate load_candidates_file provider_config select_candidates "
            "settings_refused_by"
        ),
        "_live": "LiveOutputs generate_outputs",
        "_pool": "gather_or_cancel",
        "_runner": "RunStats run_calls",
        "_static": "RawOutputs load_outputs read_outputs",
        "_template": "render",
        "providers": "SAMPLING_SETTINGS Completion Provider ProviderConfig ProviderError",
    }
)

# Literal, so type checkers see the exports; a test checks it equals _EXPORTS' keys.
__all__ = [
    "CALL_WATCHERS",
    "SAMPLING_SETTINGS",
    "Call",
    "CallEnded",
    "CandidatesFile",
    "Completion",
    "DamagedCacheError",
    "LiveCandidate",
    "LiveOutputs",
    "Outcome",
    "OutputCache",
    "Provider",
    "ProviderConfig",
    "ProviderError",
    "RawOutputs",
    "RunStats",
    "default_cache_path",
    "gather_or_cancel",
    "generate_outputs",
    "load_candidates_file",
    "load_outputs",
    "provider_config",
    "read_outputs",
    "remove_cache_files",
    "render",
    "run_calls",
    "select_candidates",
    "settings_refused_by",
]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)
