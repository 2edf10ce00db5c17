"""The output cache, repeats and resume, end to end: ``assay eval --candidates`` against a real
OpenAI-compatible server on loopback, counting the requests it receives.

The runs are in-process; Ctrl-C (SIGINT, exit 130) and processes sharing one cache are real
``python -m assay`` processes."""

from __future__ import annotations

import asyncio
import json
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from assay.models._cache import OutputCache, cache_key, default_cache_path
from assay.models._runner import Call, run_calls
from assay.models.providers import ProviderConfig
from tests.helpers.cli import process_env, run_cli, spawn
from tests.helpers.fake_openai import FakeOpenAI, echo_text, fake_openai

CLI_TIMEOUT_S = 60.0


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with fake_openai() as s:
        yield s


# --------------------------------------------------------------------------- helpers


def write_goldens(root: Path, goldens: Sequence[dict[str, Any]]) -> Path:
    path = root / "goldens.jsonl"
    path.write_text("".join(json.dumps(g) + "\n" for g in goldens), encoding="utf-8")
    return path


def write_candidates(
    root: Path,
    server: FakeOpenAI,
    candidates: Sequence[tuple[str, str]] = (("brief", "Q: {{ input }}"),),
    *,
    model: str = "echo",
    repeats: int = 1,
    max_concurrency: int = 8,
    name: str = "candidates.yaml",
    **provider: Any,
) -> Path:
    settings = {
        "type": "openai",
        "base_url": server.url,
        "model": model,
        "max_concurrency": max_concurrency,
        "timeout_s": 30,
        **provider,
    }
    document = {
        "provider": settings,
        "candidates": [{"id": cid, "prompt": prompt} for cid, prompt in candidates],
        "repeats": repeats,
        "max_concurrency": max_concurrency,
    }
    path = root / name
    path.write_text(json.dumps(document, indent=2), encoding="utf-8")  # JSON is YAML
    return path


def live_run(
    root: Path, goldens: Path, candidates: Path, *extra: str, exit_code: int = 0
) -> dict[str, Any]:
    """``assay eval GOLDENS --candidates FILE --json``: the exit code expected (0: no error
    result; 1: more errors than max_error_rate, in every mode) and the parsed document."""
    code, out, err = run_cli(
        ["eval", goldens, "--candidates", candidates, "--json", *extra], root, CLI_TIMEOUT_S
    )
    assert code == exit_code, f"exit {code}\nstdout: {out}\nstderr: {err}"
    assert "Traceback" not in err
    return json.loads(out)


def by_pair(document: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(r["candidate"], r["id"]): r for r in document["results"]}


def cache_count(root: Path) -> int:
    path = default_cache_path(root)
    if not path.exists():
        return 0
    with OutputCache(path) as cache:
        return cache.count()


THREE_GOLDENS = [
    {"id": "capital", "input": "What is the capital of France?", "asserts": ["contains:France"]},
    {"id": "sum", "input": "What is 2 + 2?", "asserts": ["contains:2 + 2"]},
    {"id": "colour", "input": "Name a colour.", "asserts": ["contains:purple"]},  # fails
]
TWO_CANDIDATES = (("brief", "Q: {{ input }}"), ("polite", "Please answer. {{ input }}"))


# --------------------------------------------------------------------------- cache


