"""Ollama's native chat API on loopback (see :mod:`tests.helpers.fake_vendor`):
``POST /api/chat``. As Ollama does, it streams NDJSON (one ``{message: {content}, done: false}``
line per word, then a ``done: true`` line with ``done_reason`` and the counts) unless the
request says ``stream: false``, when it sends one JSON object. The model names the behaviour
(:data:`MODELS`); errors are Ollama's ``{"error": ...}``.
"""

from __future__ import annotations

import json
from typing import Any

from tests.helpers.fake_vendor import FakeVendor, Reply, Seen, echo_text, words

MODELS = {
    "echo": "'echo: <last message>', prompt_eval_count/eval_count = word counts, done_reason stop",
    "length": "done_reason length",
    "flaky-500": "the first `flaky_failures` requests: 500 {error}",
    "missing": "404 model not found (not pulled)",
}


class FakeOllama(FakeVendor):
    name = "fake-ollama"

    def answer(self, seen: Seen) -> Reply:
        if seen.method != "POST" or seen.path != "/api/chat":
            return Reply(404, raw=b"404 page not found", content_type="text/plain")
        try:
            body = seen.json
            model = str(body["model"])
            prompt = str(body["messages"][-1]["content"])
        except (ValueError, KeyError, IndexError, TypeError):
            return Reply(400, {"error": "invalid request"})
        if model == "missing":
            return Reply(404, {"error": f"model '{model}' not found, try pulling it first"})
        if model == "flaky-500" and self.nth(prompt) <= self.flaky_failures:
            return Reply(500, {"error": "llama runner process has terminated"})
        text = echo_text(prompt)
        final: dict[str, Any] = {
            "model": model,
            "created_at": "2026-01-01T00:00:00Z",
            "done": True,
            "done_reason": "length" if model == "length" else "stop",
            "prompt_eval_count": words(prompt),
            "eval_count": words(text),
        }
        if body.get("stream", True) is False:
            return Reply(200, {**final, "message": {"role": "assistant", "content": text}})
        pieces = text.split(" ")
        lines = [
            {
                "model": model,
                "message": {"role": "assistant", "content": piece + sep},
                "done": False,
            }
            for piece, sep in zip(pieces, [" "] * (len(pieces) - 1) + [""], strict=True)
        ]
        lines.append({**final, "message": {"role": "assistant", "content": ""}})
        chunks = [json.dumps(line).encode() + b"\n" for line in lines]
        return Reply(200, chunks=chunks, content_type="application/x-ndjson")
