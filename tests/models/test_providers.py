"""Live providers through the runner: the openai provider against a real loopback HTTP server
(retries, Retry-After, timeouts, no retry on 400, malformed bodies, concurrency bounds), the
command, python and echo providers, prompt templates and candidates-file validation."""

from __future__ import annotations

import asyncio
import email.utils
import json
import os
import signal
import socket
import sys
import textwrap
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from assay.errors import ConfigError
from assay.goldens import build_goldens
from assay.models._candidates_file import load_candidates_file
from assay.models._live import build_calls
from assay.models._runner import BACKOFF_CAP_S, Call, Outcome, RunStats, run_calls
from assay.models._template import render
from assay.models.providers import ProviderConfig
from tests.helpers.cli import run_cli
from tests.helpers.fake_openai import FakeOpenAI, echo_text, fake_openai

# --------------------------------------------------------------------------- helpers


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with fake_openai() as s:
        yield s


def openai(server: FakeOpenAI, model: str, **settings: Any) -> ProviderConfig:
    return ProviderConfig(type="openai", base_url=server.url, model=model, **settings)


def run(
    calls: Sequence[Call],
    *,
    max_concurrency: int = 8,
    delays: list[float] | None = None,
    seed: int | None = 7,
) -> tuple[list[Outcome], RunStats]:
    """run_calls without a cache, recording every backoff delay instead of sleeping it."""
    recorded = delays if delays is not None else []
    return asyncio.run(
        run_calls(
            calls,
            cache=None,
            max_concurrency=max_concurrency,
            sleep=recorded.append,
            seed=seed,
        )
    )


def call(config: ProviderConfig, prompt: str = "one two three", golden: str = "g1") -> Call:
    return Call("cand", golden, 0, prompt, config)


# --------------------------------------------------------------------------- openai: success


def test_openai_success_with_usage_accounts_tokens_and_cost(server: FakeOpenAI) -> None:
    config = openai(server, "echo", cost_per_1k_input=1.0, cost_per_1k_output=2.0, temperature=0.3)
    outcomes, stats = run([call(config, "one two three")])
    [outcome] = outcomes
    assert outcome.error is None
    assert outcome.completion is not None
    assert outcome.completion.text == "echo: one two three"
    # The fake server's usage: prompt words (3) and completion words (4).
    assert (outcome.completion.input_tokens, outcome.completion.output_tokens) == (3, 4)
    assert outcome.attempts == 1
    assert outcome.cached is False
    assert stats.made == 1
    assert stats.attempts == 1
    assert stats.errors == 0
    assert (stats.input_tokens, stats.output_tokens) == (3, 4)
    assert stats.cost_usd == pytest.approx((3 * 1.0 + 4 * 2.0) / 1000)
    # What went over the wire: the chat completions request.
    assert server.total == 1
    [seen] = server.seen
    assert seen.body["model"] == "echo"
    assert seen.body["messages"] == [{"role": "user", "content": "one two three"}]
    assert seen.body["temperature"] == 0.3
    assert "max_tokens" not in seen.body
    assert seen.authorization is None


