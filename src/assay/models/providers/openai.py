"""OpenAI-compatible chat completions over HTTP (OpenAI, vLLM, llama.cpp server, Ollama).

httpx is imported here only, so runs without this provider never pay for it.
"""

from __future__ import annotations

import email.utils
import json
import os
import time
from typing import Any

from assay.models.providers._base import (
    Completion,
    ProviderConfig,
    ProviderError,
    ProviderTimeout,
    server_message,
)


def retry_after_seconds(value: str | None) -> float | None:
    """Retry-After as seconds (a number, or an HTTP date)."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


_POOL_SIZE = 8


class OpenAIProvider:
    def __init__(self, config: ProviderConfig):
        import httpx

        if not config.base_url:
            raise ValueError("the openai provider needs 'base_url'")
        headers = {"Content-Type": "application/json"}
        if config.api_key_env:
            key = os.environ.get(config.api_key_env)
            if not key:
                raise ValueError(
                    f"environment variable {config.api_key_env} (api_key_env) is not set"
                )
            headers["Authorization"] = f"Bearer {key}"
        self.config = config
        self._httpx = httpx
        # httpcore's pool does work per request that grows with the square of its connection
        # count (64 connections: ~10x slower than 8). Shard: several small pools, one shared SSL
        # context (loading the CA bundle once, not per client).
        width = max(1, config.max_concurrency)
        shards = max(1, -(-width // _POOL_SIZE))
        ssl_context = httpx.create_ssl_context()
        self.clients = [
            httpx.AsyncClient(
                base_url=config.base_url.rstrip("/") + "/",
                headers=headers,
                timeout=httpx.Timeout(config.timeout_s),
                verify=ssl_context,
                limits=httpx.Limits(
                    max_connections=-(-width // shards),
                    max_keepalive_connections=-(-width // shards),
                ),
            )
            for _ in range(shards)
        ]
        self._busy = [0] * shards

    def _body(self, prompt: str) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.config.model,
            "messages": [{"role": "user", "content": prompt}],
            "temperature": self.config.temperature,
        }
        if self.config.max_tokens is not None:
            body["max_tokens"] = self.config.max_tokens
        return body

    async def complete(self, prompt: str) -> Completion:
        httpx = self._httpx
        try:
            # The least busy pool, so no request queues behind a full one while another idles.
            shard = min(range(len(self.clients)), key=self._busy.__getitem__)
            self._busy[shard] += 1
            try:
                response = await self.clients[shard].post(
                    "chat/completions", json=self._body(prompt)
                )
            finally:
                self._busy[shard] -= 1
        except httpx.TimeoutException:
            raise ProviderTimeout(f"timed out after {self.config.timeout_s:g} s") from None
        except httpx.TransportError as exc:
            raise ProviderError(
                f"connection failed ({type(exc).__name__})", retryable=True
            ) from None
        status = response.status_code
        said = server_message(response.content)
        detail = f": {said}" if said else ""
        if status == 429:
            raise ProviderError(
                f"rate limited (429){detail}",
                retryable=True,
                retry_after=retry_after_seconds(response.headers.get("retry-after")),
            )
        if status >= 500:
            raise ProviderError(
                f"server error ({status}){detail}",
                retryable=True,
                retry_after=retry_after_seconds(response.headers.get("retry-after")),
            )
        if status >= 400:
            raise ProviderError(f"request rejected ({status}){detail}", retryable=False)
        try:
            data = json.loads(response.content)
            text = data["choices"][0]["message"]["content"]
            if not isinstance(text, str):
                raise TypeError
        except (ValueError, KeyError, IndexError, TypeError):
            raise ProviderError(
                "malformed response (no choices[0].message.content)", retryable=True
            ) from None
        usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
        finish = data["choices"][0].get("finish_reason")
        return Completion(
            text,
            int(usage.get("prompt_tokens", 0) or 0),
            int(usage.get("completion_tokens", 0) or 0),
            finish if isinstance(finish, str) else None,
        )

    async def aclose(self) -> None:
        for client in self.clients:
            await client.aclose()
