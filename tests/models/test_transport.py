"""The HTTP providers' transport (assay.models.providers._transport, issue 28 item 4): HTTP/1.1
keep-alive connections on asyncio streams in place of httpx's own transport, which cost ~0.7 ms
of CPU a request and set the pace at 64 calls in flight.

Every test goes through a real OpenAIProvider (httpx above, the transport below) to a real
socket on loopback: a raw server whose bytes each test scripts (chunked coding, a response
framed by the connection's end, 100 Continue, a server that hangs up), the loopback OpenAI
server, a TLS server with a certificate made for the test, and a forward proxy."""

from __future__ import annotations

import asyncio
import gzip
import json
import shutil
import socket
import socketserver
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from assay.models.providers import ProviderConfig, ProviderError, make_provider
from tests.helpers.fake_openai import echo_text, fake_openai

ANSWER = {"choices": [{"message": {"content": "hi"}, "finish_reason": "stop"}], "usage": {}}
BODY = json.dumps(ANSWER).encode()


def head(*lines: str) -> bytes:
    return ("\r\n".join(["HTTP/1.1 200 OK", *lines]) + "\r\n\r\n").encode()


def sized(body: bytes = BODY, *extra: str) -> bytes:
    return head("Content-Type: application/json", f"Content-Length: {len(body)}", *extra) + body


# --------------------------------------------------------------------------- a scripted server


class RawServer:
    """Loopback TCP: reads each request (head and Content-Length body), answers ``reply(n)``
    bytes for the nth request (1-based) and hangs up after it when ``close_after(n)``."""

    def __init__(self, reply: Callable[[int], bytes], close_after: Callable[[int], bool]):
        self.reply, self.close_after = reply, close_after
        self.connections = 0
        self.requests: list[bytes] = []
        owner = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                owner.connections += 1
                stream = self.request.makefile("rb")
                while True:
                    request = owner.read_request(stream)
                    if request is None:
                        return
                    owner.requests.append(request)
                    n = len(owner.requests)
                    self.request.sendall(owner.reply(n))
                    if owner.close_after(n):
                        self.request.shutdown(socket.SHUT_RDWR)
                        return

        self.server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @staticmethod
    def read_request(stream: Any) -> bytes | None:
        lines = []
        while (line := stream.readline()) not in (b"\r\n", b""):
            lines.append(line)
        if not lines:
            return None
        length = next(
            (int(x.split(b":")[1]) for x in lines if x.lower().startswith(b"content-length")), 0
        )
        return b"".join(lines) + stream.read(length)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def raw() -> Iterator[Callable[..., RawServer]]:
    started: list[RawServer] = []

    def start(
        reply: Callable[[int], bytes], close_after: Callable[[int], bool] | None = None
    ) -> RawServer:
        started.append(RawServer(reply, close_after or (lambda n: False)))
        return started[-1]

    yield start
    for server in started:
        server.stop()


def ask(url: str, prompts: int = 1, **settings: Any) -> list[str]:
    """``prompts`` calls, one after another, through one openai provider."""

    async def calls() -> list[str]:
        config = ProviderConfig(type="openai", base_url=url, model="m", max_retries=0, **settings)
        provider = make_provider(config)
        try:
            return [(await provider.complete(f"q{i}")).text for i in range(prompts)]
        finally:
            await provider.aclose()

    return asyncio.run(calls())


# --------------------------------------------------------------------------- framing


def test_one_connection_carries_every_call(raw: Callable[..., RawServer]) -> None:
    server = raw(lambda n: sized())
    assert ask(server.url, 5) == ["hi"] * 5
    assert server.connections == 1
    first = server.requests[0].decode()
    assert first.startswith("POST /v1/chat/completions HTTP/1.1\r\n")
    assert "\r\nhost: 127.0.0.1:" in first.lower() and '"content":"q0"' in first


def test_a_chunked_response_is_read_whole(raw: Callable[..., RawServer]) -> None:
    half = len(BODY) // 2
    chunks = b"%x;ext=1\r\n%s\r\n%x\r\n%s\r\n0\r\nX-Trailer: t\r\n\r\n" % (
        half,
        BODY[:half],
        len(BODY) - half,
        BODY[half:],
    )
    server = raw(lambda n: head("Transfer-Encoding: chunked") + chunks)
    assert ask(server.url, 3) == ["hi"] * 3
    assert server.connections == 1  # read to its end: the connection is reused


