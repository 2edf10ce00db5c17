"""The Docker environment: every step (verify, the agent, the signals) in a container of the
image a task names (its ``image`` field), with the same limits and the same world as the
bubblewrap sandbox: the worktree and the private folder (``$HOME``, ``$TMPDIR``) mounted at
their host paths, read-write; nothing else of the host.

A container holds nothing but its init, hardened (:func:`run_argv`); the command runs in it
with ``docker exec`` (its exit status is the command's); what is still running when it ends is
counted (the orphans, by ``docker top``) and killed with the container. Only assay's variables
are in the container's environment (:func:`container_env`).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Final

from assay.agent._box import FILE_MB, Finished, Limits, _Streams, spawn
from assay.agent._sandbox import World
from assay.errors import AssayError, GoldenError
from assay.goldens import Golden

# The agent's variables that mean the same inside (paths are mounted at their host paths); the
# image keeps its own PATH and LANG.
PASSED_ENV: Final = tuple(
    """ASSAY_TASK_PROMPT_FILE ASSAY_WORKTREE ASSAY_USAGE_FILE ASSAY_TASK_ID
    PYTHONDONTWRITEBYTECODE PYTEST_ADDOPTS HOME TMPDIR""".split()
)
PIDS_LIMIT: Final = 512
_DOCKER_S: Final = 60.0  # for docker's own commands (run, top, kill)


def image_of(task: Golden, default: str | None) -> str | None:
    """The image a task runs in: its own ``image``, else the run's ``--image``."""
    own = task.fields.get("image")
    return str(own) if own else default


def check_images(tasks: Sequence[Golden], default: str | None = None) -> None:
    """Every task to run has an image (its own, or the run's ``--image``)."""
    for task in tasks:
        if image_of(task, default) is None:
            raise GoldenError(
                "--environment docker runs each task in the container image it names; "
                "this task names none (or give one for all: --image)",
                source=task.source,
                field="image",
            )


def check_daemon() -> None:
    """A Docker daemon answers (a refusal quotes docker's own last words)."""
    docker = shutil.which("docker")
    if docker is None:
        raise AssayError("--environment docker: docker is not installed")
    try:
        argv = [docker, "info", "--format", "{{.ServerVersion}}"]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=20)
    except subprocess.TimeoutExpired:
        raise AssayError("--environment docker: no Docker daemon answered within 20 s") from None
    if done.returncode != 0 or not done.stdout.strip():
        said = (done.stderr.strip().splitlines() or ["no reason given"])[-1]
        raise AssayError(f"--environment docker: no Docker daemon answers ({said})")


def container_name(task_id: str) -> str:
    safe = "".join(c if c.isalnum() or c in "_.-" else "-" for c in task_id)
    return f"assay-{safe}-{uuid.uuid4().hex[:8]}"


def container_env(env: Mapping[str, str], passed: Sequence[str] = ()) -> dict[str, str]:
    """The part of the agent's environment that goes into the container: assay's variables
    and those ``[agents.NAME] env`` names (its API key)."""
    return {k: env[k] for k in (*PASSED_ENV, *passed) if k in env}


def run_argv(
    *,
    image: str,
    name: str,
    world: World,
    env: Mapping[str, str],
    limits: Limits,
    passed: Sequence[str] = (),
) -> list[str]:
    """``docker run`` of a container that holds the sandbox open (the command comes by exec),
    hardened: no capabilities, Docker's default seccomp profile, a read-only root, limits."""
    memory = f"{limits.memory_mb}m"
    out = ["docker", "run", "--rm", "-d", "--init", "--name", name]
    out += ["--user", f"{os.getuid()}:{os.getgid()}", "-w", str(world.worktree)]
    out += ["--cap-drop", "ALL", "--security-opt", "no-new-privileges"]
    out += ["--read-only", "--tmpfs", "/tmp:rw,nosuid,nodev,size=512m"]
    out += ["--pids-limit", str(PIDS_LIMIT), "--memory", memory, "--memory-swap", memory]
    size = FILE_MB << 20
    out += ["--ulimit", f"fsize={size}:{size}", "--ulimit", "core=0", "--log-driver", "none"]
    for mount in (world.worktree, world.private):
        out += ["-v", f"{mount}:{mount}"]
    for key, value in sorted(container_env(env, passed).items()):
        out += ["-e", f"{key}={value}"]
    if world.no_network:
        out += ["--network", "none"]
    return [*out, image, "sleep", "2147483647"]


def _docker(*args: str) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            ["docker", *args], capture_output=True, text=True, timeout=_DOCKER_S, check=False
        )
    except subprocess.TimeoutExpired:
        raise AssayError(f"docker {args[0]} did not answer within {_DOCKER_S:g} s") from None


def run_in_container(
    command: str,
    world: World,
    env: Mapping[str, str],
    limits: Limits,
    *,
    image: str,
    name: str,
    stdin: Path | None,
    passed: Sequence[str],
) -> Finished:
    """``command`` in a fresh container of ``image``, to its end; the same contract as
    ``_box.Sandboxed`` (the container never outlives the call)."""
    argv = run_argv(image=image, name=name, world=world, env=env, limits=limits, passed=passed)
    started = _docker(*argv[1:])
    if started.returncode != 0:
        said = (started.stderr.strip().splitlines() or ["no reason given"])[-1]
        raise AssayError(f"the task's container did not start: {said}")
    began = time.monotonic()
    try:
        process = spawn(["docker", "exec", "-i", name, "sh", "-c", command], stdin)
    except OSError:
        _docker("kill", name)
        raise
    streams = _Streams(process)
    try:
        try:
            code: int | None = process.wait(timeout=limits.duration_s)
            timed_out = False
        except subprocess.TimeoutExpired:
            code, timed_out = None, True
        duration = time.monotonic() - began
        orphans = 0 if timed_out else _running(name)
    finally:
        _docker("kill", name)  # --rm removes it
        if process.poll() is None:
            process.kill()
        process.wait()
    return streams.finished(code, timed_out, orphans, duration, 0)


def _running(name: str) -> int:
    """Processes in the container beside its init and the holder (``docker top``)."""
    done = _docker("top", name, "-o", "pid")
    lines = [x for x in done.stdout.splitlines()[1:] if x.strip()]
    return max(0, len(lines) - 2) if done.returncode == 0 else 0
