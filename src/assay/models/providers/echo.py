"""The echo provider: returns the rendered prompt (for tests and demos)."""

from __future__ import annotations

from assay.models.providers._base import Completion, ProviderConfig


class EchoProvider:
    def __init__(self, config: ProviderConfig):
        self.config = config

    async def complete(self, prompt: str) -> Completion:
        words = len(prompt.split())
        return Completion(prompt, input_tokens=words, output_tokens=words)

    async def aclose(self) -> None:
        return None
