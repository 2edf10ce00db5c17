"""Plugins exercised by assay's tests (tests/test_plugins.py)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from assay.models.providers import Completion, ProviderConfig
from assay.views._formats import RenderContext


def ends_with(output: str, value: Any) -> bool | tuple[bool, str]:
    """Passes when the output ends with ``value``; says what it ended with otherwise."""
    if output.endswith(str(value)):
        return True
    return False, f"output ends with {output[-1:]!r}, not {value!r}"


def explodes(output: str, value: Any) -> bool:
    raise RuntimeError("kaboom")


def bad_result(output: str, value: Any) -> Any:
    return "yes"  # truthy, but not a verdict


def always_passes(output: str, value: Any) -> bool:
    return True


class UpperProvider:
    """Answers with the prompt upper-cased."""

    def __init__(self, config: ProviderConfig):
        self.config = config

    async def complete(self, prompt: str) -> Completion:
        return Completion(prompt.upper(), input_tokens=1, output_tokens=1)

    async def aclose(self) -> None:
        return None


def same_length() -> Callable[[str, str], float]:
    """A similarity backend factory: 1.0 for texts of equal length, less the more they differ."""

    def score(a: str, b: str) -> float:
        longest = max(len(a), len(b), 1)
        return 1.0 - abs(len(a) - len(b)) / longest

    return score


def render_count(document: Mapping[str, Any], context: RenderContext | None) -> str:
    view = context.view if context is not None else "none"
    return f"{view}: {len(document.get('results', []))} results\n"
