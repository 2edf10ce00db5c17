"""A small OpenAI-compatible chat-completions server on loopback, for the live-candidate tests.

Built on the standard library (``http.server.ThreadingHTTPServer``), it binds 127.0.0.1 on a free
port, serves ``POST /v1/chat/completions`` from a daemon thread and is bounded: it stops itself
after ``lifetime_s`` and every wait inside a handler ends when the server stops.

The request's ``model`` names the behaviour (see :data:`MODELS`); per-prompt behaviours key on the
content of the last message. Everything the server saw is counted so tests can assert on it::

    with FakeOpenAI() as server:
        server.url                      # "http://127.0.0.1:PORT/v1"
        server.total                    # requests received (any model)
        server.count(model="echo")      # per model, optionally per prompt
        server.max_in_flight            # the most requests it held at once

Used by the model, cache and judge tests and by bench/live_bench.py. Loopback only: it never binds
or contacts any other address.
"""

from __future__ import annotations

import contextlib
import json
import re
import socket
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

HOST = "127.0.0.1"

#: The behaviours, by model name.
MODELS = {
    "echo": "answer 'echo: <prompt>' with usage (prompt/completion tokens = word counts)",
    "flaky-429": "first `flaky_failures` requests per prompt: 429 with Retry-After, then echo",
    "flaky-500": "first `flaky_failures` requests per prompt: 500, then echo",
    "always-500": "500 every time",
    "bad-request": "400 every time",
    "picky": "400 when the prompt contains 'REJECT', else echo",
    "slow": "wait `slow_s` (longer than any client timeout in the tests), then echo",
    "malformed": "200 with a body that is not JSON",
    "no-choices": "200 with valid JSON that has no choices",
    "latency-50ms": "wait 50 ms, then echo",
    "rendezvous": "hold requests until `rendezvous_n` were in flight at once (or 5 s), then echo",
    "alternate": "per prompt: odd requests answer 'PASS', even ones 'FAIL'",
    "hang-after": "the first `hang_after` requests echo; later ones hang until `release()`",
    "truncated": "echo, with finish_reason 'length' (cut off at the length limit)",
    "judge-json": "a JSON verdict {score, reason}",
    "judge-fenced": "the JSON verdict in a ```json fence inside prose",
    "judge-prose": "prose with the JSON verdict inline",
    "judge-number": "a bare number",
    "judge-garbage": "never a verdict",
    "judge-garbage-once": "per prompt: garbage first, a JSON verdict from the second ask on",
}

# The judge models' score: 'SCORE=0.85' anywhere in the prompt (the graded output carries it),
# else 0.5.
_SCORE = re.compile(r"SCORE=(\d+(?:\.\d+)?)")
GARBAGE = "I am not able to grade this answer, sorry."


def echo_text(prompt: str) -> str:
    return f"echo: {prompt}"


def judge_score(prompt: str) -> float:
    found = _SCORE.search(prompt)
    return float(found.group(1)) if found else 0.5


@dataclass
class Seen:
    """One request as the server received it."""

    model: str
    prompt: str
    body: dict[str, Any]
    authorization: str | None
    at: float = field(default_factory=time.monotonic)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = False
    # socketserver's default backlog of 5 drops connection attempts from a burst of 64 clients
    # (each dropped SYN costs the client a 1 s retransmit): never let the server be the bottleneck.
    request_queue_size = 1024

    def __init__(self, owner: FakeOpenAI):
        self.owner = owner
        super().__init__((HOST, 0), _Handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        # One daemon thread per connection, tracked so stop() can close and join them all.
        thread = threading.Thread(
            target=self.process_request_thread,
            args=(request, client_address),
            name="fake-openai-conn",
            daemon=True,
        )
        self.owner._track(request, thread)
        thread.start()

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that went away mid-response (a timeout, a cancelled run) is expected here.
        self.owner.handler_errors += 1


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    timeout = 30  # an idle keep-alive connection ends after this
    server: _Server
    _on_answer: Callable[[], None] | None = None  # FakeOpenAI._leave, until the answer is sent

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        return

    def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        reason = self.responses.get(status, ("",))[0]
        lines = [
            f"HTTP/1.1 {status} {reason}",
            "Content-Type: application/json",
            f"Content-Length: {len(body)}",
            *(f"{name}: {value}" for name, value in (headers or {}).items()),
        ]
        # The request stops being in flight before its answer is written: once the client has
        # the answer it may send the next one, which must not find this one still counted.
        self._answered()
        # Head and body in one write: split writes meet Nagle + delayed ACK (+40 ms a response).
        try:
            self.wfile.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body)
            self.wfile.flush()
        except OSError:  # the client gave up (timeout, cancelled run)
            self.close_connection = True

    def _json(self, status: int, value: Any, headers: dict[str, str] | None = None) -> None:
        self._send(status, json.dumps(value).encode("utf-8"), headers)

    def do_GET(self) -> None:
        self._json(404, {"error": {"message": "only POST /v1/chat/completions"}})

    def do_POST(self) -> None:
        owner = self.server.owner
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        if self.path.rstrip("/") != "/v1/chat/completions":
            self._json(404, {"error": {"message": f"no route {self.path}"}})
            return
        try:
            body = json.loads(raw)
            model = str(body["model"])
            prompt = str(body["messages"][-1]["content"])
        except (ValueError, KeyError, IndexError, TypeError):
            self._json(400, {"error": {"message": "not a chat completions request"}})
            return
        nth, nth_model = owner._arrive(Seen(model, prompt, body, self.headers.get("Authorization")))
        self._on_answer = owner._leave
        try:
            owner._respond(self, model, prompt, nth, nth_model)
        finally:
            self._answered()  # no answer was written (the server stopped): it leaves anyway

    def _answered(self) -> None:
        leave, self._on_answer = self._on_answer, None
        if leave is not None:
            leave()


