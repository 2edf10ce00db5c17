"""HTTP/1.1 keep-alive connections on asyncio streams: the transport under the HTTP providers'
httpx clients.

httpx's default transport (httpcore's connection pool over anyio streams, h11's parser) costs
about 0.7 ms of CPU a request on the 2-core CI machine, and its pool's bookkeeping grows with the
square of its connections: at 64 calls in flight, the client, not the model, set the pace
(bench/live_bench.py). This transport does what a provider's requests need and no more: one
request at a time on a connection, idle connections kept per (scheme, host, port) and reused
last in, first out, a response framed by Content-Length, chunked coding or the end of the
connection. httpx still does everything above the wire: the URL, headers, auth, the JSON body,
the response's decoding and errors, raised as httpx's own exceptions (ConnectError,
ReadTimeout, ...), so callers see what httpx's transport would raise. The timeouts are httpx's
(connect, write, read), the read timeout bounding the whole response. httpcore, anyio and h11
are not imported at all. Proxies are not spoken here: HTTPProvider keeps httpx's transport when
the environment names one.
"""

from __future__ import annotations

import asyncio
import ssl
from typing import Any

import httpx

# A connection: the stream pair asyncio.open_connection gives.
_Connection = tuple[asyncio.StreamReader, asyncio.StreamWriter]
_DEFAULT_PORTS = {"http": 80, "https": 443}
# An idle connection is not reused after this long (httpx's keepalive_expiry): servers close
# theirs after a few seconds (uvicorn, and so vLLM, after 5), and a request sent as the server
# closes would fail for nothing.
KEEPALIVE_S = 5.0
_NO_BODY = frozenset({204, 304})


class KeepAliveTransport(httpx.AsyncBaseTransport):
    """Requests over reused HTTP/1.1 connections; at most ``keep`` idle ones kept per host
    (the callers bound how many are open at once: the runner's max_concurrency). The SSL
    context is httpx's default (certifi's CA bundle, SSL_CERT_FILE / SSL_CERT_DIR), made at the
    first https connection: loading the bundle costs 50 ms a plain http run need not pay."""

    def __init__(self, keep: int):
        self._ssl: ssl.SSLContext | None = None
        self._keep = max(1, keep)
        # Per (scheme, host, port): idle connections and when each became idle (loop time).
        self._idle: dict[tuple[str, str, int], list[tuple[_Connection, float]]] = {}

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        timeout = request.extensions.get("timeout", {})
        url = request.url
        key = (url.scheme, url.host, url.port or _DEFAULT_PORTS.get(url.scheme, 80))
        reader, writer = await self._connect(key, timeout.get("connect"))
        reusable = False
        try:
            writer.write(_head(request) + await request.aread())
            try:
                async with asyncio.timeout(timeout.get("write")):
                    await writer.drain()
            except TimeoutError:
                raise httpx.WriteTimeout("timed out sending the request", request=request) from None
            try:
                async with asyncio.timeout(timeout.get("read")):
                    response, reusable = await _read_response(reader, request.method)
            except TimeoutError:
                raise httpx.ReadTimeout("timed out reading the response", request=request) from None
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError) as exc:
            raise _protocol_error(exc, request) from None
        finally:
            if reusable:
                self._release(key, (reader, writer))
            else:  # a response not read to its end (an error, a cancelled call) ends its connection
                writer.transport.abort()
        return response

    async def _connect(self, key: tuple[str, str, int], timeout: float | None) -> _Connection:
        idle = self._idle.get(key)
        now = asyncio.get_running_loop().time()
        while idle:
            (reader, writer), since = idle.pop()
            # Not one the server has closed, or may be closing, while it was idle.
            if now - since < KEEPALIVE_S and not reader.at_eof() and not writer.is_closing():
                return reader, writer
            writer.transport.abort()
        scheme, host, port = key
        tls = None
        if scheme == "https":
            tls = self._ssl = self._ssl or httpx.create_ssl_context()
        try:
            async with asyncio.timeout(timeout):
                return await asyncio.open_connection(
                    host, port, ssl=tls, server_hostname=host if tls else None
                )
        except TimeoutError:
            raise httpx.ConnectTimeout(f"timed out connecting to {host}:{port}") from None
        except OSError as exc:  # refused, unreachable, a name that does not resolve, TLS
            raise httpx.ConnectError(str(exc) or type(exc).__name__) from None

    def _release(self, key: tuple[str, str, int], connection: _Connection) -> None:
        idle = self._idle.setdefault(key, [])
        if len(idle) < self._keep:
            idle.append((connection, asyncio.get_running_loop().time()))
        else:
            connection[1].transport.abort()

    async def aclose(self) -> None:
        idle, self._idle = self._idle, {}
        for connections in idle.values():
            for (_reader, writer), _since in connections:
                writer.transport.abort()