def test_a_response_framed_by_the_connections_end(raw: Callable[..., RawServer]) -> None:
    server = raw(lambda n: head("Content-Type: application/json") + BODY, lambda n: True)
    assert ask(server.url, 2) == ["hi"] * 2
    assert server.connections == 2


def test_connection_close_opens_a_new_connection(raw: Callable[..., RawServer]) -> None:
    server = raw(lambda n: sized(BODY, "Connection: close"), lambda n: True)
    assert ask(server.url, 3) == ["hi"] * 3
    assert server.connections == 3


def test_an_interim_100_continue_is_skipped(raw: Callable[..., RawServer]) -> None:
    server = raw(lambda n: b"HTTP/1.1 100 Continue\r\n\r\n" + sized())
    assert ask(server.url, 2) == ["hi"] * 2


def test_a_gzip_body_is_decoded(raw: Callable[..., RawServer]) -> None:
    server = raw(lambda n: sized(gzip.compress(BODY), "Content-Encoding: gzip"))
    assert ask(server.url) == ["hi"]


def test_an_idle_connection_the_server_closed_is_not_reused(raw: Callable[..., RawServer]) -> None:
    # The server hangs up after each answer, as one whose keep-alive timeout passed: the next
    # call must not fail on the dead connection (no retries allowed here).
    server = raw(lambda n: sized(), lambda n: True)

    async def calls() -> list[str]:
        config = ProviderConfig(type="openai", base_url=server.url, model="m", max_retries=0)
        provider = make_provider(config)
        try:
            texts = []
            for i in range(3):
                texts.append((await provider.complete(f"q{i}")).text)
                await asyncio.sleep(0.05)  # the hang-up reaches the idle connection
            return texts
        finally:
            await provider.aclose()

    assert asyncio.run(calls()) == ["hi"] * 3
    assert server.connections == 3


