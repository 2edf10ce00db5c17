"""The viewer's HTTP server: the standard library's ``ThreadingHTTPServer``, a GET-only JSON API
over the runs (docs/viewer.md) and the static front end from the package.

The standard library, not Starlette on uvicorn: a local viewer for one person serves a handful
of requests a second, which a thread per request does well, and it costs about 10 ms to import
where Starlette and uvicorn cost a few hundred (start-up must stay under half a second).
"""

from __future__ import annotations

import json
import mimetypes
import sys
from collections.abc import Callable
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from pathlib import Path
from typing import Any, Final
from urllib.parse import parse_qs, unquote, urlsplit

from assay.errors import AssayError
from assay.viewer._runs import NoRun, RunStore, is_safe_name, rows_of, run_attestation, summary_of

_JSON: Final = "application/json; charset=utf-8"
_TYPES: Final = {".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8"}


class _NotFound(Exception):
    """A path the API does not serve."""


def _query(raw: str) -> dict[str, str]:
    return {key: values[-1] for key, values in parse_qs(raw).items()}


def _segments(path: str) -> list[str]:
    """The URL path's segments, each decoded on its own: an encoded slash stays inside its
    segment (where every name check refuses it), and ``%2e%2e`` decodes to ``..`` there."""
    return [unquote(part, errors="strict") for part in path.split("/")[1:]]


class ViewerApp:
    """What the API answers, independent of the HTTP plumbing (a route to a JSON value)."""

    def __init__(self, store: RunStore) -> None:
        self.store = store

    def answer(self, path: str, query: dict[str, str]) -> Any:
        """The JSON value of a GET of ``path`` (NoRun / _NotFound: a 404)."""
        parts = _segments(path)
        if parts == ["api", "runs"]:
            runs, problems = self.store.summaries()
            return {"runs": runs, "problems": problems}
        if parts == ["api", "live"]:
            from assay.viewer._live import live_runs

            return {"runs": live_runs(self.store.root)}
        if parts == ["api", "compare"]:
            from assay.viewer._detail import compare

            if not query.get("a") or not query.get("b"):
                raise _NotFound("say which runs: /api/compare?a=RUN&b=RUN (or b=baseline)")
            return compare(self.store, query["a"], query["b"])
        if len(parts) == 3 and parts[:2] == ["api", "runs"]:
            return self._run(parts[2])
        if len(parts) == 5 and parts[:2] == ["api", "runs"] and parts[3] == "goldens":
            from assay.viewer._detail import golden_detail

            if not 0 < len(parts[4]) <= 1000 or "\x00" in parts[4]:
                raise NoRun(parts[4])  # a golden id is any string: only ever compared, never a path
            return golden_detail(self.store, parts[2], parts[4], query.get("candidate"))
        raise _NotFound(path)

    def _run(self, run_id: str) -> dict[str, Any]:
        record = self.store.record(run_id)
        summary = record.get("summary") or {}
        return {
            "run": summary_of(run_id, record),
            "results": rows_of(record),
            "regressions": [r for r in record.get("regressions") or () if isinstance(r, dict)],
            "notes": [str(n) for n in summary.get("notes") or ()],
            "undecided": [str(n) for n in summary.get("undecided") or ()],
            "attestation": run_attestation(record),
        }


def _static(name: str) -> tuple[bytes, str] | None:
    """A file of the packaged front end by its bare name (none of a sub-folder or outside)."""
    if not is_safe_name(name):
        return None
    folder = resources.files("assay.viewer") / "static"
    try:
        names = {entry.name for entry in folder.iterdir()}
    except OSError:
        return None
    if name not in names:
        return None
    try:
        body = (folder / name).read_bytes()
    except OSError:
        return None
    suffix = Path(name).suffix
    kind = _TYPES.get(suffix) or mimetypes.guess_type(name)[0] or "application/octet-stream"
    if kind.startswith("text/") and "charset" not in kind:
        kind += "; charset=utf-8"
    return body, kind


