"""Ollama's native chat API, over httpx: ``POST {base_url}/api/chat``.

base_url defaults to http://localhost:11434; no key (``api_key_env``, when set, is sent as
``Authorization: Bearer``, for an Ollama behind a proxy that wants one). The request is
``{model, messages, stream: false, options}``: Ollama streams NDJSON chunks unless told not to,
and one JSON answer is all a gate needs (the whole answer is scored, not its first token). The
sampling settings go in ``options`` (``num_predict`` is max_tokens); the answer is
``message.content``, ``done_reason`` its finish reason, ``prompt_eval_count`` /
``eval_count`` the tokens. Errors carry Ollama's ``{"error": ...}`` (a model not pulled: 404).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Final

from assay.models.providers._base import Completion, ProviderConfig, ProviderError
from assay.models.providers.openai import (
    ChatMessages,
    HTTPProvider,
    environment_value,
    token_count,
)

OLLAMA_URL: Final = "http://localhost:11434"


class OllamaProvider(HTTPProvider):
    path = "api/chat"

    def __init__(self, config: ProviderConfig):
        auth = {}
        if config.api_key_env:
            auth["Authorization"] = f"Bearer {environment_value(config.api_key_env, 'api_key_env')}"
        super().__init__(replace(config, base_url=config.base_url or OLLAMA_URL), auth)

    def _body(self, messages: ChatMessages) -> dict[str, Any]:
        config = self.config
        options: dict[str, Any] = {"temperature": config.temperature}
        optional: dict[str, Any] = {
            "num_predict": config.max_tokens,
            "top_p": config.top_p,
            "seed": config.seed,
            "stop": list(config.stop) if config.stop is not None else None,
            "presence_penalty": config.presence_penalty,
            "frequency_penalty": config.frequency_penalty,
        }
        options.update({k: v for k, v in optional.items() if v is not None})
        return {
            "model": config.model,
            "messages": [{"role": role, "content": text} for role, text in messages],
            "stream": False,
            "options": options,
        }

    async def complete(self, prompt: str) -> Completion:
        return await self.complete_messages((("user", prompt),))

    async def complete_messages(self, messages: ChatMessages) -> Completion:
        data = await self.post(self._body(messages))
        try:
            text = data["message"]["content"]
            if not isinstance(text, str):
                raise TypeError
        except (KeyError, TypeError):
            raise ProviderError("malformed response (no message.content)", retryable=True) from None
        finish = data.get("done_reason")
        return Completion(
            text,
            token_count(data.get("prompt_eval_count")),
            token_count(data.get("eval_count")),
            finish if isinstance(finish, str) else None,
        )
