"""Benchmark live candidates: 2 candidates x 1,000 goldens against an OpenAI-compatible server on
loopback that answers after 50 ms (tests/helpers/fake_openai.py, model "latency-50ms").

1. ``assay eval GOLDENS --candidates FILE --no-cache --json`` in a fresh process, max_concurrency 64
   (global and per provider), beside a bare client making the same 2,000 requests with the same
   64 in flight (``--bare-client``: asyncio streams, one keep-alive connection per worker, the
   request written by hand and the JSON answer parsed and checked, about as little as a Python
   client can do), also in a fresh process. The two alternate, ``--rounds`` times, against the
   same server: a ThreadingHTTPServer in this bench's process, sharing the machine's cores with
   whichever client runs (its cost, about 0.25 ms of CPU a request, is the same for both).
   Reported: assay / bare (target <= 1.3), assay / ideal and bare / ideal, the ideal being the
   makespan ceil(2000 / 64) x 50 ms; and where each run's time went, from the server's clock:
   process start to the first request, first to last request, last request to exit.
2. A fully cached re-run of the same (after the run that fills the cache). Target: < 2 s.

Wall clock includes the process start (interpreter, imports), as a user or CI would see it. The
children write byte-code (PYTHONDONTWRITEBYTECODE is dropped for them) and the cache-filling run
goes first, so the timed runs import compiled modules, as an installed assay does.

Usage: python bench/live_bench.py [--goldens 1000] [--candidates 2] [--concurrency 64]
       [--rounds 1] [--profile]   (--profile: a cProfile of one uncached run, run.prof)
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathlib import Path

    from tests.helpers.fake_openai import FakeOpenAI

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LATENCY_S = 0.050
MODEL = "latency-50ms"
PROMPT = "Variant {c}. Answer briefly.\n{question}"


def question(i: int) -> str:
    return f"What is item {i}?"


# --------------------------------------------------------------------------- the bare client


async def bare_requests(url: str, goldens: int, candidates: int, concurrency: int) -> int:
    """The same requests as assay's run, made by hand; returns how many answers passed."""
    import asyncio
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    head = (
        f"POST {parts.path.rstrip('/')}/chat/completions HTTP/1.1\r\nHost: {host}:{port}\r\n"
        "Content-Type: application/json\r\nContent-Length: "
    ).encode()
    work = [(c, i) for c in range(candidates) for i in range(goldens)]
    passed = 0

    async def worker() -> None:
        nonlocal passed
        reader, writer = await asyncio.open_connection(host, port)
        while work:
            c, i = work.pop()
            content = PROMPT.format(c=c, question=question(i))
            message = {"role": "user", "content": content}
            body = json.dumps({"model": MODEL, "messages": [message], "temperature": 0.0}).encode()
            writer.write(head + b"%d\r\n\r\n" % len(body) + body)
            response = await reader.readuntil(b"\r\n\r\n")
            length = int(response.lower().split(b"content-length:")[1].split(b"\r\n")[0])
            answer = json.loads(await reader.readexactly(length))
            passed += question(i) in answer["choices"][0]["message"]["content"]
        writer.close()

    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return passed


def bare_client(argv: list[str]) -> None:
    """``--bare-client URL GOLDENS CANDIDATES CONCURRENCY``: the bare client's process."""
    import asyncio

    url, goldens, candidates, concurrency = argv[0], *map(int, argv[1:4])
    passed = asyncio.run(bare_requests(url, goldens, candidates, concurrency))
    if passed != goldens * candidates:
        raise SystemExit(f"bare client: {passed} of {goldens * candidates} answers passed")
    print(passed)


# --------------------------------------------------------------------------- the bench


def write_project(
    folder: Path, server: FakeOpenAI, goldens: int, candidates: int, limit: int
) -> tuple[Path, Path]:
    import shutil

    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    goldens_path = folder / "goldens.jsonl"
    with open(goldens_path, "w", encoding="utf-8") as handle:
        for i in range(goldens):
            golden = {
                "id": f"live-{i:05d}",
                "input": {"question": question(i), "n": i},
                "asserts": [f"contains:{question(i)}"],
            }
            handle.write(json.dumps(golden) + "\n")
    document = {
        "provider": {
            "type": "openai",
            "base_url": server.url,
            "model": MODEL,
            "max_concurrency": limit,
            "timeout_s": 30,
        },
        "candidates": [
            {"id": f"cand-{c}", "prompt": PROMPT.format(c=c, question="{{ input.question }}")}
            for c in range(candidates)
        ],
        "max_concurrency": limit,
    }
    candidates_path = folder / "candidates.yaml"
    candidates_path.write_text(json.dumps(document, indent=2), encoding="utf-8")
    return goldens_path, candidates_path


def child_env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONWARNINGS", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed assay has its byte-code
    return env


class Timed:
    """One child process's run, timed from its start, and the requests the server saw."""

    def __init__(self, server: FakeOpenAI, command: list[str], folder: Path):
        import subprocess

        before = server.total
        start = time.monotonic()
        proc = subprocess.run(
            command, cwd=folder, capture_output=True, text=True, env=child_env(), timeout=600
        )
        self.wall = time.monotonic() - start
        if proc.returncode != 0:
            raise SystemExit(f"{command[2:4]} exited {proc.returncode}\n{proc.stderr[-4000:]}")
        self.stdout = proc.stdout
        seen = server.seen[before:]  # every request of the run has been answered
        self.requests = len(seen)
        first, last = (seen[0].at - start, seen[-1].at - start) if seen else (0.0, 0.0)
        self.phases = (first, last - first, self.wall - last)

    def where(self) -> str:
        first, span, tail = self.phases
        return f"start {first:.3f} + requests {span:.3f} + end {tail:.3f}"


