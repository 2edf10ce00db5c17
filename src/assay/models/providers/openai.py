"""OpenAI-compatible chat completions over HTTP (OpenAI, Azure, vLLM, llama.cpp server, Ollama).

httpx is imported here only, so runs without this provider never pay for it. The HTTP part
(pooled clients, headers from the environment, status codes to retryable errors) is
:class:`HTTPProvider`, which the anthropic provider shares.
"""

from __future__ import annotations

import email.utils
import json
import os
import sys
import time
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from assay.models.providers._base import (
    Completion,
    ProviderConfig,
    ProviderError,
    ProviderTimeout,
    server_message,
)

# One chat message: (role, content), the role system, user or assistant.
ChatMessages = Sequence[tuple[str, str]]


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


class MissingVariableError(ValueError):
    """An environment variable a header needs is not set: the provider cannot start.
    ``setting`` names the field at fault for the runner's message."""

    def __init__(self, message: str, setting: str):
        super().__init__(message)
        self.setting = setting


def environment_value(variable: str, setting: str) -> str:
    """The value of ``variable``; its absence names ``setting`` (never a value)."""
    value = os.environ.get(variable)
    if not value:
        raise MissingVariableError(
            f"environment variable {variable} ({setting}) is not set", setting
        )
    return value


def token_count(value: Any) -> int:
    """A usage field as a count: a non-negative whole number, else 0 (usage is accounting,
    never a reason to fail a call)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return 0
    return value


def shown_url(url: str) -> str:
    """``url`` as an error message may show it: scheme, host, port and path, without a
    user:password part, a query or a fragment (where a key may be put by hand)."""
    from urllib.parse import urlsplit, urlunsplit

    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        if ":" in host:  # an IPv6 address keeps its brackets
            host = f"[{host}]"
        netloc = host if parts.port is None else f"{host}:{parts.port}"
    except ValueError:  # an unparseable port: show no more than the scheme
        return url.split(":", 1)[0] + "://…"
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


_POOL_SIZE = 8


class HTTPProvider:
    """POST JSON to one endpoint; status codes become retryable or final ProviderErrors, each
    keeping the server's own message. Subclasses build the body and read the answer."""

    path: ClassVar[str] = ""
    # Statuses with a name of their own in messages (e.g. anthropic's 529 overloaded).
    status_names: ClassVar[Mapping[int, str]] = {429: "rate limited"}

    def __init__(self, config: ProviderConfig, auth: dict[str, str]):
        # httpx's command-line client (httpx._main: rich, pygments and click, 50 ms of imports)
        # is never run here: None in sys.modules makes httpx's own `try: from ._main import
        # main` take its fallback, as when the CLI's extras are not installed.
        sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]
        import httpx

        from assay.models.providers._transport import KeepAliveTransport, environment_proxy

        headers = {"Content-Type": "application/json", **auth, **dict(config.headers)}
        for name, variable in config.header_env:  # read from the environment now
            headers[name] = environment_value(variable, f"header_env.{name}")
        self.config = config
        self._httpx = httpx
        # httpx's own transport (httpcore's pool) costs ~0.7 ms of CPU a request, and more with
        # the square of a pool's connections: assay's (_transport) carries direct connections,
        # one client for them all (bench/live_bench.py).
        width = max(1, config.max_concurrency)
        options: dict[str, Any] = {"transport": KeepAliveTransport(width)}
        shards = 1
        if environment_proxy():
            # httpx's transports speak to proxies: several small pools then, sharing one SSL
            # context (the CA bundle loaded once, not per client).
            shards = max(1, -(-width // _POOL_SIZE))
            per_pool = -(-width // shards)
            limits = httpx.Limits(max_connections=per_pool, max_keepalive_connections=per_pool)
            options = {"verify": httpx.create_ssl_context(), "limits": limits}
        self.clients = [
            httpx.AsyncClient(
                base_url=config.base_url.rstrip("/") + "/",
                headers=headers,
                timeout=httpx.Timeout(config.timeout_s),
                **options,
            )
            for _ in range(shards)
        ]
        self._busy = [0] * shards
        self._urls: dict[str, Any] = {}

    async def post(self, body: dict[str, Any], path: str | None = None) -> Any:
        """The response's JSON value (None for a body that is not JSON); a 429 or 5xx is a
        retryable ProviderError (with the server's Retry-After), another 4xx a final one.
        ``path`` (relative to base_url) defaults to the class's."""
        return await self.request("POST", self.path if path is None else path, body)

    async def request(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        """:meth:`post` for any method (``body`` None: no body), e.g. a GET that polls."""
        response = await self.send(method, path, json=body)
        try:
            return json.loads(response.content)
        except (ValueError, UnicodeDecodeError, RecursionError):
            return None  # the subclass reports what it did not find

    async def send(self, method: str, url: str, **options: Any) -> Any:
        """The httpx response to one request (``options`` as httpx takes them; ``url`` relative
        to base_url, or absolute: the http provider's), its status already turned into a
        ProviderError as :meth:`post` says."""
        httpx = self._httpx
        try:
            # The least busy pool, so no request queues behind a full one while another idles.
            shard = min(range(len(self.clients)), key=self._busy.__getitem__)
            self._busy[shard] += 1
            try:
                response = await self.clients[shard].request(method, self._url(url), **options)
            finally:
                self._busy[shard] -= 1
        except httpx.TimeoutException:
            raise ProviderTimeout(f"timed out after {self.config.timeout_s:g} s") from None
        except httpx.TransportError as exc:
            words = " ".join(str(exc).split())[:200]  # httpx's words: an OS or TLS error
            detail = f"{type(exc).__name__}: {words}" if words else type(exc).__name__
            where = shown_url(self.config.url or self.config.base_url)
            raise ProviderError(
                f"connection to {where} failed ({detail})", retryable=True
            ) from None
        status = response.status_code
        if status >= 400:
            said = self.error_message(response)
            detail = f": {said}" if said else ""
            retry = status == 429 or status >= 500
            what = self.status_names.get(status, "server error" if retry else "request rejected")
            after = self.retry_delay(response) if retry else None
            raise ProviderError(f"{what} ({status}){detail}", retryable=retry, retry_after=after)
        return response

    def _url(self, url: str) -> Any:
        """``url`` joined to base_url (an httpx.URL), as httpx joins it, parsed once: httpx
        parses a relative URL twice a request, 60 µs of CPU. A provider's few fixed paths are
        kept; any others (a poll's, per prediction) pass as they are."""
        found = self._urls.get(url)
        if found is None:
            if len(self._urls) >= 16:
                return url
            found = self._urls[url] = self.clients[0].build_request("GET", url).url
        return found

    # Hooks for a vendor whose error responses say more elsewhere (overridden, e.g., by the
    # AWS providers, which name the exception from its x-amzn-ErrorType header).
    def error_message(self, response: Any) -> str | None:
        """The server's message in an error ``response`` (an httpx.Response), on one line."""
        return server_message(response.content)

    def retry_delay(self, response: Any) -> float | None:
        """How long a retryable error ``response`` asks the client to wait (Retry-After)."""
        return retry_after_seconds(response.headers.get("retry-after"))

    async def aclose(self) -> None:
        for client in self.clients:
            await client.aclose()


class OpenAIProvider(HTTPProvider):
    path = "chat/completions"

    def __init__(self, config: ProviderConfig):
        auth = {}
        if config.api_key_env:
            auth["Authorization"] = f"Bearer {environment_value(config.api_key_env, 'api_key_env')}"
        super().__init__(config, auth)

    def _body(self, messages: ChatMessages) -> dict[str, Any]:
        config = self.config
        body: dict[str, Any] = {
            "model": config.model,
            "messages": [{"role": role, "content": content} for role, content in messages],
            "temperature": config.temperature,
        }
        optional: dict[str, Any] = {
            "max_tokens": config.max_tokens,
            "top_p": config.top_p,
            "seed": config.seed,
            "stop": list(config.stop) if config.stop is not None else None,
            "response_format": config.response_format_value(),
            "presence_penalty": config.presence_penalty,
            "frequency_penalty": config.frequency_penalty,
        }
        body.update({k: v for k, v in optional.items() if v is not None})
        return body

    async def complete(self, prompt: str) -> Completion:
        return await self.complete_messages((("user", prompt),))

    async def complete_messages(self, messages: ChatMessages) -> Completion:
        """One chat completion of ``messages`` sent as they are (system messages included)."""
        return read_chat_completion(await self.post(self._body(messages)))


def read_chat_completion(data: Any) -> Completion:
    """The answer of an OpenAI-style chat completion response (any OpenAI-compatible server,
    and a SageMaker endpoint with the openai payload)."""
    try:
        choice = data["choices"][0]
        text = choice["message"]["content"]
        if not isinstance(text, str):
            raise TypeError
    except (KeyError, IndexError, TypeError):
        raise ProviderError(
            "malformed response (no choices[0].message.content)", retryable=True
        ) from None
    usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
    finish = choice.get("finish_reason") if isinstance(choice, dict) else None
    return Completion(
        text,
        token_count(usage.get("prompt_tokens")),
        token_count(usage.get("completion_tokens")),
        finish if isinstance(finish, str) else None,
    )
