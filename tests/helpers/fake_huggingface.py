"""Hugging Face's text-generation inference API on loopback (see
:mod:`tests.helpers.fake_vendor`): ``POST /models/{org}/{name}`` with ``{inputs, parameters}``,
``Authorization: Bearer TOKEN``. The model's name (after the org) names the behaviour
(:data:`MODELS`). Errors are the API's ``{"error": ...}`` (a loading model's 503 with
``estimated_time``); parameters TGI refuses (a temperature of 0) get its 422.
"""

from __future__ import annotations

import re

from tests.helpers.fake_vendor import FakeVendor, Reply, Seen, echo_text

MODELS = {
    "echo": "[{generated_text: 'echo: <inputs>'}] (the prompt too when return_full_text)",
    "loading": "the first `flaky_failures` requests: 503 'is currently loading' with "
    "estimated_time `estimated_time`, then echo",
    "flaky-429": "the first `flaky_failures` requests: 429 with Retry-After",
    "error-200": "200 with {error: ...} (the API's old habit)",
    "not-found": "404 {error: Model not found}",
}
_ROUTE = re.compile(r"/models/([^/]+)/([^/]+)")


class FakeHuggingFace(FakeVendor):
    """Attributes: ``token`` (the bearer every request must carry: None accepts any) and
    ``estimated_time`` (seconds, the loading 503's)."""

    name = "fake-huggingface"

    def __init__(self) -> None:
        super().__init__()
        self.token: str | None = None
        self.estimated_time = 0.0

    def answer(self, seen: Seen) -> Reply:
        route = _ROUTE.fullmatch(seen.path)
        if seen.method != "POST" or route is None:
            return Reply(404, {"error": "Not Found"})
        if self.token is not None and seen.headers.get("authorization") != f"Bearer {self.token}":
            return Reply(401, {"error": "Invalid credentials in Authorization header"})
        model = route.group(2)
        body = seen.json
        if not isinstance(body, dict) or not isinstance(body.get("inputs"), str):
            return Reply(
                422, {"error": "Failed to deserialize the JSON body", "error_type": "validation"}
            )
        parameters = body.get("parameters") or {}
        if parameters.get("temperature") == 0:
            message = "Input validation error: `temperature` must be strictly positive"
            return Reply(422, {"error": message, "error_type": "validation"})
        if model == "loading" and self.nth(model) <= self.flaky_failures:
            message = f"Model {route.group(1)}/{model} is currently loading"
            return Reply(503, {"error": message, "estimated_time": self.estimated_time})
        if model == "flaky-429" and self.nth(model) <= self.flaky_failures:
            return Reply(429, {"error": "Rate limit reached"}, headers=self.retry_headers())
        if model == "error-200":
            return Reply(200, {"error": "scripted error in a 200"})
        if model == "not-found":
            return Reply(404, {"error": f"Model {route.group(1)}/{model} not found"})
        text = echo_text(body["inputs"])
        if parameters.get("return_full_text", True):
            text = body["inputs"] + text
        return Reply(200, [{"generated_text": text}])
