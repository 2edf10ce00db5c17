"""Google's generateContent, natively over httpx: Gemini (AI Studio) and Vertex AI.

``gemini``: ``POST {base_url}/v1beta/models/{model}:generateContent``, base_url default
https://generativelanguage.googleapis.com, the key in ``x-goog-api-key`` (from
``api_key_env``; GEMINI_API_KEY on the default endpoint).

``vertex``: ``POST {base_url}/v1/projects/{project}/locations/{region}/publishers/google/models/
{model}:generateContent``, base_url default https://{region}-aiplatform.googleapis.com
(https://aiplatform.googleapis.com for region ``global``), with ``Authorization: Bearer`` an
OAuth access token. The token is read from ``api_key_env`` (VERTEX_ACCESS_TOKEN on the default
endpoint: ``export VERTEX_ACCESS_TOKEN=$(gcloud auth print-access-token)``; such a token lasts
about an hour); when that variable is not set and google-auth is installed
(``pip install 'assay[google]'``), Application Default Credentials are used and refreshed as
they expire. ``project`` defaults to GOOGLE_CLOUD_PROJECT (or the credentials' project),
``region`` to GOOGLE_CLOUD_LOCATION, else us-central1.

Both send the conversation as ``contents`` (assistant turns as role ``model``), system messages
as ``systemInstruction``, the sampling settings as ``generationConfig``; the answer is the text
parts of the first candidate (thought parts left out), ``finishReason`` its finish reason, and
``usageMetadata`` the tokens (thoughts counted as output: they are billed as output). Errors
carry Google's ``error.message``; a 429's RetryInfo ``retryDelay`` is honoured.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import replace
from typing import Any, Final
from urllib.parse import quote

import httpx  # this module is imported only when a google provider starts

from assay.models.providers._base import Completion, ProviderConfig, ProviderError
from assay.models.providers.openai import (
    ChatMessages,
    HTTPProvider,
    MissingVariableError,
    environment_value,
    retry_after_seconds,
    token_count,
)

GEMINI_URL: Final = "https://generativelanguage.googleapis.com"
GEMINI_KEY_ENV: Final = "GEMINI_API_KEY"
VERTEX_TOKEN_ENV: Final = "VERTEX_ACCESS_TOKEN"
VERTEX_DEFAULT_REGION: Final = "us-central1"
_SCOPE: Final = "https://www.googleapis.com/auth/cloud-platform"


def vertex_url(region: str) -> str:
    """Vertex AI's endpoint for ``region`` (the global endpoint has no region prefix)."""
    if region == "global":
        return "https://aiplatform.googleapis.com"
    return f"https://{region}-aiplatform.googleapis.com"


def _model_path(model: str) -> str:
    # "models/gemini-x" is how Google's own listings name a model: the same model.
    name = model[len("models/") :] if model.startswith("models/") else model
    return quote(name, safe="")


class _GenerateContent(HTTPProvider):
    """What Gemini and Vertex share: the generateContent request and answer (posted to
    ``model_path``, which names the model)."""

    model_path = ""

    def _body(self, messages: ChatMessages) -> dict[str, Any]:
        config = self.config
        system = [content for role, content in messages if role == "system"]
        body: dict[str, Any] = {
            "contents": [
                {"role": "model" if role == "assistant" else "user", "parts": [{"text": text}]}
                for role, text in messages
                if role != "system"
            ]
        }
        if system:
            body["systemInstruction"] = {"parts": [{"text": "\n\n".join(system)}]}
        generation: dict[str, Any] = {"temperature": config.temperature}
        optional: dict[str, Any] = {
            "maxOutputTokens": config.max_tokens,
            "topP": config.top_p,
            "seed": config.seed,
            "stopSequences": list(config.stop) if config.stop is not None else None,
            "presencePenalty": config.presence_penalty,
            "frequencyPenalty": config.frequency_penalty,
        }
        generation.update({k: v for k, v in optional.items() if v is not None})
        body["generationConfig"] = generation
        return body

    async def complete(self, prompt: str) -> Completion:
        return await self.complete_messages((("user", prompt),))

    async def complete_messages(self, messages: ChatMessages) -> Completion:
        data = await self.post(self._body(messages), self.model_path)
        return read_generate_content(data)

    def retry_delay(self, response: Any) -> float | None:
        """Retry-After, else the RetryInfo ``retryDelay`` ("30s") of Google's error details."""
        header = super().retry_delay(response)
        if header is not None:
            return header
        try:
            details = response.json()["error"]["details"]
            delays = [d["retryDelay"] for d in details if "retryDelay" in d]
        except (ValueError, KeyError, TypeError):
            return None
        if not delays or not isinstance(delays[0], str) or not delays[0].endswith("s"):
            return None
        return retry_after_seconds(delays[0][:-1])