class FakeOpenAI:
    """The server. Use as a context manager (or ``start()`` / ``stop()``).

    Attributes (set them before or between requests to script the behaviours):
        flaky_failures: failing requests per prompt before success (flaky-429 / flaky-500).
        retry_after: the Retry-After header sent with 429s (and flaky-500s when not None).
        slow_s: how long ``slow`` waits.
        rendezvous_n: how many requests ``rendezvous`` waits to see in flight at once.
        hang_after: how many ``hang-after`` requests are answered before they start hanging.
    """

    def __init__(self, lifetime_s: float = 600.0):
        self.lifetime_s = lifetime_s
        self.flaky_failures = 2
        self.retry_after: str | None = "0"
        self.slow_s = 30.0
        self.rendezvous_n = 2
        self.rendezvous_missed = False
        self.hang_after = 5
        self.handler_errors = 0
        self.seen: list[Seen] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.hanging = 0
        self._per_prompt: Counter[tuple[str, str]] = Counter()
        self._per_model: Counter[str] = Counter()
        self._lock = threading.Condition()
        self._stopped = threading.Event()
        self._released = threading.Event()
        self._connections: list[tuple[socket.socket, threading.Thread]] = []
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._timer: threading.Timer | None = None

    # ----------------------------------------------------------------- lifecycle

    @property
    def port(self) -> int:
        assert self._server is not None, "the server is not running"
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        """The base_url for a provider: ``http://127.0.0.1:PORT/v1``."""
        return f"http://{HOST}:{self.port}/v1"

    def start(self) -> FakeOpenAI:
        self._server = _Server(self)
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            # How soon stop() gets through: every test with a server pays it once at teardown.
            kwargs={"poll_interval": 0.01},
            name="fake-openai",
            daemon=True,
        )
        self._thread.start()
        self._timer = threading.Timer(self.lifetime_s, self.stop)
        self._timer.daemon = True
        self._timer.start()
        return self

    def stop(self) -> None:
        """Stop serving, wake every waiting handler, close every socket (idempotent)."""
        if self._stopped.is_set():
            return
        self._stopped.set()
        self._released.set()
        with self._lock:
            self._lock.notify_all()
        if self._timer is not None and self._timer is not threading.current_thread():
            self._timer.cancel()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=10)
        with self._lock:
            connections, self._connections = self._connections, []
        for conn, _thread in connections:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        # The handler threads see EOF now and close their sockets; wait for them (bounded).
        deadline = time.monotonic() + 10
        for _conn, thread in connections:
            if thread is not threading.current_thread():
                thread.join(timeout=max(0.0, deadline - time.monotonic()))

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def release(self) -> None:
        """Let every hanging ``hang-after`` request (and later ones) answer."""
        self._released.set()

    # ----------------------------------------------------------------- counters

    @property
    def total(self) -> int:
        with self._lock:
            return len(self.seen)

    def count(self, model: str | None = None, prompt: str | None = None) -> int:
        """Requests received, optionally only those of ``model`` and/or ``prompt``."""
        with self._lock:
            return sum(
                1
                for s in self.seen
                if (model is None or s.model == model) and (prompt is None or s.prompt == prompt)
            )

    def prompts(self, model: str | None = None) -> list[str]:
        with self._lock:
            return [s.prompt for s in self.seen if model is None or s.model == model]

    def wait_for(self, predicate: Any, timeout: float = 30.0) -> bool:
        """Block until ``predicate(self)`` holds (re-checked on every request), or time out."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while not predicate(self):
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._lock.wait(timeout=min(left, 0.1))
            return True

    # ----------------------------------------------------------------- internals

    def _track(self, conn: socket.socket, thread: threading.Thread) -> None:
        with self._lock:
            self._connections = [(c, t) for c, t in self._connections if t.is_alive()]
            self._connections.append((conn, thread))

    def _arrive(self, seen: Seen) -> tuple[int, int]:
        """Record a request; return how many requests this (model, prompt) and this model have
        had, this one included."""
        with self._lock:
            self.seen.append(seen)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            self._per_prompt[(seen.model, seen.prompt)] += 1
            self._per_model[seen.model] += 1
            self._lock.notify_all()
            return self._per_prompt[(seen.model, seen.prompt)], self._per_model[seen.model]

    def _leave(self) -> None:
        with self._lock:
            self.in_flight -= 1
            self._lock.notify_all()

    def _wait(self, seconds: float) -> None:
        """Sleep, but wake at once when the server stops."""
        self._stopped.wait(seconds)

    def _respond(
        self, handler: _Handler, model: str, prompt: str, nth: int, nth_model: int
    ) -> None:
        if model in ("flaky-429", "flaky-500") and nth <= self.flaky_failures:
            status = 429 if model == "flaky-429" else 500
            headers = {"Retry-After": self.retry_after} if self.retry_after is not None else {}
            handler._json(status, {"error": {"message": f"scripted {status}"}}, headers)
            return
        if model == "always-500":
            handler._json(500, {"error": {"message": "scripted 500"}})
            return
        if model == "bad-request" or (model == "picky" and "REJECT" in prompt):
            handler._json(400, {"error": {"message": "scripted 400"}})
            return
        if model == "malformed":
            handler._send(200, b'{"choices": [{"message": {"content": "trunc')
            return
        if model == "no-choices":
            handler._json(200, {"object": "chat.completion", "choices": []})
            return
        if model == "slow":
            self._wait(self.slow_s)
        elif model == "latency-50ms":
            self._wait(0.05)
        elif model == "rendezvous":
            # Hold until `rendezvous_n` requests have been in flight at once (proof that the
            # client allows that many), then keep 20 ms of overlap so more would show. After
            # one 5 s wait in vain (a client that died) nothing waits any more: fail fast.
            deadline = time.monotonic() + 5
            with self._lock:
                while (
                    self.max_in_flight < self.rendezvous_n
                    and not self._stopped.is_set()
                    and not self.rendezvous_missed
                ):
                    left = deadline - time.monotonic()
                    if left <= 0:
                        self.rendezvous_missed = True
                        break
                    self._lock.wait(timeout=min(left, 0.1))
                self._lock.notify_all()
            self._wait(0.02)
        elif model == "hang-after" and nth_model > self.hang_after and not self._released.is_set():
            with self._lock:
                self.hanging += 1
                self._lock.notify_all()
            self._released.wait(self.lifetime_s)
            with self._lock:
                self.hanging -= 1
        if self._stopped.is_set():
            handler.close_connection = True
            return
        if model == "alternate":
            self._complete(handler, model, prompt, "PASS" if nth % 2 == 1 else "FAIL")
        elif model.startswith("judge-"):
            self._complete(handler, model, prompt, self._verdict(model, prompt, nth))
        else:
            self._complete(handler, model, prompt, echo_text(prompt))

    @staticmethod
    def _verdict(model: str, prompt: str, nth: int) -> str:
        score = judge_score(prompt)
        verdict = json.dumps({"score": score, "reason": "scripted verdict"})
        if model == "judge-json":
            return verdict
        if model == "judge-fenced":
            return f"Here is my grade.\n```json\n{verdict}\n```\nThanks."
        if model == "judge-prose":
            return f"Having read the answer, my verdict is {verdict} and that is final."
        if model == "judge-number":
            return f"{score}"
        if model == "judge-garbage-once" and nth >= 2:
            return verdict
        return GARBAGE

    @staticmethod
    def _complete(handler: _Handler, model: str, prompt: str, content: str) -> None:
        handler._json(
            200,
            {
                "id": "chatcmpl-fake",
                "object": "chat.completion",
                "model": model,
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": content},
                        "finish_reason": "length" if model == "truncated" else "stop",
                    }
                ],
                "usage": {
                    "prompt_tokens": len(prompt.split()),
                    "completion_tokens": len(content.split()),
                    "total_tokens": len(prompt.split()) + len(content.split()),
                },
            },
        )


@contextlib.contextmanager
def fake_openai(**settings: Any) -> Iterator[FakeOpenAI]:
    """``with fake_openai(slow_s=10) as server: ...``: a started server, stopped on exit."""
    server = FakeOpenAI()
    for name, value in settings.items():
        if not hasattr(server, name):
            raise AttributeError(f"FakeOpenAI has no setting {name!r}")
        setattr(server, name, value)
    with server:
        yield server
