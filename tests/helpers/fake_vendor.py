"""The loopback HTTP server under the vendor fakes (fake_google, fake_aws, fake_huggingface,
fake_ollama, fake_replicate): standard library only, 127.0.0.1 on a free port, a daemon thread,
bounded by ``lifetime_s``. A subclass answers each request in :meth:`FakeVendor.answer`,
returning a :class:`Reply` (a JSON value or raw bytes, or chunks sent one by one with chunked
transfer encoding, as a streaming API sends them). Everything the server saw is kept::

    with FakeGoogle() as server:
        server.url                   # "http://127.0.0.1:PORT"
        server.seen[0].json          # the request's JSON body; .raw, .headers (lower-case), .path

Loopback only: it never binds or contacts any other address.
"""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

HOST = "127.0.0.1"


@dataclass
class Seen:
    """One request as the server received it (``path`` without the query)."""

    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    raw: bytes
    raw_path: str = ""  # the request target as sent, percent-encoding and query included
    at: float = field(default_factory=time.monotonic)

    @property
    def json(self) -> Any:
        return json.loads(self.raw) if self.raw else None


@dataclass
class Reply:
    """What to answer: ``value`` as JSON, or ``raw`` bytes, or ``chunks`` streamed."""

    status: int = 200
    value: Any = None
    raw: bytes | None = None
    chunks: list[bytes] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str = "application/json"


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = False
    request_queue_size = 256

    def __init__(self, owner: FakeVendor):
        self.owner = owner
        super().__init__((HOST, 0), _Handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        return  # a client that went away mid-response (a timeout, a cancelled run)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    timeout = 30
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        return

    def _serve(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        parts = urlsplit(self.path)
        seen = Seen(
            self.command,
            parts.path,
            parse_qs(parts.query),
            {name.lower(): value for name, value in self.headers.items()},
            raw,
            self.path,
        )
        owner = self.server.owner
        reply = owner._arrive(seen)
        self._send(reply)

    do_GET = do_POST = _serve

    def _send(self, reply: Reply) -> None:
        reason = self.responses.get(reply.status, ("Error",))[0]
        lines = [f"HTTP/1.1 {reply.status} {reason}", f"Content-Type: {reply.content_type}"]
        lines += [f"{name}: {value}" for name, value in reply.headers.items()]
        try:
            if reply.chunks is not None:
                lines.append("Transfer-Encoding: chunked")
                self.wfile.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
                for chunk in reply.chunks:
                    self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                    self.wfile.flush()
                self.wfile.write(b"0\r\n\r\n")
            else:
                body = reply.raw if reply.raw is not None else json.dumps(reply.value).encode()
                lines.append(f"Content-Length: {len(body)}")
                self.wfile.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body)
            self.wfile.flush()
        except OSError:
            self.close_connection = True


class FakeVendor:
    """The server. Use as a context manager (or ``start()`` / ``stop()``); subclasses
    implement :meth:`answer`. ``flaky_failures`` and ``retry_after`` script the 429s of the
    ``flaky`` behaviours; :meth:`nth` counts requests per key (e.g. per prompt)."""

    name = "fake-vendor"

    def __init__(self, lifetime_s: float = 600.0):
        self.lifetime_s = lifetime_s
        self.flaky_failures = 2
        self.retry_after: str | None = "0"
        self.seen: list[Seen] = []
        self._counts: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._timer: threading.Timer | None = None
        self._stopped = False

    def answer(self, seen: Seen) -> Reply:
        raise NotImplementedError

    @property
    def url(self) -> str:
        assert self._server is not None, "the server is not running"
        return f"http://{HOST}:{self._server.server_address[1]}"

    def nth(self, key: str) -> int:
        """How many times ``key`` was counted, this time included."""
        with self._lock:
            self._counts[key] += 1
            return self._counts[key]

    def retry_headers(self) -> dict[str, str]:
        return {"retry-after": self.retry_after} if self.retry_after is not None else {}

    def _arrive(self, seen: Seen) -> Reply:
        with self._lock:
            self.seen.append(seen)
        try:
            return self.answer(seen)
        except Exception as exc:  # a bug of the fake: say so, never hang the client
            return Reply(500, {"error": f"fake server bug: {type(exc).__name__}: {exc}"})

    def start(self) -> FakeVendor:
        self._server = _Server(self)
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.01},
            name=self.name,
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

    def __enter__(self) -> Any:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def echo_text(prompt: str) -> str:
    return f"echo: {prompt}"


def words(text: str) -> int:
    return len(text.split())
