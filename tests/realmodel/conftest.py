"""The real model server for the integration suite: llama.cpp's ``llama-server`` serving Gemma 3
270M (base), built and cached by ``scripts/real_model.py``, started on a free loopback port for
the session and stopped by its PID.

The base model has no chat template: ``qa-template.jinja`` is a few-shot Q/A prompt that makes
it answer. A second server, for the judge, constrains every reply to ``judge-schema.json``
(llama.cpp ignores ``minimum``/``maximum``, so the score is an ``enum``). Both run on one thread
(``-t 1``: steady when the other core is busy; two threads collapsed under load).

Without the cached server and model the suite is skipped, except in CI (``CI`` set), where
``scripts/test.sh`` builds them first and their absence is a failure (unless
``ASSAY_SKIP_REAL_MODEL`` asked not to build them).
"""

from __future__ import annotations

import importlib.util
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
SCRIPT = HERE.parents[1] / "scripts" / "real_model.py"
API_KEY = "assay-test-key"
KEY_ENV = "ASSAY_REAL_MODEL_KEY"
READY_TIMEOUT_S = 120.0


@dataclass(frozen=True)
class Server:
    url: str  # the OpenAI-compatible root, http://127.0.0.1:PORT/v1
    log: Path


def _paths() -> tuple[Path, Path]:
    spec = importlib.util.spec_from_file_location("assay_real_model", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.server_path(), module.model_path()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_ready(url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"llama-server exited ({process.returncode}): {log.read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(url + "/health", timeout=2) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.2)
    pytest.fail(f"llama-server was not ready within {READY_TIMEOUT_S:g} s")


@pytest.fixture(scope="session")
def model_files() -> tuple[Path, Path]:
    server, model = _paths()
    if not (server.is_file() and model.is_file()):
        message = (
            f"no cached llama-server / model: run python {SCRIPT.relative_to(HERE.parents[1])}"
        )
        if os.environ.get("CI") and not os.environ.get("ASSAY_SKIP_REAL_MODEL"):
            pytest.fail(message)
        pytest.skip(message)
    return server, model


def _start(files: tuple[Path, Path], folder: Path, name: str, *extra: str) -> Iterator[Server]:
    server, model = files
    port = _free_port()
    log = folder / f"{name}.log"
    command = [
        str(server),
        "-m",
        str(model),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "-t",
        "1",
        "-c",
        "4096",
        "-np",
        "2",  # two slots of 2,048 tokens each
        "--no-webui",
        "--offline",
        "--jinja",
        "--chat-template-file",
        str(HERE / "qa-template.jinja"),
        "--api-key",
        API_KEY,
        *extra,
    ]
    with log.open("wb") as out:
        process = subprocess.Popen(
            command, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    try:
        _wait_ready(f"http://127.0.0.1:{port}", process, log)
        yield Server(f"http://127.0.0.1:{port}/v1", log)
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)


@pytest.fixture(scope="session")
def llama(
    model_files: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    yield from _start(model_files, tmp_path_factory.mktemp("llama"), "answers")


@pytest.fixture(scope="session")
def llama_judge(
    model_files: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    folder = tmp_path_factory.mktemp("llama-judge")
    yield from _start(model_files, folder, "judge", "-jf", str(HERE / "judge-schema.json"))


@pytest.fixture
def api_key(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv(KEY_ENV, API_KEY)
    return KEY_ENV
