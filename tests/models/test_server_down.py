"""A model server that is down (issue 27, item 13): every call fails, so every result is an
error, and the run must not exit 0 as if it had said something. More errors than
``gate.max_error_rate`` exit 1 in every mode (report, --write-baseline, --check), and each
error names the endpoint it could not reach (never a secret in it), on one line."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from tests.helpers.cli import run_cli
from tests.helpers.fake_openai import fake_openai

GOLDENS = [
    {"id": "g1", "input": "hello", "asserts": ["contains:hello"]},
    {"id": "g2", "input": "bye", "asserts": ["contains:bye"]},
]


def closed_port() -> int:
    """A loopback port nobody listens on: bound, then closed."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def project(tmp_path: Path, base_url: str) -> list[str]:
    (tmp_path / "goldens.jsonl").write_text(
        "".join(json.dumps(g) + "\n" for g in GOLDENS), encoding="utf-8"
    )
    (tmp_path / "cands.yaml").write_text(
        json.dumps(
            {
                "provider": {
                    "type": "openai",
                    "base_url": base_url,
                    "model": "echo",
                    "max_retries": 0,
                    "max_tokens": 16,
                },
                "candidates": [{"id": "a", "prompt": "{{ input }}"}],
            }
        ),
        encoding="utf-8",
    )
    return ["eval", "goldens.jsonl", "--candidates", "cands.yaml", "--no-cache", "--no-save"]


@pytest.mark.parametrize("mode", [[], ["--write-baseline"]])
def test_a_server_that_is_down_exits_1_naming_its_url(tmp_path: Path, mode: list[str]) -> None:
    port = closed_port()
    code, out, err = run_cli([*project(tmp_path, f"http://127.0.0.1:{port}/v1"), *mode], tmp_path)
    assert code == 1, out + err
    assert "Traceback" not in err
    where = f"connection to http://127.0.0.1:{port}/v1 failed (ConnectError"
    assert err.count("\n") == 1 and err.startswith("assay: error: the gate cannot decide: 2 of 2")
    assert where in err
    rows = [line for line in out.splitlines() if line.startswith("  ERROR")]
    assert len(rows) == 2 and all(where in row for row in rows)  # each row says why
    assert "mean score n/a" in out  # errors are no answers: nothing scored (item 16)
    assert "gate: COULD NOT DECIDE (exit 1)" in out
    assert not (tmp_path / "assay-baseline.json").exists()


def test_a_check_against_a_server_that_went_down_exits_1(tmp_path: Path) -> None:
    with fake_openai() as server:
        url = server.url
        args = project(tmp_path, url)
        code, _, err = run_cli([*args, "--write-baseline"], tmp_path)
        assert code == 0, err
    # The server has stopped: its port is closed now.
    code, out, err = run_cli([*args, "--check", "--json"], tmp_path)
    assert code == 1, err
    document = json.loads(out)
    assert document["summary"]["gate"] == "undecided"
    assert document.get("regressions") == []  # failed calls are never regressions
    assert {r["status"] for r in document["results"]} == {"error"}
    assert all(f"connection to {url} failed" in r["notes"][0] for r in document["results"])


def test_the_url_in_an_error_shows_no_secret(tmp_path: Path) -> None:
    port = closed_port()
    url = f"http://user:s3cret@127.0.0.1:{port}/v1?api-key=s3cret#s3cret"
    code, out, err = run_cli([*project(tmp_path, url), "--json"], tmp_path)
    assert code == 1
    assert "s3cret" not in out + err
    [note, *_] = json.loads(out)["results"][0]["notes"]
    assert note.startswith(f"connection to http://127.0.0.1:{port}/v1 failed (")
    assert "\n" not in note


def test_errors_within_max_error_rate_still_decide(tmp_path: Path) -> None:
    (tmp_path / "assay.toml").write_text("[gate]\nmax_error_rate = 1.0\n", encoding="utf-8")
    code, _, err = run_cli(project(tmp_path, f"http://127.0.0.1:{closed_port()}/v1"), tmp_path)
    assert code == 0, err