def _handler(app: ViewerApp) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        server_version = "assay-view"
        sys_version = ""

        def do_GET(self) -> None:
            bound = self.server.server_address
            if not _host_allowed(
                self.headers.get("Host"), bound[0] if isinstance(bound, tuple) else ""
            ):
                # DNS rebinding: a web page whose name resolves to 127.0.0.1 must not read the
                # runs through the user's browser; a loopback viewer answers loopback names only.
                self._send(HTTPStatus.FORBIDDEN, _dump({"error": "unexpected Host header"}), _JSON)
                return
            split = urlsplit(self.path)
            if split.path.startswith("/api/"):
                self._api(split.path, split.query)
                return
            name = "index.html" if split.path == "/" else split.path[1:]
            found = _static(unquote(name)) if "/" not in name else None
            if found is None:
                self._send(HTTPStatus.NOT_FOUND, _dump({"error": "not found"}), _JSON)
            else:
                self._send(HTTPStatus.OK, *found)

        def _api(self, path: str, query: str) -> None:
            try:
                value = app.answer(path, _query(query))
            except (NoRun, _NotFound, UnicodeDecodeError):
                self._send(HTTPStatus.NOT_FOUND, _dump({"error": "not found"}), _JSON)
                return
            except AssayError as exc:  # a damaged record: one line saying what is wrong
                error = {"error": str(exc)}
                self._send(HTTPStatus.UNPROCESSABLE_ENTITY, _dump(error), _JSON)
                return
            except (AttributeError, TypeError, ValueError, KeyError):
                error = {"error": "a damaged run record: a field of the wrong type"}
                self._send(HTTPStatus.UNPROCESSABLE_ENTITY, _dump(error), _JSON)
                return
            except Exception as exc:  # a bug of ours: one line here and there, no traceback
                sys.stderr.write(f"assay: error: {path}: {type(exc).__name__}: {exc}\n")
                error = {"error": f"internal error: {type(exc).__name__}"}
                self._send(HTTPStatus.INTERNAL_SERVER_ERROR, _dump(error), _JSON)
                return
            self._send(HTTPStatus.OK, _dump(value), _JSON)

        def _send(self, status: HTTPStatus, body: bytes, kind: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.send_header("X-Content-Type-Options", "nosniff")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass  # each request line would fill the terminal; errors are in the responses

    return Handler


def _is_loopback(name: str) -> bool:
    """``localhost`` or a loopback IP address (127.0.0.0/8, ::1)."""
    import ipaddress

    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def _host_allowed(header: str | None, bound: Any) -> bool:
    """Whether a request's Host names this server: on a loopback address, only a loopback name
    (any port); bound elsewhere (``--host``, with its warning), any."""
    if not _is_loopback(bound.decode() if isinstance(bound, bytes) else str(bound)):
        return True
    if not header:
        return False
    try:
        name = urlsplit(f"//{header}").hostname
    except ValueError:
        return False
    return name is not None and _is_loopback(name)


def _dump(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, default=str, allow_nan=False).encode("utf-8")


class _Server(ThreadingHTTPServer):
    daemon_threads = True  # a browser's open connection does not keep Ctrl-C waiting

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A browser that went away mid-answer is no error; anything else is one line, never
        the traceback socketserver would print."""
        exc = sys.exc_info()[1]
        if not isinstance(exc, ConnectionError | TimeoutError):
            sys.stderr.write(f"assay: warning: a request failed: {type(exc).__name__}: {exc}\n")


def make_server(
    root: Path, *, document: Path | None = None, host: str = "127.0.0.1", port: int = 8765
) -> ThreadingHTTPServer:
    """A server over the saved runs of the project at ``root`` (or the one ``document``),
    bound, not yet serving (``serve_forever``); nothing is read until a request asks."""
    return _Server((host, port), _handler(ViewerApp(RunStore(root, document))))


def url_of(server: ThreadingHTTPServer) -> str:
    host, port = server.server_address[:2]
    host = host.decode() if isinstance(host, bytes) else str(host)
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/"


def serve(
    root: Path,
    *,
    document: Path | None = None,
    host: str = "127.0.0.1",
    port: int = 8765,
    ready: Callable[[str], None] | None = None,
) -> None:
    """Serve until interrupted (KeyboardInterrupt propagates, the socket closed)."""
    server = make_server(root, document=document, host=host, port=port)
    try:
        (ready or (lambda url: print(f"assay view: {url}", flush=True, file=sys.stdout)))(
            url_of(server)
        )
        server.serve_forever(poll_interval=0.2)
    finally:
        server.server_close()
