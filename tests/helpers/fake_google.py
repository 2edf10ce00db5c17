"""Google's generateContent on loopback (see :mod:`tests.helpers.fake_vendor`), for the gemini
and vertex provider tests. It serves both URL forms:

- Gemini: ``POST /v1beta/models/{model}:generateContent``, the key in ``x-goog-api-key``;
- Vertex: ``POST /v1/projects/{p}/locations/{r}/publishers/google/models/{model}:generateContent``,
  ``Authorization: Bearer TOKEN``;

and ``POST /token``, an OAuth token endpoint (for google-auth's refresh of an authorized-user
credential). The model in the path names the behaviour (:data:`MODELS`); the answer echoes
the last ``contents`` text. Errors are Google's ``{"error": {code, message, status}}``; a
request whose key or token differs from ``api_key`` / ``token`` gets Google's 401/403 body.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import parse_qs, unquote

from tests.helpers.fake_vendor import FakeVendor, Reply, Seen, echo_text, words

MODELS = {
    "echo": "'echo: <last text>', usage = word counts, finishReason STOP",
    "thinking": "a thought part then the answer, thoughtsTokenCount 5",
    "max-tokens": "finishReason MAX_TOKENS",
    "flaky-429": "the first `flaky_failures` requests per prompt: 429 RESOURCE_EXHAUSTED with "
    "a RetryInfo retryDelay (no Retry-After header), then echo",
    "always-503": "503 UNAVAILABLE every time",
    "bad-request": "400 INVALID_ARGUMENT every time",
    "blocked": "no candidates, promptFeedback.blockReason SAFETY",
    "malformed": "200 with a body that is not JSON",
}
_GEMINI = re.compile(r"/v1beta/models/([^/]+):generateContent")
_VERTEX = re.compile(
    r"/v1/projects/([^/]+)/locations/([^/]+)/publishers/google/models/([^/]+):generateContent"
)


def google_error(code: int, status: str, message: str, **extra: Any) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "status": status, **extra}}


class FakeGoogle(FakeVendor):
    """Attributes: ``api_key`` (Gemini's x-goog-api-key) and ``token`` (Vertex's bearer), each
    None to accept any; ``issued`` the access token /token hands out; ``retry_delay`` the
    RetryInfo of the scripted 429s."""

    name = "fake-google"

    def __init__(self) -> None:
        super().__init__()
        self.api_key: str | None = None
        self.token: str | None = None
        self.issued = "ya29.fake-refreshed-token"
        self.retry_delay = "0s"

    def answer(self, seen: Seen) -> Reply:
        if seen.path == "/token" and seen.method == "POST":
            return self._token(seen)
        gemini, vertex = _GEMINI.fullmatch(seen.path), _VERTEX.fullmatch(seen.path)
        if seen.method != "POST" or not (gemini or vertex):
            return Reply(404, google_error(404, "NOT_FOUND", f"no route {seen.path}"))
        if gemini:
            if self.api_key is not None and seen.headers.get("x-goog-api-key") != self.api_key:
                message = "API key not valid. Please pass a valid API key."
                return Reply(400, google_error(400, "INVALID_ARGUMENT", message))
            model = unquote(gemini.group(1))
        else:
            assert vertex is not None
            if self.token is not None and seen.headers.get("authorization") != (
                f"Bearer {self.token}"
            ):
                message = "Request had invalid authentication credentials."
                return Reply(401, google_error(401, "UNAUTHENTICATED", message))
            model = unquote(vertex.group(3))
        try:
            prompt = seen.json["contents"][-1]["parts"][0]["text"]
        except (ValueError, KeyError, IndexError, TypeError):
            return Reply(400, google_error(400, "INVALID_ARGUMENT", "contents is required"))
        return self._generate(model, str(prompt))

    def _token(self, seen: Seen) -> Reply:
        form = parse_qs(seen.raw.decode())
        if form.get("grant_type") != ["refresh_token"]:
            return Reply(400, {"error": "unsupported_grant_type"})
        return Reply(200, {"access_token": self.issued, "expires_in": 3600, "token_type": "Bearer"})

    def _generate(self, model: str, prompt: str) -> Reply:
        if model == "flaky-429" and self.nth(f"{model}/{prompt}") <= self.flaky_failures:
            retry = {"@type": "type.googleapis.com/google.rpc.RetryInfo"}
            retry["retryDelay"] = self.retry_delay
            body = google_error(429, "RESOURCE_EXHAUSTED", "Quota exceeded", details=[retry])
            return Reply(429, body)
        if model == "always-503":
            return Reply(503, google_error(503, "UNAVAILABLE", "The model is overloaded."))
        if model == "bad-request":
            return Reply(400, google_error(400, "INVALID_ARGUMENT", "scripted 400"))
        if model == "malformed":
            return Reply(200, raw=b'{"candidates": [{"content": ')
        if model == "blocked":
            return Reply(200, {"promptFeedback": {"blockReason": "SAFETY"}})
        text = echo_text(prompt)
        parts: list[dict[str, Any]] = [{"text": text}]
        usage = {"promptTokenCount": words(prompt), "candidatesTokenCount": words(text)}
        if model == "thinking":
            parts = [{"text": "let me think", "thought": True}, {"text": text}]
            usage["thoughtsTokenCount"] = 5
        finish = "MAX_TOKENS" if model == "max-tokens" else "STOP"
        candidate = {"content": {"role": "model", "parts": parts}, "finishReason": finish}
        return Reply(200, {"candidates": [candidate], "usageMetadata": usage})
