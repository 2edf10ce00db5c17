"""The provider interface: one async call, prompt in, completion out."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol


@dataclass(frozen=True, slots=True)
class ProviderConfig:
    """Settings of one provider (a candidate may override any of them).

    Attributes:
        type: openai | command | python | echo.
        model: the model name sent to the provider (part of the cache key).
        base_url: OpenAI-compatible endpoint root, e.g. http://127.0.0.1:8000/v1.
        api_key_env: the environment variable holding the API key (optional for local servers).
        max_concurrency: calls in flight at once for this provider.
        timeout_s: per-call timeout.
        max_retries: retries after the first attempt (429, 5xx, timeouts; never other 4xx).
        temperature: sampling temperature (part of the cache key).
        max_tokens: completion length limit, when set.
        command: the shell command of the command provider (reads the prompt on stdin).
        function: ``module:function`` of the python provider.
        cost_per_1k_input / cost_per_1k_output: USD per 1,000 tokens, for cost accounting.
    """

    type: str
    model: str = ""
    base_url: str = ""
    api_key_env: str | None = None
    max_concurrency: int = 8
    timeout_s: float = 60.0
    max_retries: int = 4
    temperature: float = 0.0
    max_tokens: int | None = None
    command: str | None = None
    function: str | None = None
    cost_per_1k_input: float = 0.0
    cost_per_1k_output: float = 0.0

    def cache_identity(self) -> dict[str, Any]:
        """What makes two calls interchangeable (never secrets, never concurrency knobs)."""
        return {
            "type": self.type,
            "model": self.model,
            "base_url": self.base_url,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "command": self.command,
            "function": self.function,
        }


@dataclass(frozen=True, slots=True)
class Completion:
    text: str
    input_tokens: int = 0
    output_tokens: int = 0

    def cost(self, config: ProviderConfig) -> float:
        return (
            self.input_tokens * config.cost_per_1k_input
            + self.output_tokens * config.cost_per_1k_output
        ) / 1000


class ProviderError(Exception):
    """A failed call. ``retryable`` says whether trying again may help."""

    def __init__(self, message: str, *, retryable: bool, retry_after: float | None = None):
        super().__init__(message)
        self.retryable = retryable
        self.retry_after = retry_after


class Provider(Protocol):
    async def complete(self, prompt: str) -> Completion: ...

    async def aclose(self) -> None: ...