def test_a_second_identical_run_makes_no_request(server: FakeOpenAI, tmp_path: Path) -> None:
    goldens = write_goldens(tmp_path, THREE_GOLDENS)
    candidates = write_candidates(tmp_path, server, TWO_CANDIDATES)
    first = live_run(tmp_path, goldens, candidates)
    assert server.total == 6
    assert first["summary"]["model_calls"]["made"] == 6
    assert first["summary"]["model_calls"]["cache_hits"] == 0
    assert first["summary"]["model_calls"]["errors"] == 0
    statuses = {k: r["status"] for k, r in by_pair(first).items()}
    assert statuses == {
        ("brief", "capital"): "pass",
        ("brief", "sum"): "pass",
        ("brief", "colour"): "fail",
        ("polite", "capital"): "pass",
        ("polite", "sum"): "pass",
        ("polite", "colour"): "fail",
    }
    assert sorted(server.prompts()) == sorted(
        [f"Q: {g['input']}" for g in THREE_GOLDENS]
        + [f"Please answer. {g['input']}" for g in THREE_GOLDENS]
    )
    assert cache_count(tmp_path) == 6

    second = live_run(tmp_path, goldens, candidates)
    assert server.total == 6  # unchanged: every output came from the cache
    assert second["summary"]["model_calls"]["cache_hits"] == 6
    assert second["summary"]["model_calls"]["made"] == 0
    assert second["summary"]["model_calls"]["attempts"] == 0
    assert second["results"] == first["results"]


def test_cached_tokens_are_not_counted_again(server: FakeOpenAI, tmp_path: Path) -> None:
    goldens = write_goldens(tmp_path, THREE_GOLDENS[:1])
    candidates = write_candidates(tmp_path, server, cost_per_1k_input=1.0, cost_per_1k_output=1.0)
    first = live_run(tmp_path, goldens, candidates)["summary"]["model_calls"]
    prompt = "Q: What is the capital of France?"  # 7 words; the answer has 8
    assert (first["input_tokens"], first["output_tokens"]) == (7, 8)
    assert first["cost_usd"] == pytest.approx(15 / 1000)
    second = live_run(tmp_path, goldens, candidates)["summary"]["model_calls"]
    assert (second["input_tokens"], second["output_tokens"], second["cost_usd"]) == (0, 0, 0.0)
    assert server.count(prompt=prompt) == 1


def test_no_cache_makes_requests_again_and_writes_nothing(
    server: FakeOpenAI, tmp_path: Path
) -> None:
    goldens = write_goldens(tmp_path, THREE_GOLDENS)
    candidates = write_candidates(tmp_path, server, TWO_CANDIDATES)
    live_run(tmp_path, goldens, candidates)
    assert server.total == 6
    uncached = live_run(tmp_path, goldens, candidates, "--no-cache")
    assert server.total == 12
    assert uncached["summary"]["model_calls"]["made"] == 6
    assert uncached["summary"]["model_calls"]["cache_hits"] == 0

    fresh = tmp_path / "fresh"
    fresh.mkdir()
    live_run(fresh, goldens, candidates, "--no-cache")
    assert server.total == 18
    assert not default_cache_path(fresh).exists()
    live_run(fresh, goldens, candidates)  # nothing was cached by the --no-cache run
    assert server.total == 24


def test_cache_clear_empties_the_cache(server: FakeOpenAI, tmp_path: Path) -> None:
    goldens = write_goldens(tmp_path, THREE_GOLDENS)
    candidates = write_candidates(tmp_path, server, TWO_CANDIDATES)
    code, out, err = run_cli(["cache", "clear"], tmp_path)
    assert code == 0, err
    assert "the cache is empty" in out

    live_run(tmp_path, goldens, candidates)
    assert cache_count(tmp_path) == 6
    code, out, err = run_cli(["cache", "clear"], tmp_path)
    assert code == 0, err
    assert "removed 6 cached output(s)" in out
    assert cache_count(tmp_path) == 0

    again = live_run(tmp_path, goldens, candidates)
    assert server.total == 12  # everything asked again
    assert again["summary"]["model_calls"]["made"] == 6
    assert again["summary"]["model_calls"]["cache_hits"] == 0