def _head(request: httpx.Request) -> bytes:
    """The request line and headers (httpx has set Host, Content-Length and the rest)."""
    lines = [b"%s %s HTTP/1.1" % (request.method.encode("ascii"), request.url.raw_path)]
    for name, value in request.headers.raw:
        # A line break would end the header early (a key read with its newline): refused, as
        # httpx's own transport refuses it, without showing the value (it may be a secret).
        if b"\n" in value or b"\r" in value or b"\n" in name or b"\r" in name:
            header = name.decode("latin-1").replace("\n", "").replace("\r", "")
            raise httpx.LocalProtocolError(f"the {header} header has a line break in it")
        lines.append(b"%s: %s" % (name, value))
    return b"\r\n".join(lines) + b"\r\n\r\n"


async def _read_response(reader: asyncio.StreamReader, method: str) -> tuple[httpx.Response, bool]:
    """The response and whether its connection may carry another request."""
    while True:
        head = await reader.readuntil(b"\r\n\r\n")
        status_line, *lines = head[:-4].split(b"\r\n")
        version, _, rest = status_line.partition(b" ")
        code, _, reason = rest.partition(b" ")
        if not version.startswith(b"HTTP/1.") or len(code) != 3 or not code.isdigit():
            raise ValueError(f"not an HTTP/1.x status line: {status_line[:80]!r}")
        status = int(code)
        if status >= 200 or status == 101:
            break
        # An interim response (100 Continue, 103 Early Hints): the final one follows.
    headers = [_header(line) for line in lines]
    fields = {name.lower(): value for name, value in headers}
    close = version != b"HTTP/1.1" or b"close" in fields.get(b"connection", b"").lower()
    close = close or status < 200  # 101: the connection now speaks another protocol
    if method == "HEAD" or status in _NO_BODY or status < 200:
        content = b""
    elif b"chunked" in fields.get(b"transfer-encoding", b"").lower():
        content = await _read_chunked(reader)
    elif b"content-length" in fields:
        content = await reader.readexactly(int(fields[b"content-length"]))
    else:  # framed by the end of the connection
        content, close = await reader.read(), True
    extensions: dict[str, Any] = {"http_version": version, "reason_phrase": reason}
    response = httpx.Response(
        status, headers=headers, stream=httpx.ByteStream(content), extensions=extensions
    )
    return response, not close


def _header(line: bytes) -> tuple[bytes, bytes]:
    name, colon, value = line.partition(b":")
    if not colon or not name or name != name.strip():
        raise ValueError(f"a malformed header line: {line[:80]!r}")
    return name, value.strip()


async def _read_chunked(reader: asyncio.StreamReader) -> bytes:
    parts: list[bytes] = []
    while True:
        size = int((await reader.readuntil(b"\r\n")).split(b";", 1)[0], 16)
        if size == 0:
            while await reader.readuntil(b"\r\n") != b"\r\n":
                pass  # trailer fields: nothing a provider reads
            return b"".join(parts)
        parts.append(await reader.readexactly(size))
        if await reader.readexactly(2) != b"\r\n":
            raise ValueError("a chunk not followed by CRLF")


def _protocol_error(exc: Exception, request: httpx.Request) -> httpx.TransportError:
    """httpx's name for what went wrong on the wire (the words httpcore would use)."""
    if isinstance(exc, asyncio.IncompleteReadError) and not exc.partial:
        return httpx.RemoteProtocolError(
            "Server disconnected without sending a response.", request=request
        )
    if isinstance(exc, OSError):
        return httpx.ReadError(str(exc) or type(exc).__name__, request=request)
    return httpx.RemoteProtocolError(str(exc) or type(exc).__name__, request=request)


def environment_proxy() -> bool:
    """Whether the environment names an HTTP(S) proxy (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY, as
    httpx reads them): requests then go through httpx's transports, which speak to proxies."""
    from urllib.request import getproxies

    found = getproxies()
    return any(found.get(scheme) for scheme in ("http", "https", "all"))
