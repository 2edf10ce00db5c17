"""Replicate's predictions API on loopback (see :mod:`tests.helpers.fake_vendor`):
``POST /v1/models/{owner}/{name}/predictions`` and ``POST /v1/predictions`` (with ``version``)
create a prediction; ``GET /v1/predictions/{id}`` reads it. With ``Prefer: wait`` a
prediction that finishes within the wait comes back done; one that takes ``polls`` reads more
comes back ``starting`` and goes ``processing`` then ``succeeded`` as it is polled. The model
name (or version) names the behaviour (:data:`MODELS`); errors are Replicate's problem details
``{title, detail, status}``.
"""

from __future__ import annotations

import itertools
import re
from typing import Any

from tests.helpers.fake_vendor import FakeVendor, Reply, Seen, echo_text, words

MODELS = {
    "echo": "done at once: output a list of string pieces of 'echo: <prompt>'",
    "slow": "done after `polls` GETs (starting, processing, ..., succeeded)",
    "text": "done at once, the output one string",
    "fails": "status failed, error 'CUDA out of memory'",
    "flaky-429": "the first `flaky_failures` creations: 429 problem details with Retry-After",
    "invalid": "422 problem details (an input the model's schema refuses)",
    "elsewhere": "slow, and urls.get names another host",
}
_CREATE_OFFICIAL = re.compile(r"/v1/models/([^/]+)/([^/]+)/predictions")
_GET = re.compile(r"/v1/predictions/([^/]+)")


def problem(status: int, title: str, detail: str) -> dict[str, Any]:
    return {"title": title, "detail": detail, "status": status}


class FakeReplicate(FakeVendor):
    """Attributes: ``token`` (the bearer every request must carry: None accepts any),
    ``polls`` (GETs before a ``slow`` prediction succeeds)."""

    name = "fake-replicate"

    def __init__(self) -> None:
        super().__init__()
        self.token: str | None = None
        self.polls = 2
        self.predictions: dict[str, dict[str, Any]] = {}
        self._ids = itertools.count(1)

    def answer(self, seen: Seen) -> Reply:
        if self.token is not None and seen.headers.get("authorization") != f"Bearer {self.token}":
            return Reply(
                401,
                problem(401, "Unauthenticated", "You did not pass a valid authentication token"),
            )
        official, got = _CREATE_OFFICIAL.fullmatch(seen.path), _GET.fullmatch(seen.path)
        if seen.method == "POST" and official:
            return self._create(official.group(2), seen)
        if seen.method == "POST" and seen.path == "/v1/predictions":
            return self._create(str((seen.json or {}).get("version")), seen)
        if seen.method == "GET" and got and got.group(1) in self.predictions:
            return Reply(200, self._advance(self.predictions[got.group(1)]))
        return Reply(404, problem(404, "Not found", f"no route {seen.method} {seen.path}"))

    def _create(self, model: str, seen: Seen) -> Reply:
        inputs = (seen.json or {}).get("input")
        if not isinstance(inputs, dict) or not isinstance(inputs.get("prompt"), str):
            return Reply(422, problem(422, "Input validation failed", "input.prompt is required"))
        if model == "flaky-429" and self.nth(model) <= self.flaky_failures:
            return Reply(
                429,
                problem(429, "Too Many Requests", "Request was throttled."),
                headers=self.retry_headers(),
            )
        if model == "invalid":
            return Reply(
                422,
                problem(
                    422, "Input validation failed", "input.top_k: Extra inputs are not permitted"
                ),
            )
        ident = f"p{next(self._ids)}"
        host = "http://api.elsewhere.invalid" if model == "elsewhere" else self.url
        text = echo_text(inputs["prompt"])
        prediction: dict[str, Any] = {
            "id": ident,
            "model": model,
            "input": inputs,
            "status": "starting",
            "output": None,
            "error": None,
            "urls": {
                "get": f"{host}/v1/predictions/{ident}",
                "cancel": f"{host}/v1/predictions/{ident}/cancel",
            },
            "_text": text,
            "_left": self.polls if model in ("slow", "elsewhere") else 0,
        }
        self.predictions[ident] = prediction
        if prediction["_left"] == 0:
            self._finish(prediction)
        return Reply(201, _public(prediction))

    def _advance(self, prediction: dict[str, Any]) -> dict[str, Any]:
        if prediction["status"] in ("starting", "processing"):
            prediction["_left"] -= 1
            prediction["status"] = "processing"
            if prediction["_left"] <= 0:
                self._finish(prediction)
        return _public(prediction)

    def _finish(self, prediction: dict[str, Any]) -> None:
        text = prediction["_text"]
        if prediction["model"] == "fails":
            prediction.update(status="failed", error="CUDA out of memory")
            return
        pieces = [p + " " for p in text.split(" ")]
        pieces[-1] = pieces[-1][:-1]
        output: Any = text if prediction["model"] == "text" else pieces
        metrics = {
            "input_token_count": words(prediction["input"]["prompt"]),
            "output_token_count": words(text),
            "predict_time": 0.01,
        }
        prediction.update(status="succeeded", output=output, metrics=metrics)


def _public(prediction: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in prediction.items() if not k.startswith("_")}
