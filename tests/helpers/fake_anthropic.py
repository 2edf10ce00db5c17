"""A small Anthropic Messages API server on loopback, for the anthropic provider tests.

Like :mod:`tests.helpers.fake_openai` (standard library only, 127.0.0.1 on a free port, a daemon
thread, bounded by ``lifetime_s``), it serves ``POST /v1/messages``. The request's ``model``
names the behaviour (see :data:`MODELS`); per-prompt behaviours key on the last message's
content. When ``api_key`` is set, a request whose ``x-api-key`` differs gets Anthropic's 401
error body. Everything the server saw is kept so tests can assert on it::

    with fake_anthropic() as server:
        server.url                      # "http://127.0.0.1:PORT" (the provider adds /v1/messages)
        server.seen[0].body             # the JSON body, server.seen[0].headers (lower-case names)
        server.count(model="echo")

Loopback only: it never binds or contacts any other address.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

HOST = "127.0.0.1"

#: The behaviours, by model name.
MODELS = {
    "echo": "answer 'echo: <last message>' in one text block, usage = word counts, end_turn",
    "blocks": "several content blocks: text, a tool_use, text (the text ones make the answer)",
    "max-tokens": "a cut-off answer: stop_reason max_tokens",
    "empty": "no content blocks at all (an empty answer)",
    "flaky-429": "first `flaky_failures` requests per prompt: 429 rate_limit_error, then echo",
    "flaky-529": "first `flaky_failures` requests per prompt: 529 overloaded_error, then echo",
    "always-529": "529 overloaded_error every time",
    "bad-request": "400 invalid_request_error every time",
    "malformed": "200 with a body that is not JSON",
    "no-content": "200 with valid JSON that has no content list",
}


def echo_text(prompt: str) -> str:
    return f"echo: {prompt}"


def error_body(kind: str, message: str) -> dict[str, Any]:
    """Anthropic's error shape."""
    return {"type": "error", "error": {"type": kind, "message": message}}


