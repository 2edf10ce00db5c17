"""The provider interface: one async call, prompt in, completion out."""

from __future__ import annotations

import json
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
    """One model answer.

    Attributes:
        text: the output.
        input_tokens / output_tokens: the usage the provider reported (0 when it did not).
        finish_reason: why generation stopped, as the provider says it (``stop``,
            ``length``, ``end_turn``, ``max_tokens``, ...), None when it does not say.
    """

    text: str
    input_tokens: int = 0
    output_tokens: int = 0
    finish_reason: str | None = None

    def cost(self, config: ProviderConfig) -> float:
        return (
            self.input_tokens * config.cost_per_1k_input
            + self.output_tokens * config.cost_per_1k_output
        ) / 1000


# Finish reasons that mean the answer was cut off by the length limit, per provider family.
TRUNCATED_REASONS = frozenset({"length", "max_tokens", "model_length"})


def server_message(body: bytes, limit: int = 300) -> str | None:
    """The error message a server put in its response body (OpenAI's and Anthropic's
    ``{"error": {"message": ...}}``, a plain ``{"message"}`` or ``{"error": "..."}``), on one
    line and trimmed; None when there is none. It is the server's text: it never holds our key
    (servers do not echo the Authorization header), and prompts are not quoted by these APIs."""
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None
    message: Any = None
    if isinstance(data, dict):
        error = data.get("error")
        if isinstance(error, dict):
            message = error.get("message")
        elif isinstance(error, str):
            message = error
        if message is None:
            message = data.get("message")
    if not isinstance(message, str) or not message.strip():
        return None
    line = " ".join(message.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


class ProviderError(Exception):
    """A failed call. ``retryable`` says whether trying again may help."""

    def __init__(self, message: str, *, retryable: bool, retry_after: float | None = None):
        super().__init__(message)
        self.retryable = retryable
        self.retry_after = retry_after


class ProviderTimeout(ProviderError):
    """A call that ran out of time. Retried at most once: a model that generates until the
    timeout (no ``max_tokens``, a missed stop token) would do it again on every retry."""

    def __init__(self, message: str, *, retry_after: float | None = None):
        super().__init__(message, retryable=True, retry_after=retry_after)


class Provider(Protocol):
    async def complete(self, prompt: str) -> Completion: ...

    async def aclose(self) -> None: ...
