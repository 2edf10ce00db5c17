"""Model providers: one small module each, one interface (``complete(prompt)``)."""

from __future__ import annotations

from typing import Final

from assay.models.providers._base import Completion, Provider, ProviderConfig, ProviderError

PROVIDER_TYPES: Final = ("openai", "command", "python", "echo")


def make_provider(config: ProviderConfig) -> Provider:
    """Instantiate the provider for ``config.type`` (imports only that provider's module).

    Raises:
        ValueError: an unknown type or a setting the provider needs is missing.
    """
    if config.type == "openai":
        from assay.models.providers.openai import OpenAIProvider

        return OpenAIProvider(config)
    if config.type == "command":
        from assay.models.providers.command import CommandProvider

        return CommandProvider(config)
    if config.type == "python":
        from assay.models.providers.python import PythonProvider

        return PythonProvider(config)
    if config.type == "echo":
        from assay.models.providers.echo import EchoProvider

        return EchoProvider(config)
    raise ValueError(f"unknown provider type {config.type!r} (use {', '.join(PROVIDER_TYPES)})")


__all__ = [
    "PROVIDER_TYPES",
    "Completion",
    "Provider",
    "ProviderConfig",
    "ProviderError",
    "make_provider",
]
