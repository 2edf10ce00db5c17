"""Tier 2 similarity backends: lexical and offline (difflib, rapidfuzz)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from .errors import ConfigError

SimilarityFn = Callable[[str, str], float]
BACKENDS: Final[tuple[str, ...]] = ("none", "difflib", "rapidfuzz")


def _difflib(a: str, b: str) -> float:
    from difflib import SequenceMatcher

    return SequenceMatcher(None, a, b, autojunk=False).ratio()


def _rapidfuzz(a: str, b: str) -> float:
    from rapidfuzz import fuzz

    return float(fuzz.ratio(a, b)) / 100.0


def get_backend(name: str) -> SimilarityFn | None:
    """The similarity function for ``name`` (None for 'none').

    Raises:
        ConfigError: for an unknown backend name.
    """
    if name == "none":
        return None
    if name == "difflib":
        return _difflib
    if name == "rapidfuzz":
        return _rapidfuzz
    raise ConfigError(
        f"unknown similarity backend {name!r} (use one of {', '.join(BACKENDS)})",
        field="similarity",
    )