def test_an_idle_connection_expires(
    raw: Callable[..., RawServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every idle connection is too old.
    monkeypatch.setattr("assay.models.providers._transport.KEEPALIVE_S", 0.0)
    server = raw(lambda n: sized())
    assert ask(server.url, 3) == ["hi"] * 3
    assert server.connections == 3


# --------------------------------------------------------------------------- failures


def test_a_server_that_hangs_up_without_an_answer(raw: Callable[..., RawServer]) -> None:
    server = raw(lambda n: b"", lambda n: True)
    with pytest.raises(ProviderError) as caught:
        ask(server.url)
    assert caught.value.retryable
    assert str(caught.value) == (
        f"connection to {server.url} failed "
        "(RemoteProtocolError: Server disconnected without sending a response.)"
    )


def test_a_body_cut_short_is_a_retryable_error(raw: Callable[..., RawServer]) -> None:
    server = raw(lambda n: sized()[:-5], lambda n: True)
    with pytest.raises(ProviderError, match=r"failed \(RemoteProtocolError: ") as caught:
        ask(server.url)
    assert caught.value.retryable


def test_a_reply_that_is_not_http(raw: Callable[..., RawServer]) -> None:
    server = raw(lambda n: b"SSH-2.0-OpenSSH_9.2\r\n\r\n", lambda n: True)
    with pytest.raises(ProviderError, match=r"RemoteProtocolError: not an HTTP/1.x status line"):
        ask(server.url)


def test_a_header_with_a_line_break_is_refused_without_its_value(
    raw: Callable[..., RawServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TEST_KEY", "sk-secret\r\nX-Injected: 1")
    server = raw(lambda n: sized())
    with pytest.raises(ProviderError) as caught:
        ask(server.url, api_key_env="TEST_KEY")
    assert "the Authorization header has a line break in it" in str(caught.value)
    assert "secret" not in str(caught.value)
    assert server.requests == []  # nothing was sent


def test_a_slow_answer_times_out() -> None:
    with fake_openai(slow_s=5) as server:
        config = ProviderConfig(
            type="openai", base_url=server.url, model="slow", timeout_s=0.2, max_retries=0
        )

        async def call() -> None:
            provider = make_provider(config)
            try:
                await provider.complete("hello")
            finally:
                await provider.aclose()

        started = time.monotonic()
        with pytest.raises(ProviderError, match=r"^timed out after 0.2 s$"):
            asyncio.run(call())
        assert time.monotonic() - started < 2


# --------------------------------------------------------------------------- TLS and proxies


@pytest.fixture
def tls_server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """An https OpenAI-compatible echo server on 127.0.0.1 with a certificate made here."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj",
         "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
         "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True,
    )  # fmt: skip
    import ssl

    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            return

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            answer = dict(ANSWER, choices=[{"message": {"content": echo_text(
                body["messages"][-1]["content"])}}])  # fmt: skip
            data = json.dumps(answer).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"https://127.0.0.1:{server.server_address[1]}/v1", cert
    server.shutdown()
    server.server_close()


def test_https_is_verified_against_ssl_cert_file(
    tls_server: tuple[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, cert = tls_server
    with pytest.raises(ProviderError, match=r"ConnectError: .*CERTIFICATE_VERIFY_FAILED"):
        ask(url)  # certifi's bundle does not know this certificate
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))  # as httpx reads it
    assert ask(url, 2) == ["echo: q0", "echo: q1"]


def test_the_ca_bundle_is_loaded_only_for_https(
    tls_server: tuple[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    import httpx

    made: list[object] = []
    real = httpx.create_ssl_context

    def counted(*args: Any, **kwargs: Any) -> Any:
        made.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(httpx, "create_ssl_context", counted)
    with fake_openai() as server:
        assert ask(server.url, 2) == ["echo: q0", "echo: q1"]
    assert made == []  # plain http: 40 ms of certificate loading saved
    url, cert = tls_server
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))
    assert ask(url, 2) == ["echo: q0", "echo: q1"]
    assert made == [1]  # once, for both calls


def test_a_proxy_from_the_environment_carries_the_requests(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[str] = []

    class Proxy(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            return

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers["Content-Length"]))
            seen.append(self.path)  # a proxy is sent the absolute URL
            self.send_response(200)
            self.send_header("Content-Length", str(len(BODY)))
            self.end_headers()
            self.wfile.write(BODY)

    proxy = ThreadingHTTPServer(("127.0.0.1", 0), Proxy)
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    try:
        monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{proxy.server_address[1]}")
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        assert ask("http://model.invalid/v1", 2) == ["hi", "hi"]
    finally:
        proxy.shutdown()
        proxy.server_close()
    assert seen == ["http://model.invalid/v1/chat/completions"] * 2


# --------------------------------------------------------------------------- what it costs


def test_direct_calls_go_through_the_keep_alive_transport() -> None:
    # httpx's own transport (httpcore's pool over anyio) cost 1.75 ms of CPU a call at 64 in
    # flight, this one 0.45 ms (bench/live_bench.py measures what that does to a run; a test
    # never depends on speed): that the calls take this seam is what is checked here.
    code = (
        "import asyncio, sys\n"
        "from assay.models._runner import Call, run_calls\n"
        "from assay.models.providers import ProviderConfig\n"
        "from tests.helpers.fake_openai import FakeOpenAI\n"
        "with FakeOpenAI() as server:\n"
        "    config = ProviderConfig(type='openai', base_url=server.url, model='echo',"
        " max_concurrency=8)\n"
        "    calls = [Call('c', f'g{i}', 0, f'prompt {i}', config) for i in range(20)]\n"
        "    outcomes, _ = asyncio.run(run_calls(calls, cache=None, max_concurrency=8))\n"
        "    assert all(o.completion is not None for o in outcomes)\n"
        "    print(sorted({'httpcore', 'anyio', 'h11'} & set(sys.modules)))\n"
    )
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=root
    )
    assert done.stdout.strip() == "[]", done.stdout + done.stderr


def test_an_openai_provider_imports_no_terminal_ui() -> None:
    # httpx's own command-line client (rich, pygments: ~50 ms of imports) is never loaded.
    code = (
        "import sys; from assay.models.providers import ProviderConfig, make_provider; "
        "make_provider(ProviderConfig(type='openai', base_url='http://127.0.0.1:9/v1', "
        "model='m')); print(sorted({'rich', 'pygments'} & set(sys.modules)))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