def run_assay(folder: Path, server: FakeOpenAI, args: list[str], profile: Path | None = None):
    command = [sys.executable]
    if profile is not None:
        command += ["-m", "cProfile", "-o", str(profile)]
    timed = Timed(server, [*command, "-m", "assay", *args], folder)
    return timed, json.loads(timed.stdout)


def check(document: Any, expected: int) -> None:
    results = document["results"]
    passed = sum(1 for r in results if r["status"] == "pass")
    if len(results) != expected or passed != expected:
        raise SystemExit(f"expected {expected} passing results, got {passed} of {len(results)}")


def startup_time(folder: Path) -> float:
    """A fresh `python -m assay --version`: the floor any run pays."""
    import math
    import subprocess

    best = math.inf
    for _ in range(3):
        start = time.perf_counter()
        command = [sys.executable, "-m", "assay", "--version"]
        subprocess.run(command, cwd=folder, check=True, capture_output=True, env=child_env())
        best = min(best, time.perf_counter() - start)
    return best


def span(values: list[float], digits: int = 3) -> str:
    """``low–high``, or one figure when they agree at ``digits``."""
    low, high = f"{min(values):.{digits}f}", f"{max(values):.{digits}f}"
    return low if low == high else f"{low}–{high}"


def main() -> None:
    import argparse
    import math
    from pathlib import Path

    sys.path.insert(0, ROOT)
    from tests.helpers.fake_openai import FakeOpenAI

    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--goldens", type=int, default=1000)
    parser.add_argument("--candidates", type=int, default=2)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--profile", action="store_true")
    options = parser.parse_args()
    total = options.goldens * options.candidates
    out = Path(os.environ.get("ASSAY_BENCH_OUT") or Path(ROOT) / "bench" / "out")
    folder = out / f"live-{options.candidates}x{options.goldens}"
    with FakeOpenAI() as server:
        goldens, candidates = write_project(
            folder, server, options.goldens, options.candidates, options.concurrency
        )
        args = ["eval", str(goldens), "--candidates", str(candidates), "--json"]
        bare = [sys.executable, __file__, "--bare-client", server.url]
        bare += [str(options.goldens), str(options.candidates), str(options.concurrency)]
        startup = startup_time(folder)
        ideal = math.ceil(total / options.concurrency) * LATENCY_S

        # The cache-filling run first: it also leaves the byte-code the timed runs import.
        fill, document = run_assay(folder, server, args)
        check(document, total)

        # 1. Uncached, beside the bare client, alternating.
        server.max_in_flight = 0
        ratios: dict[str, list[float]] = {"assay": [], "bare": [], "assay/bare": []}
        for _ in range(options.rounds):
            timed, document = run_assay(folder, server, [*args, "--no-cache"])
            check(document, total)
            hand = Timed(server, bare, folder)
            for run in (timed, hand):
                if run.requests != total:
                    raise SystemExit(f"expected {total} requests, the server saw {run.requests}")
            ratios["assay"].append(timed.wall)
            ratios["bare"].append(hand.wall)
            ratios["assay/bare"].append(timed.wall / hand.wall)
            print(
                f"assay {timed.wall:.3f} s ({timed.where()}), bare client {hand.wall:.3f} s "
                f"({hand.where()}): assay / bare {timed.wall / hand.wall:.2f}"
            )
        walls, hands = ratios["assay"], ratios["bare"]
        print(
            f"{options.candidates} candidates x {options.goldens:,} goldens, 50 ms latency, "
            f"max_concurrency {options.concurrency}, --no-cache, {options.rounds} round(s): "
            f"assay {span(walls)} s, bare client {span(hands)} s, ideal {ideal:.3f} s; "
            f"assay / bare {span(ratios['assay/bare'], 2)} (target <= 1.3), "
            f"assay / ideal {span([w / ideal for w in walls], 2)}, "
            f"bare / ideal {span([h / ideal for h in hands], 2)} "
            f"(server peak in flight {server.max_in_flight}; process start {startup:.3f} s)"
        )

        # 2. A fully cached re-run.
        before = server.total
        cached, document = run_assay(folder, server, args)
        check(document, total)
        hits = document["summary"]["model_calls"]["cache_hits"]
        if server.total != before or hits != total:
            raise SystemExit(f"the cached re-run made {server.total - before} request(s)")
        print(
            f"cache-filling run: {fill.wall:.3f} s; fully cached re-run: {cached.wall:.3f} s "
            f"({hits:,} cache hits, 0 requests; target < 2 s)"
        )

        if options.profile:
            profile = folder / "run.prof"
            run_assay(folder, server, [*args, "--no-cache"], profile=profile)
            print(f"profile of an uncached run: {profile}")


if __name__ == "__main__" and sys.argv[1:2] == ["--bare-client"]:
    bare_client(sys.argv[2:])  # none of the bench's own imports: the bare process stays bare
elif __name__ == "__main__":
    main()
