"""The provider interface: one async call, prompt in, completion out."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Protocol

# The official endpoints, and the key variable read when one of them is used without an
# ``api_key_env`` (a key is only ever sent to its own vendor's endpoint unasked).
DEFAULT_BASE_URLS = {
    "openai": "https://api.openai.com/v1",
    "anthropic": "https://api.anthropic.com",
    # The OpenAI-compatible vendors (served by the openai provider), as each documents its
    # chat-completions root.
    "openrouter": "https://openrouter.ai/api/v1",
    "perplexity": "https://api.perplexity.ai",
    "groq": "https://api.groq.com/openai/v1",
    "mistral": "https://api.mistral.ai/v1",
    "cerebras": "https://api.cerebras.ai/v1",
    "together": "https://api.together.xyz/v1",
    "fireworks": "https://api.fireworks.ai/inference/v1",
    "deepseek": "https://api.deepseek.com",
    # Local servers at their documented default address: no key variable is read for them.
    "vllm": "http://localhost:8000/v1",
    "ollama-openai": "http://localhost:11434/v1",
}
DEFAULT_KEY_ENVS = {
    "openai": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
    "openrouter": "OPENROUTER_API_KEY",
    "perplexity": "PERPLEXITY_API_KEY",
    "groq": "GROQ_API_KEY",
    "mistral": "MISTRAL_API_KEY",
    "cerebras": "CEREBRAS_API_KEY",
    "together": "TOGETHER_API_KEY",
    "fireworks": "FIREWORKS_API_KEY",
    "deepseek": "DEEPSEEK_API_KEY",
    "azure": "AZURE_OPENAI_API_KEY",
}
# Azure OpenAI has no endpoint of its own (each resource has one): its key variable is read
# unasked only for a base_url on these hosts, and this api-version is sent when none is set
# (the latest GA version of the data-plane inference API).
AZURE_HOSTS = (".openai.azure.com", ".cognitiveservices.azure.com", ".services.ai.azure.com")
AZURE_DEFAULT_API_VERSION = "2024-10-21"
# The Messages API requires max_tokens: this one when the config gives none.
ANTHROPIC_DEFAULT_MAX_TOKENS = 1024

# Sampling and output settings: part of the cache identity when set (they change outputs),
# absent from it when not (so the keys of configs without them never change).
SAMPLING_SETTINGS = (
    "top_p",
    "seed",
    "stop",
    "response_format",
    "presence_penalty",
    "frequency_penalty",
)

# Where a call goes and what it sends, for the providers that have them: part of the cache
# identity when set, absent when not (``profile`` is not: it picks credentials, not answers).
ROUTING_SETTINGS = (
    "deployment",
    "api_version",
    "project",
    "region",
    "endpoint",
    "payload",
    "url",
    "method",
    "body",
    "response_path",
    "transform_response",
    "config",
)


@dataclass(frozen=True, slots=True)
class ProviderConfig:
    """Settings of one provider (a candidate may override any of them).

    Attributes:
        type: one of ``PROVIDER_TYPES`` (assay.models.providers: openai and its presets,
            azure, anthropic, the native cloud and local APIs, http, command, python, echo),
            or a plugin's ``pkg/name``.
        model: the model name sent to the provider (part of the cache key).
        base_url: endpoint root: openai ``.../v1`` (default https://api.openai.com/v1),
            anthropic the host (default https://api.anthropic.com); each type's default is in
            DEFAULT_BASE_URLS or its module.
        api_key_env: the environment variable holding the API key (optional for local
            servers); on a vendor's default endpoint it defaults to the vendor's variable
            (DEFAULT_KEY_ENVS: OPENAI_API_KEY, ANTHROPIC_API_KEY, GROQ_API_KEY, ...).
        max_concurrency: calls in flight at once for this provider.
        timeout_s: per-call timeout.
        max_retries: retries after the first attempt (429, 5xx, timeouts; never other 4xx).
        temperature: sampling temperature (part of the cache key).
        max_tokens: completion length limit, when set (anthropic: 1024 when not set).
        top_p: nucleus sampling, 0 to 1.
        seed: the sampling seed (openai).
        stop: stop sequences (anthropic's ``stop_sequences``).
        response_format: openai's ``response_format``, as its canonical JSON text.
        presence_penalty / frequency_penalty: openai's penalties, -2 to 2.
        headers: static, non-secret HTTP headers, as sorted (name, value) pairs.
        header_env: HTTP headers whose value is read from the environment, as sorted
            (name, variable) pairs. Neither kind of header is part of the cache identity.
        command: the shell command of the command provider (reads the prompt on stdin).
        function: ``module:function`` of the python provider.
        cost_per_1k_input / cost_per_1k_output: USD per 1,000 tokens, for cost accounting.
        deployment / api_version: azure's deployment name and ``api-version`` query value.
        project / region: the cloud project (vertex) and region (vertex, bedrock, sagemaker).
        profile: the AWS profile whose credentials sign bedrock and sagemaker calls.
        endpoint: the sagemaker endpoint name.
        payload: the request and answer shape of a sagemaker endpoint.
        url / method / body / response_path / transform_response: the http provider's request
            (``body`` a template as its canonical JSON text) and where its answer is read.
        config: a promptfoo-style python provider's ``options["config"]`` mapping, as its
            canonical JSON text.
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
    top_p: float | None = None
    seed: int | None = None
    stop: tuple[str, ...] | None = None
    response_format: str | None = None
    presence_penalty: float | None = None
    frequency_penalty: float | None = None
    headers: tuple[tuple[str, str], ...] = ()
    header_env: tuple[tuple[str, str], ...] = ()
    command: str | None = None
    function: str | None = None
    cost_per_1k_input: float = 0.0
    cost_per_1k_output: float = 0.0
    deployment: str | None = None
    api_version: str | None = None
    project: str | None = None
    region: str | None = None
    profile: str | None = None
    endpoint: str | None = None
    payload: str | None = None
    url: str | None = None
    method: str | None = None
    body: str | None = None
    response_path: str | None = None
    transform_response: str | None = None
    config: str | None = None

    def __post_init__(self) -> None:
        # The defaults that depend on the type, filled here so that a config written with
        # them and one without are the same config (and the same cache entries).
        default_url = DEFAULT_BASE_URLS.get(self.type)
        if default_url is not None:
            if not self.base_url:
                object.__setattr__(self, "base_url", default_url)
            if self.api_key_env is None and self.base_url.rstrip("/") == default_url:
                object.__setattr__(self, "api_key_env", DEFAULT_KEY_ENVS.get(self.type))
        if self.type == "azure":
            if self.api_key_env is None and _is_azure_endpoint(self.base_url):
                object.__setattr__(self, "api_key_env", DEFAULT_KEY_ENVS["azure"])
            if self.api_version is None:
                object.__setattr__(self, "api_version", AZURE_DEFAULT_API_VERSION)
        if self.type == "anthropic" and self.max_tokens is None:
            object.__setattr__(self, "max_tokens", ANTHROPIC_DEFAULT_MAX_TOKENS)

    def response_format_value(self) -> Any:
        """``response_format`` as the JSON value to send (None when not set)."""
        return None if self.response_format is None else json.loads(self.response_format)

    def cache_identity(self) -> dict[str, Any]:
        """What makes two calls interchangeable (never secrets, never headers, never
        concurrency knobs)."""
        names = ("type", "model", "base_url", "temperature", "max_tokens", "command", "function")
        identity: dict[str, Any] = {name: getattr(self, name) for name in names}
        for name in (*SAMPLING_SETTINGS, *ROUTING_SETTINGS):
            value = getattr(self, name)
            if value is not None:
                identity[name] = list(value) if isinstance(value, tuple) else value
        return identity


def _is_azure_endpoint(url: str) -> bool:
    """Whether ``url`` is an https URL on one of Azure's OpenAI hosts."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        host = (parts.hostname or "").lower()
    except ValueError:
        return False
    return parts.scheme == "https" and host.endswith(AZURE_HOSTS)


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

    def __init__(self, message: str):
        super().__init__(message, retryable=True)


class Provider(Protocol):
    async def complete(self, prompt: str) -> Completion: ...

    async def aclose(self) -> None: ...