@dataclass
class Seen:
    """One request as the server received it."""

    model: str
    prompt: str
    body: dict[str, Any]
    headers: dict[str, str]
    path: str
    at: float = field(default_factory=time.monotonic)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = False
    request_queue_size = 256

    def __init__(self, owner: FakeAnthropic):
        self.owner = owner
        super().__init__((HOST, 0), _Handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that went away mid-response (a timeout, a cancelled run) is expected here.
        return


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    timeout = 30
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        return

    def send_json(self, status: int, value: Any, headers: dict[str, str] | None = None) -> None:
        self.send_raw(status, json.dumps(value).encode("utf-8"), headers)

    def send_raw(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        reason = self.responses.get(status, ("",))[0] if status != 529 else "Overloaded"
        lines = [
            f"HTTP/1.1 {status} {reason}",
            "Content-Type: application/json",
            f"Content-Length: {len(body)}",
            *(f"{name}: {value}" for name, value in (headers or {}).items()),
        ]
        try:
            self.wfile.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body)
            self.wfile.flush()
        except OSError:
            self.close_connection = True

    def do_POST(self) -> None:
        owner = self.server.owner
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path.rstrip("/") != "/v1/messages":
            self.send_json(404, error_body("not_found_error", f"no route {self.path}"))
            return
        try:
            body = json.loads(raw)
            model = str(body["model"])
            prompt = str(body["messages"][-1]["content"])
        except (ValueError, KeyError, IndexError, TypeError):
            self.send_json(400, error_body("invalid_request_error", "not a messages request"))
            return
        headers = {name.lower(): value for name, value in self.headers.items()}
        nth = owner._arrive(Seen(model, prompt, body, headers, self.path))
        owner._respond(self, model, prompt, nth, headers)


class FakeAnthropic:
    """The server. Use as a context manager (or ``start()`` / ``stop()``).

    Attributes (set them before or between requests to script the behaviours):
        api_key: the x-api-key every request must carry (None: any, or none, is accepted).
        flaky_failures: failing requests per prompt before success (flaky-429 / flaky-529).
        retry_after: the retry-after header sent with 429s and 529s (None: no header).
    """

    def __init__(self, lifetime_s: float = 600.0):
        self.lifetime_s = lifetime_s
        self.api_key: str | None = None
        self.flaky_failures = 2
        self.retry_after: str | None = "0"
        self.seen: list[Seen] = []
        self._per_prompt: Counter[tuple[str, str]] = Counter()
        self._lock = threading.Lock()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._timer: threading.Timer | None = None
        self._stopped = False

    @property
    def url(self) -> str:
        """The base_url for the anthropic provider: ``http://127.0.0.1:PORT``."""
        assert self._server is not None, "the server is not running"
        return f"http://{HOST}:{self._server.server_address[1]}"

    def start(self) -> FakeAnthropic:
        self._server = _Server(self)
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.01},
            name="fake-anthropic",
            daemon=True,
        )
        self._thread.start()
        self._timer = threading.Timer(self.lifetime_s, self.stop)
        self._timer.daemon = True
        self._timer.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket (idempotent)."""
        if self._stopped:
            return
        self._stopped = True
        if self._timer is not None and self._timer is not threading.current_thread():
            self._timer.cancel()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=10)

    def __enter__(self) -> FakeAnthropic:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def total(self) -> int:
        with self._lock:
            return len(self.seen)

    def count(self, model: str | None = None) -> int:
        with self._lock:
            return sum(1 for s in self.seen if model is None or s.model == model)

    def _arrive(self, seen: Seen) -> int:
        with self._lock:
            self.seen.append(seen)
            self._per_prompt[(seen.model, seen.prompt)] += 1
            return self._per_prompt[(seen.model, seen.prompt)]

    def _respond(
        self, handler: _Handler, model: str, prompt: str, nth: int, headers: dict[str, str]
    ) -> None:
        if self.api_key is not None and headers.get("x-api-key") != self.api_key:
            handler.send_json(401, error_body("authentication_error", "invalid x-api-key"))
            return
        retry = {"retry-after": self.retry_after} if self.retry_after is not None else {}
        if model == "flaky-429" and nth <= self.flaky_failures:
            handler.send_json(429, error_body("rate_limit_error", "scripted 429"), retry)
            return
        if model == "always-529" or (model == "flaky-529" and nth <= self.flaky_failures):
            handler.send_json(529, error_body("overloaded_error", "Overloaded"), retry)
            return
        if model == "bad-request":
            handler.send_json(400, error_body("invalid_request_error", "scripted 400"))
            return
        if model == "malformed":
            handler.send_raw(200, b'{"content": [{"type": "text", "text": "trunc')
            return
        if model == "no-content":
            handler.send_json(200, {"type": "message", "role": "assistant"})
            return
        text = echo_text(prompt)
        blocks: list[dict[str, Any]] = [{"type": "text", "text": text}]
        stop = "end_turn"
        if model == "blocks":
            blocks = [
                {"type": "text", "text": "first "},
                {"type": "tool_use", "id": "t1", "name": "lookup", "input": {}},
                {"type": "text", "text": "second"},
            ]
            text = "first second"
        elif model == "max-tokens":
            stop = "max_tokens"
        elif model == "empty":
            blocks, text = [], ""
        handler.send_json(
            200,
            {
                "id": "msg_fake",
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": blocks,
                "stop_reason": stop,
                "stop_sequence": None,
                "usage": {
                    "input_tokens": len(prompt.split()),
                    "output_tokens": len(text.split()),
                },
            },
        )


@contextlib.contextmanager
def fake_anthropic(**settings: Any) -> Iterator[FakeAnthropic]:
    """``with fake_anthropic(api_key="k") as server: ...``: a started server, stopped on exit."""
    server = FakeAnthropic()
    for name, value in settings.items():
        if not hasattr(server, name):
            raise AttributeError(f"FakeAnthropic has no setting {name!r}")
        setattr(server, name, value)
    with server:
        yield server
