"""No network, ever, from an assert: a JSON Schema ``$ref`` that the schema does not hold is a
failed check naming the URI; jsonschema's default (fetch it over HTTP, no timeout) never runs."""

from __future__ import annotations

import http.server
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from assay.asserts import CheckContext, OutputView, parse_assert, run_assert
from tests.helpers.cli import run_cli
from tests.helpers.goldens import ORIGIN, write_golden, write_json


@pytest.fixture
def no_sockets(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Record (and refuse) every attempt to connect anywhere."""
    attempts: list[Any] = []

    def refuse(self: socket.socket, address: Any) -> None:
        attempts.append(address)
        raise OSError("the test forbids network access")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    return attempts


@pytest.fixture
def schema_server() -> Iterator[tuple[str, list[str]]]:
    """A real loopback HTTP server that would serve any schema, counting the requests."""
    requests: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            requests.append(self.path)
            body = b'{"type": "integer"}'
            self.send_response(200)
            self.send_header("Content-Type", "application/schema+json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", requests
    finally:
        server.shutdown()
        server.server_close()


def check(assert_: Any, output: str) -> Any:
    return run_assert(parse_assert(assert_), OutputView(output), CheckContext())


@pytest.mark.parametrize("op", ["json-schema", "not-json-schema"])
@pytest.mark.parametrize(
    "uri",
    [
        "http://127.0.0.1:9/schema.json",
        "https://example.com/schemas/invoice.json#/$defs/total",
        "http://[::1]:9/s.json",
        "file:///etc/passwd",
        "urn:example:not-here",
    ],
)
def test_a_ref_outside_the_schema_fails_naming_it_and_opens_no_socket(
    no_sockets: list[Any], op: str, uri: str
) -> None:
    result = check({"op": op, "value": {"$ref": uri}}, '{"a": 1}')
    assert result.passed is False  # negated or not: a broken assert never passes
    assert result.evidence["reason"] == "remote_ref_refused"
    assert result.evidence["uri"] == uri.split("#")[0]
    assert uri.split("#")[0] in (result.reason or "")
    assert no_sockets == []


def test_a_real_server_that_would_answer_gets_no_request(
    schema_server: tuple[str, list[str]],
) -> None:
    url, requests = schema_server
    result = check({"op": "json-schema", "value": {"$ref": f"{url}/int.json"}}, "5")
    assert result.passed is False
    assert requests == []


def test_refs_inside_the_schema_and_to_metaschemas_still_resolve(no_sockets: list[Any]) -> None:
    local = {"$defs": {"n": {"type": "integer"}}, "properties": {"a": {"$ref": "#/$defs/n"}}}
    assert check({"op": "json-schema", "value": local}, '{"a": 1}').passed
    assert not check({"op": "json-schema", "value": local}, '{"a": "x"}').passed
    meta = {"$ref": "https://json-schema.org/draft/2020-12/schema"}
    assert check({"op": "json-schema", "value": meta}, '{"type": "object"}').passed
    assert not check({"op": "json-schema", "value": meta}, '{"type": 3}').passed
    assert no_sockets == []


def test_the_gate_reports_the_refused_uri(
    tmp_path: Path, schema_server: tuple[str, list[str]]
) -> None:
    url, requests = schema_server
    frontmatter = (
        "id: remote-ref\ninput: q\nasserts:\n"
        f"  - {{op: json-schema, value: {{$ref: '{url}/int.json'}}}}\n"
    )
    write_golden(tmp_path / "goldens", "remote-ref.md", frontmatter, ORIGIN)
    outputs = write_json(tmp_path / "outputs.json", {"remote-ref": "5"})
    code, out, err = run_cli(["gate", "goldens", "--outputs", outputs], tmp_path)
    assert code == 0, err
    assert "FAIL" in out and f"{url}/int.json" in out and "never fetches" in out
    assert requests == []


@pytest.mark.parametrize("uri", [[], 5, {"a": 1}, True])
def test_a_schema_whose_dollar_schema_is_no_string_fails_the_check_not_the_run(uri: Any) -> None:
    # jsonschema's validator_for raised TypeError / AttributeError on these, out of run_assert.
    result = check({"op": "json-schema", "value": {"$schema": uri}}, '{"a": 1}')
    assert result.passed is False
    assert result.reason == "$schema must be a string, the URI of a metaschema"