def test_a_changed_prompt_or_model_setting_is_a_cache_miss_for_that_candidate_only(
    server: FakeOpenAI, tmp_path: Path
) -> None:
    goldens = write_goldens(tmp_path, THREE_GOLDENS)
    live_run(tmp_path, goldens, write_candidates(tmp_path, server, TWO_CANDIDATES))
    assert server.total == 6
    changed_prompt = (("brief", "Q: {{ input }}"), ("polite", "Kindly answer. {{ input }}"))
    document = live_run(tmp_path, goldens, write_candidates(tmp_path, server, changed_prompt))
    assert server.total == 9  # only "polite" was asked again
    assert document["summary"]["model_calls"]["cache_hits"] == 3
    assert sorted(server.prompts()[6:]) == sorted(
        f"Kindly answer. {g['input']}" for g in THREE_GOLDENS
    )
    # A different temperature is a different provider identity: everything is asked again.
    live_run(tmp_path, goldens, write_candidates(tmp_path, server, changed_prompt, temperature=0.7))
    assert server.total == 15
    # Concurrency and timeouts are not part of the identity.
    live_run(
        tmp_path,
        goldens,
        write_candidates(
            tmp_path, server, changed_prompt, temperature=0.7, max_concurrency=2, timeout_s=9
        ),
    )
    assert server.total == 15


def test_errors_are_never_cached(server: FakeOpenAI, tmp_path: Path) -> None:
    goldens = write_goldens(
        tmp_path,
        [
            {"id": "fine", "input": "hello", "asserts": ["contains:hello"]},
            {"id": "rejected", "input": "REJECT this", "asserts": ["contains:this"]},
        ],
    )
    candidates = write_candidates(tmp_path, server, model="picky")
    first = live_run(tmp_path, goldens, candidates, exit_code=1)
    results = by_pair(first)
    assert results[("brief", "fine")]["status"] == "pass"
    rejected = results[("brief", "rejected")]
    assert rejected["status"] == "error"
    assert rejected["passed"] is False
    assert any("request rejected (400)" in note for note in rejected["notes"])
    assert first["summary"]["model_calls"]["errors"] == 1
    assert server.total == 2
    assert cache_count(tmp_path) == 1

    second = live_run(tmp_path, goldens, candidates, exit_code=1)
    assert server.total == 3  # the 400 golden was asked again, the good one was not
    assert server.prompts()[-1] == "Q: REJECT this"
    assert second["summary"]["model_calls"]["cache_hits"] == 1
    assert by_pair(second)[("brief", "rejected")]["status"] == "error"


def test_a_server_error_after_retries_is_an_error_result_and_not_cached(
    server: FakeOpenAI, tmp_path: Path
) -> None:
    goldens = write_goldens(tmp_path, THREE_GOLDENS[:1])
    candidates = write_candidates(tmp_path, server, model="always-500", max_retries=0)
    document = live_run(tmp_path, goldens, candidates, exit_code=1)
    [result] = document["results"]
    assert result["status"] == "error"
    assert result["passed"] is False
    assert result["score"] is None  # an error says nothing of the answer: no score
    assert result["notes"] == ["server error (500): scripted 500 after 1 attempt(s)"]
    assert document["summary"]["counts"]["error"] == 1
    assert document["summary"]["mean_score"] is None
    assert cache_count(tmp_path) == 0
    live_run(tmp_path, goldens, candidates, exit_code=1)
    assert server.total == 2


# --------------------------------------------------------------------------- repeats


def test_repeats_make_distinct_requests_with_distinct_cache_keys(
    server: FakeOpenAI, tmp_path: Path
) -> None:
    goldens = write_goldens(tmp_path, THREE_GOLDENS[:2])
    candidates = write_candidates(tmp_path, server, TWO_CANDIDATES, repeats=3)
    first = live_run(tmp_path, goldens, candidates)
    assert server.total == 12  # 2 candidates x 2 goldens x 3 repeats
    for prompt in set(server.prompts()):
        assert server.count(prompt=prompt) == 3
    assert len(set(server.prompts())) == 4
    assert cache_count(tmp_path) == 12
    assert first["summary"]["model_calls"]["made"] == 12
    assert first["summary"]["model_calls"]["repeats"] == 3
    for result in first["results"]:
        assert result["status"] == "pass"
        assert result["repeats"] == {
            "k": 3,
            "passed": 3,
            "pass_fraction": 1.0,
            "pass_at_k": True,
            "pass_hat_k": True,
            "flaky": False,
        }
    assert len(first["results"]) == 4  # one result per (candidate, golden), not per repeat

    second = live_run(tmp_path, goldens, candidates)
    assert server.total == 12
    assert second["summary"]["model_calls"]["cache_hits"] == 12
    assert second["results"] == first["results"]


