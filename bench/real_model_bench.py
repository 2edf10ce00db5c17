"""Benchmark the real model assay's integration suite serves: llama.cpp's llama-server with
Gemma 3 270M (Q4_K_M), one thread, on loopback (built by scripts/real_model.py).

Measures, in one run:
1. start-up: process start to /health answering;
2. ``assay eval --candidates --no-cache --json`` over N short questions in a fresh process: wall
   time, output tokens, and output tokens per second as assay sees it (wall clock, start-up of
   assay included);
3. the server's own generation rate (``timings.predicted_per_second``) for one 64-token answer.

Usage: python bench/real_model_bench.py [--calls 20] [--max-tokens 32]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
TEMPLATE = ROOT / "tests" / "realmodel" / "qa-template.jinja"


def paths() -> tuple[Path, Path]:
    spec = importlib.util.spec_from_file_location("real_model", ROOT / "scripts" / "real_model.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.server_path(), module.model_path()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def post(url: str, body: dict[str, Any]) -> dict[str, Any]:
    request = urllib.request.Request(
        url, json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=120) as response:
        return json.load(response)  # type: ignore[no-any-return]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--max-tokens", type=int, default=32)
    args = parser.parse_args()
    server, model = paths()
    if not (server.is_file() and model.is_file()):
        print(f"not built: run python scripts/real_model.py (looked for {server}, {model})")
        return 1
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    command = [str(server), "-m", str(model), "--host", "127.0.0.1", "--port", str(port)]
    command += ["-t", "1", "-c", "4096", "-np", "2", "--no-webui", "--offline", "--jinja"]
    command += ["--chat-template-file", str(TEMPLATE)]
    started = time.perf_counter()
    process = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    try:
        while True:
            try:
                with urllib.request.urlopen(base + "/health", timeout=2):
                    break
            except OSError:
                if time.perf_counter() - started > 120:
                    raise
                time.sleep(0.05)
        ready_s = time.perf_counter() - started
        with tempfile.TemporaryDirectory() as folder:
            root = Path(folder)
            goldens = [
                {"id": f"q{i}", "input": f"What is {i} + {i}?", "asserts": ["not-contains:zzzz"]}
                for i in range(args.calls)
            ]
            (root / "goldens.jsonl").write_text("".join(json.dumps(g) + "\n" for g in goldens))
            provider = {
                "type": "openai",
                "base_url": base + "/v1",
                "model": "gemma-3-270m",
                "max_tokens": args.max_tokens,
                "max_concurrency": 2,
            }
            document = {"provider": provider, "candidates": [{"id": "qa", "prompt": "{{ input }}"}]}
            (root / "cands.yaml").write_text(json.dumps(document))
            run = [sys.executable, "-m", "assay", "eval", "goldens.jsonl", "--candidates"]
            run += ["cands.yaml", "--no-cache", "--json"]
            t0 = time.perf_counter()
            out = subprocess.run(run, cwd=root, capture_output=True, text=True, check=True)
            wall = time.perf_counter() - t0
            calls = json.loads(out.stdout)["summary"]["model_calls"]
        reply = post(
            base + "/v1/chat/completions",
            {
                "model": "m",
                "messages": [{"role": "user", "content": "Tell me about the sea."}],
                "max_tokens": 64,
                "temperature": 0,
            },
        )
        server_rate = reply["timings"]["predicted_per_second"]
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=10)
    figures = {
        "calls": calls["made"],
        "ready_s": round(ready_s, 2),
        "run_wall_s": round(wall, 2),
        "output_tokens": calls["output_tokens"],
        "assay_tokens_per_s": round(calls["output_tokens"] / wall, 1),
        "server_tokens_per_s": round(server_rate, 1),
    }
    print(f"llama-server ready in {figures['ready_s']} s (one thread, {model.name})")
    print(
        f"assay eval, {figures['calls']} calls, max_tokens {args.max_tokens}: "
        f"{figures['run_wall_s']} s, {figures['output_tokens']} output tokens, "
        f"{figures['assay_tokens_per_s']} tokens/s as assay sees it"
    )
    print(f"server generation rate (64-token answer): {figures['server_tokens_per_s']} tokens/s")
    out_dir = Path(os.environ.get("ASSAY_BENCH_OUT", ROOT / "bench" / "out"))
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "real-model.json").write_text(json.dumps(figures, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
