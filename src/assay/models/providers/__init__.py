"""Model providers: one small module each, one interface (``complete(prompt)``).

The chat providers (openai, anthropic) also have ``complete_messages(messages)``, which sends
a candidate's ``system`` / ``messages`` natively; the runner calls it when a call carries
messages and the provider has it. Every other provider (command, python, echo, plugins) gets
the conversation flattened into one prompt (see ``assay.models._live.flatten_messages``).

Besides the built-in types, a ``pkg/name`` type is looked up among the installed packages'
``assay.providers`` entry points, each naming a class or factory ``(ProviderConfig) ->
Provider`` (see docs/plugins.md). A plugin provider is wrapped so that whatever it does wrong
is an error of the call or of the run, naming the plugin, never a crash.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

from assay.models.providers._base import (
    SAMPLING_SETTINGS,
    Completion,
    Provider,
    ProviderConfig,
    ProviderError,
    ProviderTimeout,
)
from assay.plugins import (
    PROVIDERS_GROUP,
    PluginError,
    builtins_or_plugin_text,
    entry_point_of,
    find_plugin,
    is_builtin_or_plugin,
)

# The built-in provider types, each with the module and class that serves it (imported only when
# a provider of that type starts): the one list every validator and message reads. A provider
# whose constructor takes the project root says so in _TAKES_ROOT.
_BUILTINS: Final = {
    "openai": "openai:OpenAIProvider",
    "anthropic": "anthropic:AnthropicProvider",
    "command": "command:CommandProvider",
    "python": "python:PythonProvider",
    "echo": "echo:EchoProvider",
    # The OpenAI-compatible vendors: the openai provider with the vendor's endpoint and key
    # variable as defaults (DEFAULT_BASE_URLS / DEFAULT_KEY_ENVS in _base.py).
    "openrouter": "openai:OpenAIProvider",
    "perplexity": "openai:OpenAIProvider",
    "groq": "openai:OpenAIProvider",
    "mistral": "compat:MistralProvider",
    "cerebras": "openai:OpenAIProvider",
    "together": "openai:OpenAIProvider",
    "fireworks": "openai:OpenAIProvider",
    "deepseek": "openai:OpenAIProvider",
    "vllm": "openai:OpenAIProvider",
    "ollama-openai": "openai:OpenAIProvider",
    "azure": "compat:AzureOpenAIProvider",
    "http": "http:HTTPEndpointProvider",
    # The native cloud and local APIs (httpx; the AWS ones sign with botocore, assay[aws]).
    "gemini": "google:GeminiProvider",
    "vertex": "google:VertexProvider",
    "bedrock": "aws:BedrockProvider",
    "sagemaker": "aws:SageMakerProvider",
    "huggingface": "huggingface:HuggingFaceProvider",
    "ollama": "ollama:OllamaProvider",
    "replicate": "replicate:ReplicateProvider",
}
_TAKES_ROOT: Final = frozenset({"python", "http"})
PROVIDER_TYPES: Final = tuple(_BUILTINS)
# The types that speak OpenAI's chat completions (their key goes in a header of their own:
# ``api-key`` for azure, ``Authorization: Bearer`` for the others).
OPENAI_COMPATIBLE_TYPES: Final = tuple(
    name for name, served_by in _BUILTINS.items() if served_by.startswith(("openai:", "compat:"))
)


def takes_context(config: ProviderConfig) -> bool:
    """Whether the provider is called with the golden (``complete_with_context(prompt,
    context)``, context as :func:`assay.models._live.prompt_context` makes it): the http
    provider (its body template sees the golden's vars) and a python provider written as
    promptfoo writes one (``file://provider.py``, called with ``context["vars"]``). Their cache
    key holds that context, so two goldens with one prompt never share an answer."""
    return config.type == "http" or (
        config.type == "python" and (config.function or "").startswith("file://")
    )


def is_known_provider_type(name: object) -> bool:
    """Whether ``name`` is a built-in provider type or an installed ``pkg/name`` plugin type."""
    return is_builtin_or_plugin(name, PROVIDER_TYPES, PROVIDERS_GROUP)


def known_provider_types_text() -> str:
    """The accepted types, for messages."""
    return builtins_or_plugin_text(PROVIDER_TYPES, "type")


def make_provider(config: ProviderConfig, *, root: Path | None = None) -> Provider:
    """Instantiate the provider for ``config.type`` (imports only that provider's module).

    ``root`` is the project root, where the python provider finds the module of its
    ``function`` (default: the working directory); the other providers have no use for it.

    Raises:
        ValueError: an unknown type or a setting the provider needs is missing; its
            ``setting`` attribute, when it has one, names the setting at fault.
        PluginError: a plugin type that cannot load, or whose factory fails.
    """
    served_by = _BUILTINS.get(config.type)
    if served_by is not None:
        import importlib

        module_name, class_name = served_by.split(":")
        module = importlib.import_module(f"assay.models.providers.{module_name}")
        provider_class = getattr(module, class_name)
        if config.type in _TAKES_ROOT:
            return provider_class(config, root)  # type: ignore[no-any-return]
        return provider_class(config)  # type: ignore[no-any-return]
    factory = find_plugin(PROVIDERS_GROUP, config.type)
    if factory is None:
        raise ValueError(
            f"unknown provider type {config.type!r} (use {known_provider_types_text()})"
        )
    where = f"plugin {config.type!r} (entry point {entry_point_of(PROVIDERS_GROUP, config.type)})"
    try:
        provider = factory(config)
    except Exception as exc:
        raise PluginError(f"{where} cannot start: {type(exc).__name__}: {exc}") from exc
    if not callable(getattr(provider, "complete", None)):
        raise PluginError(f"{where} made a {type(provider).__name__}, which has no complete()")
    return _PluginProvider(where, provider, config)


class _PluginProvider:
    """A plugin's provider behind the built-ins' guarantees.

    The runner only handles ProviderError: any other exception, a result that is not a
    Completion, or a call that outlives ``timeout_s`` becomes one, naming the plugin.
    """

    def __init__(self, where: str, inner: Any, config: ProviderConfig):
        self.where = where
        self.inner = inner
        self.config = config

    async def complete(self, prompt: str) -> Completion:
        import asyncio  # only a run that calls a model pays for asyncio

        try:
            result = await asyncio.wait_for(self.inner.complete(prompt), self.config.timeout_s)
        except TimeoutError:
            raise ProviderTimeout(
                f"{self.where} timed out after {self.config.timeout_s:g} s"
            ) from None
        except ProviderError:
            raise
        except Exception as exc:
            raise ProviderError(
                f"{self.where} raised {type(exc).__name__}: {exc}", retryable=False
            ) from None
        if not isinstance(result, Completion):
            raise ProviderError(
                f"{self.where} returned a {type(result).__name__}, not a Completion",
                retryable=False,
            )
        return result

    async def aclose(self) -> None:
        close = getattr(self.inner, "aclose", None)
        if close is None:
            return
        try:
            await close()
        except Exception as exc:
            raise PluginError(f"{self.where} failed to close: {type(exc).__name__}: {exc}") from exc


__all__ = [
    "OPENAI_COMPATIBLE_TYPES",
    "PROVIDER_TYPES",
    "SAMPLING_SETTINGS",
    "Completion",
    "Provider",
    "ProviderConfig",
    "ProviderError",
    "ProviderTimeout",
    "is_known_provider_type",
    "known_provider_types_text",
    "make_provider",
    "takes_context",
]
