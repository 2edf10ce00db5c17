"""The Anthropic Messages API over HTTP: ``POST {base_url}/v1/messages``.

The key goes in ``x-api-key`` (from ``api_key_env``; ANTHROPIC_API_KEY on the default
endpoint), with ``anthropic-version: 2023-06-01``. System messages become the top-level
``system`` field; the answer is the concatenation of the ``text`` blocks of ``content``, and
``stop_reason`` is the completion's finish reason. 429, 5xx and 529 (overloaded) are retried,
honouring ``retry-after``; other 4xx are not. httpx is imported only when this provider starts.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Final

from assay.models.providers._base import Completion, ProviderConfig, ProviderError
from assay.models.providers.openai import (
    ChatMessages,
    HTTPProvider,
    environment_value,
    token_count,
)

ANTHROPIC_VERSION: Final = "2023-06-01"


class AnthropicProvider(HTTPProvider):
    path: ClassVar[str] = "v1/messages"
    status_names: ClassVar[Mapping[int, str]] = {**HTTPProvider.status_names, 529: "overloaded"}

    def __init__(self, config: ProviderConfig):
        auth = {"anthropic-version": ANTHROPIC_VERSION}
        if config.api_key_env:
            auth["x-api-key"] = environment_value(config.api_key_env, "api_key_env")
        super().__init__(config, auth)

    def _body(self, messages: ChatMessages) -> dict[str, Any]:
        config = self.config
        system = [content for role, content in messages if role == "system"]
        body: dict[str, Any] = {
            "model": config.model,
            "max_tokens": config.max_tokens,
            "messages": [
                {"role": role, "content": content} for role, content in messages if role != "system"
            ],
            "temperature": config.temperature,
        }
        if system:
            body["system"] = "\n\n".join(system)
        if config.top_p is not None:
            body["top_p"] = config.top_p
        if config.stop is not None:
            body["stop_sequences"] = list(config.stop)
        return body

    async def complete(self, prompt: str) -> Completion:
        return await self.complete_messages((("user", prompt),))

    async def complete_messages(self, messages: ChatMessages) -> Completion:
        """One message of ``messages`` (system ones sent as the ``system`` field)."""
        data = await self.post(self._body(messages))
        blocks = data.get("content") if isinstance(data, dict) else None
        if not isinstance(blocks, list):
            raise ProviderError("malformed response (no content list)", retryable=True)
        texts: list[Any] = [
            b.get("text") for b in blocks if isinstance(b, dict) and b.get("type") == "text"
        ]
        if not all(isinstance(text, str) for text in texts):
            raise ProviderError("malformed response (no content list)", retryable=True)
        usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
        stop = data.get("stop_reason")
        return Completion(
            "".join(texts),
            token_count(usage.get("input_tokens")),
            token_count(usage.get("output_tokens")),
            stop if isinstance(stop, str) else None,
        )