def test_openai_sends_max_tokens_and_the_api_key(
    server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASSAY_TEST_FAKE_KEY", "sk-loopback-123")
    config = openai(server, "echo", max_tokens=12, api_key_env="ASSAY_TEST_FAKE_KEY")
    outcomes, _ = run([call(config)])
    assert outcomes[0].completion is not None
    [seen] = server.seen
    assert seen.body["max_tokens"] == 12
    assert seen.authorization == "Bearer sk-loopback-123"


def test_openai_accumulates_usage_over_many_calls(server: FakeOpenAI) -> None:
    config = openai(server, "echo", cost_per_1k_input=0.5, cost_per_1k_output=1.5)
    prompts = [" ".join(["w"] * n) for n in range(1, 11)]  # 1..10 words
    outcomes, stats = run([call(config, p, f"g{i}") for i, p in enumerate(prompts)])
    assert [o.completion.text if o.completion else None for o in outcomes] == [
        echo_text(p) for p in prompts
    ]
    words_in = sum(range(1, 11))  # 55
    words_out = words_in + 10  # "echo:" adds one word each
    assert (stats.input_tokens, stats.output_tokens) == (words_in, words_out)
    assert stats.cost_usd == pytest.approx((words_in * 0.5 + words_out * 1.5) / 1000)
    assert stats.made == 10
    assert server.total == 10


# --------------------------------------------------------------------------- openai: retries


def test_429_retry_after_is_honoured_then_success(server: FakeOpenAI) -> None:
    server.flaky_failures = 2
    server.retry_after = "7"
    delays: list[float] = []
    outcomes, stats = run([call(openai(server, "flaky-429", max_retries=4))], delays=delays)
    [outcome] = outcomes
    assert outcome.completion is not None
    assert outcome.completion.text == "echo: one two three"
    assert outcome.attempts == 3
    # The server's Retry-After (7 s), not the jittered backoff (which is at most 1 s here).
    assert delays == [7.0, 7.0]
    assert server.count(model="flaky-429") == 3
    assert stats.made == 1
    assert stats.attempts == 3
    assert stats.errors == 0


def test_429_retry_after_zero_means_retry_at_once(server: FakeOpenAI) -> None:
    server.flaky_failures = 1
    server.retry_after = "0"
    delays: list[float] = []
    outcomes, _ = run([call(openai(server, "flaky-429"))], delays=delays)
    assert outcomes[0].completion is not None
    assert delays == [0.0]
    assert server.count() == 2


def test_429_retry_after_as_http_date(server: FakeOpenAI) -> None:
    server.flaky_failures = 1
    server.retry_after = email.utils.formatdate(time.time() + 30, usegmt=True)
    delays: list[float] = []
    outcomes, _ = run([call(openai(server, "flaky-429"))], delays=delays)
    assert outcomes[0].completion is not None
    [delay] = delays
    # 30 s from when the header was made, minus the (sub-second) time since, to the second.
    assert 20.0 <= delay <= 30.0


def test_429_without_retry_after_uses_capped_jittered_backoff(server: FakeOpenAI) -> None:
    server.flaky_failures = 3
    server.retry_after = None
    delays: list[float] = []
    outcomes, _ = run([call(openai(server, "flaky-429", max_retries=3))], delays=delays)
    assert outcomes[0].completion is not None
    assert len(delays) == 3
    # Full jitter: uniform in [0, 0.5 * 2**attempt].
    for attempt, delay in enumerate(delays):
        assert 0.0 <= delay <= 0.5 * 2**attempt


def test_a_huge_retry_after_is_capped(server: FakeOpenAI) -> None:
    server.flaky_failures = 1
    server.retry_after = "3600"
    delays: list[float] = []
    outcomes, _ = run([call(openai(server, "flaky-429"))], delays=delays)
    assert outcomes[0].completion is not None
    assert delays == [BACKOFF_CAP_S * 4]


def test_retry_after_on_a_503_is_honoured_too(server: FakeOpenAI) -> None:
    server.flaky_failures = 2
    server.retry_after = "3"
    delays: list[float] = []
    outcomes, _ = run([call(openai(server, "flaky-500"))], delays=delays)
    assert outcomes[0].completion is not None
    assert delays == [3.0, 3.0]


def test_429_exhausting_retries_is_an_error(server: FakeOpenAI) -> None:
    server.flaky_failures = 10
    delays: list[float] = []
    outcomes, stats = run([call(openai(server, "flaky-429", max_retries=2))], delays=delays)
    [outcome] = outcomes
    assert outcome.completion is None
    assert outcome.error == "rate limited (429): scripted 429 after 3 attempt(s)"
    assert server.count() == 3
    assert delays == [0.0, 0.0]
    assert stats.errors == 1
    assert stats.made == 1  # made, and failed: a call is made however it ends


def test_500_retried_then_success(server: FakeOpenAI) -> None:
    server.flaky_failures = 2
    server.retry_after = None
    delays: list[float] = []
    outcomes, stats = run([call(openai(server, "flaky-500", max_retries=4))], delays=delays)
    assert outcomes[0].completion is not None
    assert outcomes[0].attempts == 3
    assert server.count(model="flaky-500") == 3
    assert len(delays) == 2
    assert stats.errors == 0


def test_500_retried_up_to_max_retries_then_error(server: FakeOpenAI) -> None:
    delays: list[float] = []
    outcomes, stats = run([call(openai(server, "always-500", max_retries=3))], delays=delays)
    [outcome] = outcomes
    assert outcome.completion is None
    assert outcome.error == "server error (500): scripted 500 after 4 attempt(s)"
    assert outcome.attempts == 4
    assert server.count(model="always-500") == 4  # the first attempt + 3 retries
    assert len(delays) == 3
    assert stats.errors == 1
    assert stats.attempts == 4
    assert stats.made == 1


def test_max_retries_zero_makes_exactly_one_request(server: FakeOpenAI) -> None:
    delays: list[float] = []
    outcomes, _ = run([call(openai(server, "always-500", max_retries=0))], delays=delays)
    assert outcomes[0].error == "server error (500): scripted 500 after 1 attempt(s)"
    assert server.count() == 1
    assert delays == []


def test_400_is_never_retried(server: FakeOpenAI) -> None:
    delays: list[float] = []
    outcomes, stats = run([call(openai(server, "bad-request", max_retries=5))], delays=delays)
    [outcome] = outcomes
    assert outcome.completion is None
    assert outcome.error == "request rejected (400): scripted 400 after 1 attempt(s)"
    assert server.count(model="bad-request") == 1
    assert delays == []
    assert stats.errors == 1
    assert stats.attempts == 1


def test_timeout_is_retried_and_reported(server: FakeOpenAI) -> None:
    # The slow model answers only after 30 s (or when the server stops): every attempt times out.
    delays: list[float] = []
    config = openai(server, "slow", timeout_s=0.25, max_retries=1)
    started = time.monotonic()
    outcomes, stats = run([call(config)], delays=delays)
    elapsed = time.monotonic() - started
    [outcome] = outcomes
    assert outcome.completion is None
    assert outcome.error == "timed out after 0.25 s after 2 attempt(s)"
    assert server.count(model="slow") == 2
    assert len(delays) == 1
    assert stats.errors == 1
    assert elapsed < 20  # generous: two 0.25 s timeouts, never the server's 30 s


@pytest.mark.parametrize("model", ["malformed", "no-choices"])
def test_malformed_json_is_retried_then_an_error(server: FakeOpenAI, model: str) -> None:
    delays: list[float] = []
    outcomes, stats = run([call(openai(server, model, max_retries=2))], delays=delays)
    [outcome] = outcomes
    assert outcome.completion is None
    assert outcome.error == (
        "malformed response (no choices[0].message.content) after 3 attempt(s)"
    )
    assert server.count(model=model) == 3
    assert stats.errors == 1


def test_connection_refused_is_retried_and_reported() -> None:
    # A loopback port nobody listens on (bound, then closed).
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = ProviderConfig(
        type="openai", base_url=f"http://127.0.0.1:{port}/v1", model="echo", max_retries=2
    )
    delays: list[float] = []
    outcomes, stats = run([call(config)], delays=delays)
    [outcome] = outcomes
    assert outcome.completion is None
    assert outcome.error is not None
    # The endpoint is named (issue 27, item 13): a server that is down says where it was looked for.
    assert outcome.error.startswith(
        f"connection to http://127.0.0.1:{port}/v1 failed (ConnectError"
    )
    assert outcome.error.endswith("after 3 attempt(s)")
    assert len(delays) == 2
    assert stats.errors == 1


def test_a_mix_of_outcomes_keeps_call_order(server: FakeOpenAI) -> None:
    server.flaky_failures = 1
    models = ["echo", "bad-request", "flaky-500", "always-500", "flaky-429", "malformed"]
    calls = [call(openai(server, m, max_retries=1), f"prompt {m}", m) for m in models]
    outcomes, stats = run(calls, max_concurrency=3)
    texts = [o.completion.text if o.completion else o.error for o in outcomes]
    assert texts == [
        "echo: prompt echo",
        "request rejected (400): scripted 400 after 1 attempt(s)",
        "echo: prompt flaky-500",
        "server error (500): scripted 500 after 2 attempt(s)",
        "echo: prompt flaky-429",
        "malformed response (no choices[0].message.content) after 2 attempt(s)",
    ]
    assert stats.made == 6  # three answered, three failed
    assert stats.errors == 3
    assert stats.attempts == 1 + 1 + 2 + 2 + 2 + 2
    assert server.total == stats.attempts


# --------------------------------------------------------------------------- concurrency


def test_provider_max_concurrency_bounds_requests_in_flight(server: FakeOpenAI) -> None:
    # Each request is held until 3 are in flight at once (or 5 s), so a bound of 3 is reached
    # and anything above it would be seen.
    server.rendezvous_n = 3
    config = openai(server, "rendezvous", max_concurrency=3)
    calls = [call(config, f"prompt {i}", f"g{i}") for i in range(12)]
    outcomes, stats = run(calls, max_concurrency=10)
    assert [o.completion.text if o.completion else o.error for o in outcomes] == [
        f"echo: prompt {i}" for i in range(12)
    ]
    assert server.max_in_flight == 3
    assert stats.made == 12


def test_global_max_concurrency_bounds_requests_in_flight(server: FakeOpenAI) -> None:
    server.rendezvous_n = 2
    config = openai(server, "rendezvous", max_concurrency=16)
    calls = [call(config, f"prompt {i}", f"g{i}") for i in range(10)]
    outcomes, _ = run(calls, max_concurrency=2)
    assert all(o.completion is not None for o in outcomes)
    assert server.max_in_flight == 2
    assert server.total == 10


def test_global_bound_holds_across_providers(server: FakeOpenAI) -> None:
    server.rendezvous_n = 4
    a = openai(server, "rendezvous", max_concurrency=4)
    b = openai(server, "rendezvous", max_concurrency=4, temperature=0.5)  # another provider
    calls = [call(a if i % 2 else b, f"prompt {i}", f"g{i}") for i in range(16)]
    outcomes, _ = run(calls, max_concurrency=4)
    assert all(o.completion is not None for o in outcomes)
    assert server.max_in_flight == 4


# --------------------------------------------------------------------------- api key errors

GOLDENS_JSONL = (
    '{"id": "g1", "input": "hello", "asserts": ["contains:hello"]}\n'
    '{"id": "g2", "input": "world", "asserts": ["contains:world"]}\n'
)


def _project(tmp_path: Path, provider: str) -> tuple[Path, Path]:
    goldens = tmp_path / "goldens.jsonl"
    goldens.write_text(GOLDENS_JSONL, encoding="utf-8")
    candidates = tmp_path / "candidates.yaml"
    candidates.write_text(
        f"provider: {provider}\ncandidates:\n  - {{id: a, prompt: '{{{{ input }}}}'}}\n",
        encoding="utf-8",
    )
    return goldens, candidates


def test_missing_api_key_env_is_a_clear_error_in_process(
    server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ASSAY_TEST_MISSING_KEY", raising=False)
    config = openai(server, "echo", api_key_env="ASSAY_TEST_MISSING_KEY")
    with pytest.raises(Exception, match=r"ASSAY_TEST_MISSING_KEY \(api_key_env\) is not set"):
        run([call(config)])
    assert server.total == 0


def test_missing_api_key_env_through_the_cli_exits_1_without_traceback(
    server: FakeOpenAI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ASSAY_TEST_MISSING_KEY", raising=False)
    goldens, candidates = _project(
        tmp_path,
        f"{{type: openai, base_url: '{server.url}', model: echo, "
        "api_key_env: ASSAY_TEST_MISSING_KEY}",
    )
    code, out, err = run_cli(["eval", goldens, "--candidates", candidates, "--json"], tmp_path)
    assert "Traceback" not in err
    assert code == 1
    assert "ASSAY_TEST_MISSING_KEY" in err
    assert "api_key_env" in err
    assert str(candidates) in err  # the contract: the message names the file (and the field)
    assert out == ""
    assert server.total == 0


def test_present_api_key_env_through_the_cli_is_sent(
    server: FakeOpenAI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    goldens, candidates = _project(
        tmp_path,
        f"{{type: openai, base_url: '{server.url}', model: echo, api_key_env: ASSAY_TEST_KEY2}}",
    )
    monkeypatch.setenv("ASSAY_TEST_KEY2", "sk-cli-456")
    code, _out, err = run_cli(["eval", goldens, "--candidates", candidates, "--json"], tmp_path)
    assert code == 0, err
    assert {s.authorization for s in server.seen} == {"Bearer sk-cli-456"}
    assert server.total == 2


# --------------------------------------------------------------------------- command provider


def command(cmd: str, **settings: Any) -> ProviderConfig:
    return ProviderConfig(type="command", command=cmd, **settings)


def test_command_provider_reads_the_prompt_on_stdin() -> None:
    outcomes, stats = run(
        [
            call(command("cat"), "hello from stdin", "g1"),
            call(command("tr a-z A-Z"), "shout this", "g2"),
            call(command("wc -w"), "one two three four", "g3"),
        ]
    )
    texts = [o.completion.text if o.completion else o.error for o in outcomes]
    assert texts[0] == "hello from stdin"
    assert texts[1] == "SHOUT THIS"
    assert texts[2] is not None and texts[2].strip() == "4"
    assert stats.made == 3
    assert stats.errors == 0


def test_command_provider_keeps_unicode() -> None:
    outcomes, _ = run([call(command("cat"), "naïve café — 東京")])
    assert outcomes[0].completion is not None
    assert outcomes[0].completion.text == "naïve café — 東京"


def test_command_provider_failing_exit_code_is_an_error_not_retried() -> None:
    delays: list[float] = []
    outcomes, stats = run(
        [call(command("echo secret-prompt-leak >&2; exit 3", max_retries=4))], delays=delays
    )
    [outcome] = outcomes
    assert outcome.completion is None
    assert outcome.error == "the command exited with 3 after 1 attempt(s)"
    assert "secret" not in outcome.error  # stderr is never echoed (it may quote the prompt)
    assert delays == []
    assert stats.errors == 1


def test_command_provider_timeout_is_reported_and_retried() -> None:
    # `sleep 10` outlives the 0.25 s timeout; the call must end at the timeout, not after 10 s.
    delays: list[float] = []
    started = time.monotonic()
    outcomes, stats = run([call(command("sleep 10", timeout_s=0.25, max_retries=1))], delays=delays)
    elapsed = time.monotonic() - started
    [outcome] = outcomes
    assert outcome.completion is None
    assert outcome.error == "the command timed out after 0.25 s after 2 attempt(s)"
    assert len(delays) == 1
    assert stats.errors == 1
    assert elapsed < 8  # generous for two 0.25 s timeouts; the command itself sleeps 2 x 10 s


def _alive(pid: int) -> bool:
    """Whether ``pid`` still runs (a killed zombie nobody has reaped yet does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


def _gone_within(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while _alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def test_command_provider_timeout_also_stops_the_commands_children(tmp_path: Path) -> None:
    # A command that is more than one program (`a; b`, a pipeline, a script) has children that
    # hold stdout: the timeout must still end the call and stop them. A watchdog kills the child
    # after 8 s so the test is bounded either way.
    pid_file = tmp_path / "child.pid"
    cmd = f"sleep 30 & echo $! > {pid_file}; wait"
    fired = threading.Event()

    def child_pid() -> int | None:
        text = pid_file.read_text().strip() if pid_file.exists() else ""
        return int(text) if text else None

    def watchdog() -> None:
        if done.wait(8):
            return
        pid = child_pid()
        if pid is not None and _alive(pid):
            fired.set()
            os.kill(pid, signal.SIGKILL)

    done = threading.Event()
    guard = threading.Thread(target=watchdog, daemon=True)
    guard.start()
    started = time.monotonic()
    try:
        outcomes, _ = run([call(command(cmd, timeout_s=0.5, max_retries=0))])
        elapsed = time.monotonic() - started
    finally:
        done.set()
        guard.join(timeout=10)
        pid = child_pid()
        leaked = pid is not None and not _gone_within(pid, 5)
        if leaked and pid is not None:
            os.kill(pid, signal.SIGKILL)
    assert pid is not None, "the command never started its child"
    assert outcomes[0].error == "the command timed out after 0.5 s after 1 attempt(s)"
    assert not fired.is_set(), "the call outlived its timeout until the watchdog killed the child"
    assert elapsed < 6  # generous against the 0.5 s timeout
    assert not leaked, "the command's child process outlived the timeout"


# --------------------------------------------------------------------------- python provider

PY_MODULE = textwrap.dedent(
    """
    import asyncio
    import threading

    release = threading.Event()


    def upper(prompt):
        return prompt.upper()


    async def counted(prompt):
        await asyncio.sleep(0)
        return {"text": "async:" + prompt, "input_tokens": 5, "output_tokens": 7}


    def boom(prompt):
        raise RuntimeError("prompt was " + prompt)


    def wrong_type(prompt):
        return 42


    async def hangs(prompt):
        await asyncio.sleep(30)
        return "late"


    def blocks(prompt):
        release.wait(30)
        return "late"


    not_callable = "nope"
    """
)


@pytest.fixture
def py_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    name = f"assay_live_fn_{os.getpid()}_{tmp_path.name.replace('-', '_')}"
    folder = tmp_path / "pymods"
    folder.mkdir()
    (folder / f"{name}.py").write_text(PY_MODULE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(folder))
    yield name
    sys.modules.pop(name, None)


def python_fn(spec: str, **settings: Any) -> ProviderConfig:
    return ProviderConfig(type="python", function=spec, **settings)


def test_python_provider_sync_and_async_functions(py_module: str) -> None:
    outcomes, stats = run(
        [
            call(python_fn(f"{py_module}:upper"), "make me loud", "g1"),
            call(python_fn(f"{py_module}:counted", cost_per_1k_input=2.0), "quiet", "g2"),
        ]
    )
    assert outcomes[0].completion is not None
    assert outcomes[0].completion.text == "MAKE ME LOUD"
    assert (outcomes[0].completion.input_tokens, outcomes[0].completion.output_tokens) == (0, 0)
    assert outcomes[1].completion is not None
    assert outcomes[1].completion.text == "async:quiet"
    assert (outcomes[1].completion.input_tokens, outcomes[1].completion.output_tokens) == (5, 7)
    assert (stats.input_tokens, stats.output_tokens) == (5, 7)
    assert stats.cost_usd == pytest.approx(5 * 2.0 / 1000)


def test_python_provider_exception_is_an_error_naming_its_type_and_message(py_module: str) -> None:
    delays: list[float] = []
    outcomes, stats = run(
        [call(python_fn(f"{py_module}:boom", max_retries=3), "private words")], delays=delays
    )
    # The message is the function's own text (here it quotes the prompt: its author's choice);
    # it goes into the result's note, never to stderr.
    assert outcomes[0].error == (
        "the function raised RuntimeError: prompt was private words after 1 attempt(s)"
    )
    assert delays == []
    assert stats.errors == 1


def test_python_provider_wrong_return_type_is_an_error(py_module: str) -> None:
    outcomes, _ = run([call(python_fn(f"{py_module}:wrong_type"))])
    assert outcomes[0].error == (
        "the function must return a string or {text: ...} after 1 attempt(s)"
    )


def test_python_provider_async_timeout(py_module: str) -> None:
    delays: list[float] = []
    outcomes, _ = run(
        [call(python_fn(f"{py_module}:hangs", timeout_s=0.15, max_retries=1))], delays=delays
    )
    assert outcomes[0].error == "the function timed out after 0.15 s after 2 attempt(s)"
    assert len(delays) == 1


def test_python_provider_sync_timeout(py_module: str) -> None:
    async def main() -> list[Outcome]:
        try:
            outcomes, _ = await run_calls(
                [call(python_fn(f"{py_module}:blocks", timeout_s=0.3, max_retries=0))],
                cache=None,
                max_concurrency=1,
            )
        finally:
            # Let the worker thread finish, so closing the loop does not wait 30 s for it.
            sys.modules[py_module].release.set()
        return outcomes

    outcomes = asyncio.run(main())
    assert outcomes[0].error == "the function timed out after 0.3 s after 1 attempt(s)"


@pytest.mark.parametrize(
    "spec, message",
    [
        ("no_colon_here", "module:function"),
        ("assay_no_such_module_xyz:fn", "assay_no_such_module_xyz"),
    ],
)
def test_python_provider_bad_function_spec_is_an_error(spec: str, message: str) -> None:
    with pytest.raises(Exception, match=message):
        run([call(python_fn(spec))])


def test_python_provider_not_callable_through_the_cli_exits_1_without_traceback(
    py_module: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    goldens, candidates = _project(tmp_path, f"{{type: python, function: '{py_module}:nope'}}")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path / "pymods"))
    code, _out, err = run_cli(["eval", goldens, "--candidates", candidates, "--json"], tmp_path)
    assert "Traceback" not in err
    assert code == 1
    assert f"{py_module}:nope" in err
    assert str(candidates) in err  # the contract: the message names the file (and the field)


# --------------------------------------------------------------------------- echo provider


def test_echo_provider_returns_the_rendered_prompt_with_word_counts() -> None:
    outcomes, stats = run([call(ProviderConfig(type="echo"), "four little words here")])
    assert outcomes[0].completion is not None
    assert outcomes[0].completion.text == "four little words here"
    assert (outcomes[0].completion.input_tokens, outcomes[0].completion.output_tokens) == (4, 4)
    assert stats.made == 1


def test_echo_provider_through_the_cli_scores_the_rendered_prompt(tmp_path: Path) -> None:
    goldens, candidates = _project(tmp_path, "{type: echo}")
    code, out, err = run_cli(
        ["eval", goldens, "--candidates", candidates, "--json", "--no-cache"], tmp_path
    )
    assert code == 0, err
    document = json.loads(out)
    assert [(r["id"], r["status"]) for r in document["results"]] == [("g1", "pass"), ("g2", "pass")]
    assert document["summary"]["model_calls"]["made"] == 2
    assert document["summary"]["model_calls"]["cache_hits"] == 0


# --------------------------------------------------------------------------- templates


def golden(**data: Any) -> Any:
    return build_goldens(data, source="mem", default_id=None, folder_tier=None)[0]


def test_template_input_string_and_id() -> None:
    g = golden(id="cap-1", input="What is the capital of France?", expected="Paris")
    context = {"id": g.id, "input": g.input}
    assert render("[{{ id }}] Q: {{input}}", context, where="c") == (
        "[cap-1] Q: What is the capital of France?"
    )


def test_template_dotted_paths_and_json_values() -> None:
    context = {
        "id": "x",
        "input": {"question": "Why?", "tags": ["a", "b"], "n": 3, "meta": {"lang": "fr"}},
    }
    assert render("{{ input.question }}", context, where="c") == "Why?"
    assert render("{{ input.tags.1 }}/{{ input.n }}", context, where="c") == "b/3"
    assert render("{{ input.meta.lang }}", context, where="c") == "fr"
    rendered = render("{{ input }}", context, where="c")
    assert json.loads(rendered) == context["input"]
    assert json.loads(render("{{ input.tags }}", context, where="c")) == ["a", "b"]


def _spec(tmp_path: Path, prompt: str, extra: str = "") -> Any:
    path = tmp_path / "cands.yaml"
    path.write_text(
        f"provider: {{type: echo}}\ncandidates:\n  - id: brief\n    prompt: {prompt!r}\n{extra}",
        encoding="utf-8",
    )
    return load_candidates_file(path)


def test_build_calls_renders_every_golden_and_repeat(tmp_path: Path) -> None:
    spec = _spec(tmp_path, "[{{ id }}] {{ input.question }}", "repeats: 2\n")
    goldens = [
        golden(id="q1", input={"question": "first?"}, expected="x"),
        golden(id="q2", input={"question": "second?"}, rubric="be nice"),
    ]
    calls = build_calls(goldens, spec)
    assert [(c.candidate, c.golden, c.repeat, c.prompt) for c in calls] == [
        ("brief", "q1", 0, "[q1] first?"),
        ("brief", "q1", 1, "[q1] first?"),
        ("brief", "q2", 0, "[q2] second?"),
        ("brief", "q2", 1, "[q2] second?"),
    ]


def test_template_title_and_role_are_available(tmp_path: Path) -> None:
    spec = _spec(tmp_path, "{{ role }}: {{ title }} / {{ tier }}")
    g = golden(id="t1", input="x", title="Fix the bug", role="engineer", tier="smoke")
    [c] = build_calls([g], spec)
    assert c.prompt == "engineer: Fix the bug / smoke"


def test_unknown_placeholder_is_a_config_error_naming_the_candidate(tmp_path: Path) -> None:
    spec = _spec(tmp_path, "Q: {{ input.qestion }}")
    g = golden(id="q1", input={"question": "first?"})
    with pytest.raises(ConfigError) as info:
        build_calls([g], spec)
    message = str(info.value)
    assert "candidate brief" in message
    assert "uses 'input.qestion' (line 1), which golden 'q1' does not have" in message
    assert str(tmp_path / "cands.yaml") in message
    assert "field 'prompt'" in message


@pytest.mark.parametrize("name", ["expected", "rubric", "asserts", "threshold", "source"])
def test_expected_rubric_and_asserts_are_not_available_to_templates(
    tmp_path: Path, name: str
) -> None:
    spec = _spec(tmp_path, "Answer: {{ " + name + " }}")
    g = golden(
        id="secret",
        input="q",
        expected="THE ANSWER",
        rubric="grade it",
        asserts=["contains:THE ANSWER"],
        threshold=0.5,
    )
    with pytest.raises(ConfigError, match=r"candidate brief") as info:
        build_calls([g], spec)
    assert f"uses {name!r} (line 1), which golden 'secret' does not have" in str(info.value)
    assert "THE ANSWER" not in str(info.value)


def test_unknown_placeholder_through_the_cli_exits_1_and_makes_no_call(
    server: FakeOpenAI, tmp_path: Path
) -> None:
    goldens = tmp_path / "goldens.jsonl"
    goldens.write_text(GOLDENS_JSONL, encoding="utf-8")
    candidates = tmp_path / "candidates.yaml"
    candidates.write_text(
        f"provider: {{type: openai, base_url: '{server.url}', model: echo}}\n"
        "candidates:\n  - {id: ok, prompt: '{{ input }}'}\n"
        "  - {id: leaky, prompt: 'The answer is {{ expected }}'}\n",
        encoding="utf-8",
    )
    code, out, err = run_cli(["eval", goldens, "--candidates", candidates, "--json"], tmp_path)
    assert code == 1
    assert "Traceback" not in err
    assert "candidate leaky" in err
    assert "uses 'expected' (line 1), which golden 'g1' does not have" in err
    assert out == ""
    assert server.total == 0  # fail closed before any call is made


# --------------------------------------------------------------------------- file validation

VALID_PROVIDER = "provider: {type: echo}\n"
ONE_CANDIDATE = "candidates:\n  - {id: a, prompt: 'p {{ input }}'}\n"


@pytest.mark.parametrize(
    "text, field",
    [
        (ONE_CANDIDATE, "provider"),
        ("provider: echo\n" + ONE_CANDIDATE, "provider"),
        ("provider: {type: llama}\n" + ONE_CANDIDATE, "provider.type"),
        ("provider: {model: m}\n" + ONE_CANDIDATE, "provider.type"),
        ("provider: {type: echo, modle: m}\n" + ONE_CANDIDATE, "provider.modle"),
        ("provider: {type: openai, model: m, top_p: 2}\n" + ONE_CANDIDATE, "provider.top_p"),
        ("provider: {type: command}\n" + ONE_CANDIDATE, "provider.command"),
        ("provider: {type: python}\n" + ONE_CANDIDATE, "provider.function"),
        (
            "provider: {type: echo, max_concurrency: 0}\n" + ONE_CANDIDATE,
            "provider.max_concurrency",
        ),
        (
            "provider: {type: echo, max_concurrency: 2.5}\n" + ONE_CANDIDATE,
            "provider.max_concurrency",
        ),
        ("provider: {type: echo, max_retries: -1}\n" + ONE_CANDIDATE, "provider.max_retries"),
        ("provider: {type: echo, timeout_s: 0}\n" + ONE_CANDIDATE, "provider.timeout_s"),
        ("provider: {type: echo, timeout_s: fast}\n" + ONE_CANDIDATE, "provider.timeout_s"),
        ("provider: {type: echo, temperature: .nan}\n" + ONE_CANDIDATE, "provider.temperature"),
        ("provider: {type: echo, model: 3}\n" + ONE_CANDIDATE, "provider.model"),
        ("provider: {type: echo, max_tokens: true}\n" + ONE_CANDIDATE, "provider.max_tokens"),
        (VALID_PROVIDER, "candidates"),
        (VALID_PROVIDER + "candidates: []\n", "candidates"),
        (VALID_PROVIDER + "candidates: {a: b}\n", "candidates"),
        (VALID_PROVIDER + "candidates:\n  - just a string\n", "candidates[0]"),
        (VALID_PROVIDER + "candidates:\n  - {prompt: p}\n", "candidates[0].id"),
        (VALID_PROVIDER + "candidates:\n  - {id: '', prompt: p}\n", "candidates[0].id"),
        (VALID_PROVIDER + "candidates:\n  - {id: a}\n", "candidates[0].prompt"),
        (VALID_PROVIDER + "candidates:\n  - {id: a, prompt: ''}\n", "candidates[0].prompt"),
        (
            VALID_PROVIDER + "candidates:\n  - {id: a, prompt: p}\n  - {id: a, prompt: q}\n",
            "candidates[1].id",
        ),
        (VALID_PROVIDER + "candidates:\n  - {id: a, prompt: p, temp: 1}\n", "candidates[0].temp"),
        (
            VALID_PROVIDER + "candidates:\n  - {id: a, prompt: p, provider: fast}\n",
            "candidates[0].provider",
        ),
        (
            VALID_PROVIDER + "candidates:\n  - {id: a, prompt: p, provider: {type: command}}\n",
            "candidates[0].provider.command",
        ),
        (
            VALID_PROVIDER + "candidates:\n  - {id: a, prompt: p, provider: {max_retries: x}}\n",
            "candidates[0].provider.max_retries",
        ),
        (VALID_PROVIDER + ONE_CANDIDATE + "repeats: 0\n", "repeats"),
        (VALID_PROVIDER + ONE_CANDIDATE + "repeats: '3'\n", "repeats"),
        (VALID_PROVIDER + ONE_CANDIDATE + "repeats: true\n", "repeats"),
        (VALID_PROVIDER + ONE_CANDIDATE + "max_concurrency: 0\n", "max_concurrency"),
        (VALID_PROVIDER + ONE_CANDIDATE + "max_concurrency: many\n", "max_concurrency"),
        (VALID_PROVIDER + ONE_CANDIDATE + "retries: 3\n", "retries"),
    ],
)
def test_candidates_file_errors_name_the_file_and_field(
    tmp_path: Path, text: str, field: str
) -> None:
    path = tmp_path / "cands.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_candidates_file(path)
    assert info.value.source == str(path)
    assert info.value.field == field
    assert str(path) in str(info.value)
    assert f"field '{field}'" in str(info.value)


@pytest.mark.parametrize(
    "text",
    ["", "- a\n- b\n", "provider: {type: echo\ncandidates: [\n", "just text\n"],
    ids=["empty", "list", "invalid-yaml", "scalar"],
)
def test_candidates_file_that_is_not_a_mapping_names_the_file(tmp_path: Path, text: str) -> None:
    path = tmp_path / "cands.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_candidates_file(path)
    assert info.value.source == str(path)
    assert str(path) in str(info.value)


def test_candidates_file_missing_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "nope.yaml"
    with pytest.raises(ConfigError, match="candidates file not found") as info:
        load_candidates_file(path)
    assert info.value.source == str(path)


def test_candidates_file_valid_merges_provider_overrides(tmp_path: Path) -> None:
    path = tmp_path / "cands.yaml"
    path.write_text(
        textwrap.dedent(
            """\
            provider: {type: openai, base_url: "http://127.0.0.1:1/v1", model: m1,
                       max_concurrency: 8, timeout_s: 5}
            candidates:
              - {id: brief, prompt: "{{ input }}"}
              - {id: detailed, prompt: "More: {{ input }}", provider: {model: m2, temperature: 1}}
            repeats: 3
            max_concurrency: 32
            """
        ),
        encoding="utf-8",
    )
    spec = load_candidates_file(path)
    assert spec.repeats == 3
    assert spec.max_concurrency == 32
    brief, detailed = spec.candidates
    assert (brief.id, brief.provider.model, brief.provider.temperature) == ("brief", "m1", 0.0)
    assert (detailed.id, detailed.provider.model, detailed.provider.temperature) == (
        "detailed",
        "m2",
        1.0,
    )
    assert detailed.provider.base_url == "http://127.0.0.1:1/v1"
    assert detailed.provider.timeout_s == 5.0
    assert detailed.provider.max_concurrency == 8


def test_candidates_file_error_through_the_cli(tmp_path: Path) -> None:
    goldens = tmp_path / "goldens.jsonl"
    goldens.write_text(GOLDENS_JSONL, encoding="utf-8")
    candidates = tmp_path / "candidates.yaml"
    candidates.write_text(VALID_PROVIDER + ONE_CANDIDATE + "repeats: 0\n", encoding="utf-8")
    code, out, err = run_cli(["eval", goldens, "--candidates", candidates, "--json"], tmp_path)
    assert code == 1
    assert out == ""
    assert "Traceback" not in err
    assert str(candidates) in err or "candidates.yaml" in err
    assert "field 'repeats'" in err
