"""A scriptable HTTP server on loopback: it records every request and answers as a test says.

For the providers whose wire format is not OpenAI's chat completions at ``/v1`` (azure's
deployment URL, the generic http provider): a test sets :attr:`FakeHTTP.reply`, a function of the
request returning ``(status, body, headers)``, and reads :attr:`FakeHTTP.seen` afterwards::

    with FakeHTTP() as server:
        server.reply = lambda r: (200, {"output": "hi"}, {})
        server.url("/api/answer")       # "http://127.0.0.1:PORT/api/answer"
        server.seen[0].json             # the request body, parsed

Bound to 127.0.0.1 on a free port, served from daemon threads, stopped on exit (and after
``lifetime_s`` in any case). It never binds or contacts any other address.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

HOST = "127.0.0.1"


@dataclass
class Request:
    """One request as the server received it."""

    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]  # names lower-cased
    body: bytes

    @property
    def json(self) -> Any:
        return json.loads(self.body)


# (status, body: bytes, str or a JSON value, extra headers)
Reply = tuple[int, Any, dict[str, str]]


def echo_output(request: Request) -> Reply:
    """The default reply: ``{"output": "echo: <the body's prompt field, or its text>"}``."""
    try:
        said = request.json.get("prompt")
    except (ValueError, AttributeError):
        said = request.body.decode("utf-8", "replace")
    return 200, {"output": f"echo: {said}"}, {}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        return

    def _serve(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        parts = urlsplit(self.path)
        request = Request(
            self.command,
            parts.path,
            parse_qs(parts.query),
            {name.lower(): value for name, value in self.headers.items()},
            self.rfile.read(length),
        )
        owner = self.server.owner
        with owner.lock:
            owner.seen.append(request)
        status, body, headers = owner.reply(request)
        if isinstance(body, bytes):
            data = body
        elif isinstance(body, str):
            data = body.encode("utf-8")
        else:
            data = json.dumps(body).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Length", str(len(data)))
        if "Content-Type" not in headers:
            self.send_header("Content-Type", "application/json")
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _serve


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, owner: FakeHTTP):
        self.owner = owner
        super().__init__((HOST, 0), _Handler)


class FakeHTTP:
    def __init__(self, lifetime_s: float = 300.0):
        self.reply: Callable[[Request], Reply] = echo_output
        self.seen: list[Request] = []
        self.lock = threading.Lock()
        self.lifetime_s = lifetime_s
        self._server: _Server | None = None
        self._timer: threading.Timer | None = None

    def url(self, path: str = "/") -> str:
        assert self._server is not None, "the server is not running"
        return f"http://{HOST}:{self._server.server_address[1]}{path}"

    def __enter__(self) -> FakeHTTP:
        self._server = _Server(self)
        threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        ).start()
        self._timer = threading.Timer(self.lifetime_s, self.stop)
        self._timer.daemon = True
        self._timer.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._timer is not None and self._timer is not threading.current_thread():
            self._timer.cancel()

    def __exit__(self, *exc: object) -> None:
        self.stop()