def test_repeat_index_is_part_of_the_cache_key() -> None:
    config = ProviderConfig(type="openai", base_url="http://127.0.0.1:1/v1", model="m")
    keys = {cache_key(config, "same prompt", repeat) for repeat in range(5)}
    assert len(keys) == 5
    assert cache_key(config, "same prompt", 0) == cache_key(config, "same prompt", 0)
    assert cache_key(config, "same prompt", 0, "judge") != cache_key(config, "same prompt", 0)


def test_raising_repeats_only_asks_for_the_new_repeats(server: FakeOpenAI, tmp_path: Path) -> None:
    goldens = write_goldens(tmp_path, THREE_GOLDENS[:2])
    live_run(tmp_path, goldens, write_candidates(tmp_path, server, repeats=2))
    assert server.total == 4
    document = live_run(tmp_path, goldens, write_candidates(tmp_path, server, repeats=3))
    assert server.total == 6  # repeat index 2 of each golden
    assert document["summary"]["model_calls"]["cache_hits"] == 4


def test_a_golden_passing_some_repeats_is_flagged_flaky(server: FakeOpenAI, tmp_path: Path) -> None:
    # The "alternate" model answers PASS, FAIL, PASS, ... per prompt, whatever the repeat index.
    goldens = write_goldens(
        tmp_path,
        [
            {"id": "wobbly", "input": "Is it stable?", "asserts": ["equals:PASS"]},
            {"id": "steady", "input": "Anything.", "asserts": ["not-contains:MAYBE"]},
        ],
    )
    candidates = write_candidates(tmp_path, server, model="alternate", repeats=3)
    document = live_run(tmp_path, goldens, candidates)
    assert server.total == 6
    results = by_pair(document)
    wobbly = results[("brief", "wobbly")]
    assert wobbly["repeats"] == {
        "k": 3,
        "passed": 2,
        "pass_fraction": pytest.approx(2 / 3),
        "pass_at_k": True,
        "pass_hat_k": False,
        "flaky": True,
    }
    assert wobbly["status"] == "fail"  # pass^k: every repeat must pass
    assert wobbly["passed"] is False
    assert wobbly["score"] == pytest.approx(2 / 3)
    assert "flaky: passed 2 of 3 repeats" in wobbly["notes"]
    steady = results[("brief", "steady")]
    assert steady["status"] == "pass"
    assert steady["repeats"]["flaky"] is False
    assert steady["repeats"]["passed"] == 3
    # The cache keeps each repeat's own answer: a re-run gives the same verdict with no request.
    again = live_run(tmp_path, goldens, candidates)
    assert server.total == 6
    assert by_pair(again)[("brief", "wobbly")]["repeats"] == wobbly["repeats"]


# --------------------------------------------------------------------------- resume


TEN_GOLDENS = [
    {"id": f"g{i:02d}", "input": f"question {i}", "asserts": [f"contains:question {i}"]}
    for i in range(10)
]


def test_ctrl_c_exits_130_keeps_finished_calls_and_resume_completes(
    server: FakeOpenAI, tmp_path: Path
) -> None:
    # One call at a time; the server answers 5 and then hangs: SIGINT arrives while it waits.
    server.hang_after = 5
    goldens = write_goldens(tmp_path, TEN_GOLDENS)
    candidates = write_candidates(tmp_path, server, model="hang-after", max_concurrency=1)
    with spawn(["eval", goldens, "--candidates", candidates, "--json"], tmp_path) as proc:
        try:
            assert server.wait_for(lambda s: s.hanging == 1, timeout=CLI_TIMEOUT_S)
            proc.send_signal(signal.SIGINT)
            out, err = proc.communicate(timeout=CLI_TIMEOUT_S)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    assert "interrupted" in err
    assert out == ""
    assert server.total == 6
    assert cache_count(tmp_path) == 5  # the five finished calls were kept
    answered = set(server.prompts()[:5])
    assert answered == {f"Q: question {i}" for i in range(5)}

    server.release()
    before = server.total
    document = live_run(tmp_path, goldens, candidates)  # the same command again resumes
    resumed = server.prompts()[before:]
    assert sorted(resumed) == [f"Q: question {i}" for i in range(5, 10)]  # only the missing ones
    assert document["summary"]["model_calls"]["cache_hits"] == 5
    assert document["summary"]["model_calls"]["made"] == 5
    assert [r["status"] for r in document["results"]] == ["pass"] * 10
    assert cache_count(tmp_path) == 10