def read_generate_content(data: Any) -> Completion:
    """The completion in a generateContent response."""
    if not isinstance(data, dict):
        raise ProviderError("malformed response (not a JSON object)", retryable=True)
    candidates = data.get("candidates")
    if not candidates:
        blocked = (data.get("promptFeedback") or {}).get("blockReason")
        if isinstance(blocked, str):
            raise ProviderError(f"the prompt was blocked ({blocked})", retryable=False)
        raise ProviderError("malformed response (no candidates)", retryable=True)
    first = candidates[0] if isinstance(candidates, list) else None
    if not isinstance(first, dict):
        raise ProviderError("malformed response (no candidates)", retryable=True)
    content = first.get("content") or {}
    parts = (content.get("parts") or []) if isinstance(content, dict) else None
    if not isinstance(parts, list) or not all(isinstance(p, dict) for p in parts):
        raise ProviderError("malformed response (no content parts)", retryable=True)
    texts = [p.get("text") for p in parts if "text" in p and not p.get("thought")]
    if not all(isinstance(text, str) for text in texts):
        raise ProviderError("malformed response (a text part that is not a string)", retryable=True)
    usage = data.get("usageMetadata")
    usage = usage if isinstance(usage, dict) else {}
    finish = first.get("finishReason")
    return Completion(
        "".join(texts),
        token_count(usage.get("promptTokenCount")),
        token_count(usage.get("candidatesTokenCount"))
        + token_count(usage.get("thoughtsTokenCount")),
        finish if isinstance(finish, str) else None,
    )


class GeminiProvider(_GenerateContent):
    def __init__(self, config: ProviderConfig):
        base_url = config.base_url or GEMINI_URL
        key_env = config.api_key_env
        if key_env is None and base_url.rstrip("/") == GEMINI_URL:
            key_env = GEMINI_KEY_ENV  # the Google key goes to Google's endpoint only, unasked
        auth = {"x-goog-api-key": environment_value(key_env, "api_key_env")} if key_env else {}
        self.model_path = f"v1beta/models/{_model_path(config.model)}:generateContent"
        super().__init__(replace(config, base_url=base_url), auth)


class VertexProvider(_GenerateContent):
    def __init__(self, config: ProviderConfig):
        region = config.region or os.environ.get("GOOGLE_CLOUD_LOCATION") or VERTEX_DEFAULT_REGION
        base_url = config.base_url or vertex_url(region)
        token, credentials = _vertex_token(config, base_url.rstrip("/") == vertex_url(region))
        project = config.project or os.environ.get("GOOGLE_CLOUD_PROJECT") or credentials[1]
        if not project:
            raise MissingVariableError(
                "no Google Cloud project: set 'project' (or GOOGLE_CLOUD_PROJECT)", "project"
            )
        self.model_path = (
            f"v1/projects/{quote(project, safe='')}/locations/{quote(region, safe='')}"
            f"/publishers/google/models/{_model_path(config.model)}:generateContent"
        )
        auth = {"Authorization": f"Bearer {token}"} if token else {}
        super().__init__(replace(config, base_url=base_url), auth)
        if credentials[0] is not None:
            refresher = GoogleCredentialsAuth(credentials[0])
            for client in self.clients:
                client.auth = refresher


def _vertex_token(config: ProviderConfig, default_endpoint: bool) -> tuple[str | None, Any]:
    """The access token (from ``api_key_env``, or VERTEX_ACCESS_TOKEN on the default
    endpoint), else google-auth's Application Default Credentials and their project."""
    key_env = config.api_key_env
    if key_env is not None:
        return environment_value(key_env, "api_key_env"), (None, None)
    if not default_endpoint:
        return None, (None, None)  # another endpoint: no Google credential unless asked
    token = os.environ.get(VERTEX_TOKEN_ENV)
    if token:
        return token, (None, None)
    try:
        import google.auth
        import google.auth.exceptions
    except ImportError:
        raise MissingVariableError(
            f"no Vertex AI access token: set {VERTEX_TOKEN_ENV} (export {VERTEX_TOKEN_ENV}="
            "$(gcloud auth print-access-token)), name another variable in api_key_env, or "
            "pip install 'assay[google]' to use Application Default Credentials",
            "api_key_env",
        ) from None
    try:
        return None, google.auth.default(scopes=[_SCOPE])
    except google.auth.exceptions.GoogleAuthError as exc:
        raise MissingVariableError(
            f"no Vertex AI access token: {VERTEX_TOKEN_ENV} is not set and Application Default "
            f"Credentials failed ({' '.join(str(exc).split())[:200]})",
            "api_key_env",
        ) from None


class GoogleCredentialsAuth(httpx.Auth):
    """Bearer the credentials' token, refreshed (in a thread: google-auth blocks) when it is
    missing or expired; one refresh at a time however many calls wait for it."""

    def __init__(self, credentials: Any):
        self.credentials = credentials
        self.lock = asyncio.Lock()

    async def async_auth_flow(self, request: httpx.Request) -> Any:
        async with self.lock:
            if not self.credentials.valid:
                await asyncio.to_thread(self._refresh)
        # google-auth's own headers: the bearer, and x-goog-user-project when the credentials
        # name a quota project (user credentials need it to bill the right project).
        headers: dict[str, str] = {}
        self.credentials.apply(headers)
        request.headers.update(headers)
        yield request

    def _refresh(self) -> None:
        import google.auth.exceptions
        import google.auth.transport.requests

        try:
            self.credentials.refresh(google.auth.transport.requests.Request())
        except google.auth.exceptions.GoogleAuthError as exc:
            words = " ".join(str(exc).split())[:200]
            raise ProviderError(
                f"refreshing the Google access token failed ({words})", retryable=True
            ) from None
