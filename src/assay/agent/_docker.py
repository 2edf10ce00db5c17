"""The Docker environment: the same steps (verify, the agent, the signals) inside the container
image a task names (its ``image`` field), behind the same interface as the local runner.

The worktree and the agent's private folder are bind-mounted at their host paths, so
``$ASSAY_WORKTREE`` and ``$ASSAY_TASK_PROMPT_FILE`` mean the same inside; the container runs as
the calling user (the files it writes stay the user's) with ``--init`` (an orphan dies with the
container), ``--network none`` for ``no_network``, and only assay's variables in its
environment (not the host's). A container is named, so that a timeout can kill it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path

from assay.errors import AssayError, GoldenError
from assay.goldens import Golden

PASSED_ENV = (
    "ASSAY_TASK_PROMPT_FILE",
    "ASSAY_WORKTREE",
    "ASSAY_USAGE_FILE",
    "ASSAY_TASK_ID",
    "PYTHONDONTWRITEBYTECODE",
    "TMPDIR",
)


def check_images(tasks: Sequence[Golden]) -> None:
    """Every task to run names its image.

    Raises:
        GoldenError: naming the first task without one.
    """
    for task in tasks:
        if not task.fields.get("image"):
            raise GoldenError(
                "--environment docker runs each task in the container image it names; "
                "this task names none",
                source=task.source,
                field="image",
            )


def check_daemon() -> None:
    """A Docker daemon answers.

    Raises:
        AssayError: no docker client, or no daemon behind it (its own words).
    """
    docker = shutil.which("docker")
    if docker is None:
        raise AssayError("--environment docker: docker is not installed")
    try:
        done = subprocess.run(
            [docker, "info", "--format", "{{.ServerVersion}}"],
            capture_output=True,
            text=True,
            timeout=20,
        )
    except subprocess.TimeoutExpired:
        raise AssayError("--environment docker: no Docker daemon answered within 20 s") from None
    if done.returncode != 0 or not done.stdout.strip():
        said = (done.stderr.strip().splitlines() or ["no reason given"])[-1]
        raise AssayError(f"--environment docker: no Docker daemon answers ({said})")


def container_name(task_id: str) -> str:
    safe = "".join(c if c.isalnum() or c in "_.-" else "-" for c in task_id)
    return f"assay-{safe}-{uuid.uuid4().hex[:8]}"


def wrap(
    argv: Sequence[str],
    *,
    image: str,
    name: str,
    mounts: Sequence[Path],
    workdir: Path,
    env: Mapping[str, str],
    no_network: bool,
) -> list[str]:
    """``argv`` as a ``docker run`` of ``image``."""
    out = ["docker", "run", "--rm", "--init", "--name", name, "-i"]
    out += ["--user", f"{os.getuid()}:{os.getgid()}", "-w", str(workdir)]
    for mount in mounts:
        out += ["-v", f"{mount}:{mount}"]
    for key in PASSED_ENV:
        if key in env:
            out += ["-e", f"{key}={env[key]}"]
    if no_network:
        out += ["--network", "none"]
    return [*out, image, *argv]


def kill(name: str) -> None:
    """Stop a container that outlived its limit (it is removed with ``--rm``)."""
    subprocess.run(["docker", "kill", name], capture_output=True, timeout=30)