def test_resume_after_an_in_process_cancellation_makes_only_the_missing_calls(
    server: FakeOpenAI, tmp_path: Path
) -> None:
    server.hang_after = 4
    config = ProviderConfig(
        type="openai", base_url=server.url, model="hang-after", max_concurrency=1
    )
    calls = [Call("c", f"g{i}", 0, f"prompt {i}", config) for i in range(9)]
    path = tmp_path / "cache.sqlite"

    async def interrupted() -> None:
        with OutputCache(path) as cache:
            task = asyncio.ensure_future(run_calls(calls, cache=cache, max_concurrency=1))
            while server.hanging < 1:
                assert not task.done()
                await asyncio.sleep(0.01)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task

    asyncio.run(interrupted())
    assert server.total == 5
    with OutputCache(path) as cache:
        assert cache.count() == 4
    server.release()

    async def resumed() -> Any:
        with OutputCache(path) as cache:
            return await run_calls(calls, cache=cache, max_concurrency=1)

    outcomes, stats = asyncio.run(resumed())
    assert [o.completion.text if o.completion else o.error for o in outcomes] == [
        echo_text(f"prompt {i}") for i in range(9)
    ]
    assert [o.cached for o in outcomes] == [True] * 4 + [False] * 5
    assert stats.cache_hits == 4
    assert stats.made == 5
    assert server.prompts()[5:] == [f"prompt {i}" for i in range(4, 9)]


def test_the_resume_flag_is_gone_and_says_so(tmp_path: Path, server: FakeOpenAI) -> None:
    # assay 0.1 parsed --resume and never used it; re-running the same command resumes.
    goldens = write_goldens(tmp_path, THREE_GOLDENS)
    candidates = write_candidates(tmp_path, server)
    code, out, err = run_cli(["eval", goldens, "--candidates", candidates, "--resume"], tmp_path)
    assert code == 1
    assert "No such option '--resume'" in err
    assert "Traceback" not in err
    assert out == ""
    assert server.total == 0


def test_resume_of_a_complete_run_makes_no_request(server: FakeOpenAI, tmp_path: Path) -> None:
    goldens = write_goldens(tmp_path, THREE_GOLDENS)
    candidates = write_candidates(tmp_path, server, TWO_CANDIDATES)
    first = live_run(tmp_path, goldens, candidates)
    again = live_run(tmp_path, goldens, candidates)
    assert server.total == 6
    assert again["results"] == first["results"]


# --------------------------------------------------------------------------- concurrent processes


@pytest.mark.slow
def test_two_processes_sharing_the_cache_both_succeed(server: FakeOpenAI, tmp_path: Path) -> None:
    # Each process runs one call at a time; the server holds the first requests until two are in
    # flight at once, so the two runs provably overlap.
    server.rendezvous_n = 2
    goldens = write_goldens(
        tmp_path,
        [
            {"id": f"c{i:02d}", "input": f"item {i}", "asserts": [f"contains:item {i}"]}
            for i in range(30)
        ],
    )
    candidates = write_candidates(tmp_path, server, model="rendezvous", max_concurrency=1)
    args = ["eval", goldens, "--candidates", candidates, "--json"]
    with spawn(args, tmp_path) as one, spawn(args, tmp_path) as two:
        try:
            out_one, err_one = one.communicate(timeout=CLI_TIMEOUT_S)
            out_two, err_two = two.communicate(timeout=CLI_TIMEOUT_S)
        finally:
            for proc in (one, two):
                if proc.poll() is None:
                    proc.kill()
                    proc.communicate()
    assert one.returncode == 0, err_one
    assert two.returncode == 0, err_two
    assert "Traceback" not in err_one + err_two
    assert server.max_in_flight == 2
    for out in (out_one, out_two):
        document = json.loads(out)
        assert [r["status"] for r in document["results"]] == ["pass"] * 30
        calls = document["summary"]["model_calls"]
        assert calls["made"] + calls["cache_hits"] == 30
        assert calls["errors"] == 0
    assert 30 <= server.total <= 60
    assert cache_count(tmp_path) == 30
    # Afterwards the shared cache serves a third run completely.
    before = server.total
    third = live_run(tmp_path, goldens, candidates)
    assert server.total == before
    assert third["summary"]["model_calls"]["cache_hits"] == 30


OPENER = """
import os, sys, time, traceback
from pathlib import Path
from assay.models._cache import OutputCache
from assay.models.providers import Completion
failed = 0
for folder in map(Path, sys.argv[1:]):
    (folder / f"ready-{os.getpid()}").touch()
    deadline = time.monotonic() + 30
    while not (folder / "go").exists():
        if time.monotonic() > deadline:
            sys.exit(f"{folder.name}: no go file within 30 s")
        time.sleep(0.0005)
    try:
        with OutputCache(folder / "cache" / "outputs.sqlite") as cache:
            cache.put(f"key-{os.getpid()}", Completion("text", 1, 1))
    except Exception:
        failed = 1
        print(f"{folder.name}: " + traceback.format_exc(limit=3), file=sys.stderr)
sys.exit(failed)
"""
OPENERS = 6
ROUNDS = 10


@pytest.mark.slow
def test_processes_opening_a_fresh_cache_at_the_same_moment_all_succeed(tmp_path: Path) -> None:
    # Two CI jobs (or two terminals) starting their first run at once: each opens the new cache
    # file and switches it to WAL mode. Every process must succeed and keep its entry. The same
    # six processes meet at ten fresh caches in turn: each waits (spinning) until all six are
    # ready and the go file appears, so they open the new file at the same moment.
    folders = [tmp_path / f"round-{i}" for i in range(ROUNDS)]
    for folder in folders:
        folder.mkdir()
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", OPENER, *map(str, folders)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=process_env(),
        )
        for _ in range(OPENERS)
    ]
    try:
        for folder in folders:
            deadline = time.monotonic() + CLI_TIMEOUT_S
            while len(list(folder.glob("ready-*"))) < OPENERS:
                if time.monotonic() > deadline or any(p.poll() is not None for p in procs):
                    break  # reported below: a process died or never got here
                time.sleep(0.001)
            (folder / "go").touch()
        outputs = [proc.communicate(timeout=CLI_TIMEOUT_S) for proc in procs]
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
            proc.communicate()
    failures = [
        f"exit {proc.returncode}: {err.strip()[-600:]}"
        for proc, (_out, err) in zip(procs, outputs, strict=True)
        if proc.returncode != 0
    ]
    assert failures == []
    for folder in folders:
        with OutputCache(folder / "cache" / "outputs.sqlite") as cache:
            assert cache.count() == OPENERS, folder.name


def test_opening_the_cache_waits_for_another_writer_instead_of_failing(tmp_path: Path) -> None:
    # What a second process meets while the first is still setting the new cache file up: a
    # write lock held for a moment. Opening must wait for it (busy timeout), not fail.
    path = tmp_path / "outputs.sqlite"
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    try:
        other.execute("CREATE TABLE scratch (a)")
        other.execute("BEGIN IMMEDIATE")
        other.execute("INSERT INTO scratch VALUES (1)")
        timer = threading.Timer(0.3, other.execute, ("COMMIT",))
        timer.start()
        try:
            with OutputCache(path) as cache:
                assert cache.count() == 0
        finally:
            timer.join()
    finally:
        other.close()
