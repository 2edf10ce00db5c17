"""Real containers: the Docker daemon scripts/test.sh starts and the local task image
scripts/task_image.sh builds (assay-task-python:local, from Debian packages, no image registry).

Each container runs hardened, the way an agent and its verification are meant to run: no
network, no capabilities, the default seccomp profile, no new privileges, a read-only root
filesystem with a tmpfs /tmp as HOME, bounded processes and memory. Without a daemon (or the
image) every test here skips and says why; with ASSAY_REQUIRE_DOCKER=1, which scripts/test.sh
sets when a daemon answers, they fail instead."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
import uuid
from pathlib import Path
from typing import NoReturn

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "task_image.sh"
GOLDEN = ROOT / "src" / "assay" / "data" / "goldens" / "smoke" / "fix-off-by-one"
IMAGE = os.environ.get("ASSAY_TASK_IMAGE", "assay-task-python:local")
REQUIRED = os.environ.get("ASSAY_REQUIRE_DOCKER") == "1"
VERIFY = ["python", "-m", "pytest", "-q", "-p", "no:cacheprovider"]
# What an agent's container gets (besides --rm, --init, --name, --user, mounts and -w).
HARDENED = [
    "--network", "none",
    "--cap-drop", "ALL",
    "--security-opt", "no-new-privileges",
    "--read-only",
    "--tmpfs", "/tmp:rw,nosuid,nodev,size=512m",
    "-e", "HOME=/tmp",
    "--pids-limit", "256",
    "--memory", "1g", "--memory-swap", "1g",
]  # fmt: skip


def _unavailable(reason: str) -> NoReturn:
    if REQUIRED:
        pytest.fail(f"{reason} (and ASSAY_REQUIRE_DOCKER=1)", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def image() -> str:
    """The task image, built (or found up to date) by scripts/task_image.sh."""
    docker = shutil.which("docker")
    if docker is None:
        _unavailable("no docker client on PATH")
    try:
        info = subprocess.run(
            ["docker", "info", "--format", "{{.ServerVersion}}"],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except subprocess.TimeoutExpired:
        _unavailable("no Docker daemon answered `docker info` within 30 s")
    if info.returncode != 0 or not info.stdout.strip():
        said = (info.stderr.strip().splitlines() or ["no reason given"])[-1]
        _unavailable(f"no Docker daemon answers ({said})")
    # Cheap when the image is up to date (its label holds the script's hash).
    build = subprocess.run(
        ["bash", str(SCRIPT)], capture_output=True, text=True, timeout=900, stdin=subprocess.DEVNULL
    )
    if build.returncode != 0:
        tail = " | ".join((build.stdout + build.stderr).strip().splitlines()[-5:])
        _unavailable(f"scripts/task_image.sh failed: {tail}")
    return IMAGE


def run(
    image: str,
    *argv: str,
    options: tuple[str, ...] = (),
    mount: Path | None = None,
    workdir: Path | None = None,
    timeout: float = 120,
) -> subprocess.CompletedProcess[str]:
    cmd = ["docker", "run", "--rm", "--init", *HARDENED]
    cmd += ["--user", f"{os.getuid()}:{os.getgid()}", *options]
    if mount is not None:
        cmd += ["-v", f"{mount}:{mount}", "-w", str(workdir or mount)]
    return subprocess.run(
        [*cmd, image, *argv],
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def test_the_image_has_python_pytest_git_and_the_shell_tools(image: str) -> None:
    done = run(
        image,
        "bash",
        "-c",
        "python --version && python3 -c 'import pytest; print(pytest.__version__)' && "
        "git --version && sh -c 'echo sh' && grep --version && sed --version && ls --version",
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    major, minor = (int(part) for part in lines[0].split()[1].split(".")[:2])
    assert (major, minor) >= (3, 11)
    assert lines[2].startswith("git version") and "sh" in lines
    assert any("GNU grep" in line for line in lines) and any("GNU sed" in line for line in lines)
    assert any("GNU coreutils" in line for line in lines)


def test_a_task_fails_then_passes_after_its_solution_inside_the_container(
    image: str, tmp_path: Path
) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(GOLDEN / "repo", repo)
    shutil.copy(GOLDEN / "solution.sh", tmp_path / "solution.sh")
    before = run(image, *VERIFY, mount=tmp_path, workdir=repo)
    assert before.returncode == 1, before.stdout + before.stderr
    assert "1 failed" in before.stdout
    solved = run(image, "bash", str(tmp_path / "solution.sh"), mount=tmp_path, workdir=repo)
    assert solved.returncode == 0, solved.stdout + solved.stderr
    after = run(image, *VERIFY, mount=tmp_path, workdir=repo)
    assert after.returncode == 0, after.stdout + after.stderr
    assert " passed" in after.stdout and "failed" not in after.stdout
    # The files the container wrote belong to the calling user.
    assert (repo / "src" / "pages.py").stat().st_uid == os.getuid()


def test_network_none_leaves_only_loopback(image: str) -> None:
    # Nothing is sent anywhere: the interfaces and routes are read, and loopback is used.
    probe = (
        "import os, socket\n"
        "print(sorted(os.listdir('/sys/class/net')))\n"
        "print(len(open('/proc/net/route').read().splitlines()) - 1)\n"
        "s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen()\n"
        "c = socket.create_connection(s.getsockname(), timeout=5); c.sendall(b'hi')\n"
        "print(s.accept()[0].recv(2).decode())\n"
    )
    done = run(image, "python", "-c", probe)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["['lo']", "0", "hi"]


def test_the_container_cannot_see_the_hosts_home_or_tmp(image: str, tmp_path: Path) -> None:
    home = Path.home()
    if not os.access(home, os.W_OK):
        pytest.skip(f"the host's home {home} is not writable here, so no marker can be put in it")
    marker = Path(tempfile.mkdtemp(prefix="assay-docker-probe-", dir=home))
    hidden = tmp_path / "not-mounted.txt"
    hidden.write_text("host only\n", encoding="utf-8")
    try:
        probe = (
            "import os, sys\n"
            "names = set(os.listdir('/root')) if os.access('/root', os.R_OK) else set()\n"
            f"print({marker.name!r} in names, os.path.exists({str(marker)!r}),"
            f" os.path.exists({str(hidden)!r}))\n"
        )
        done = run(image, "python", "-c", probe)
    finally:
        marker.rmdir()
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "False", "False"]


def test_the_hardening_takes_effect(image: str) -> None:
    done = run(
        image,
        "bash",
        "-c",
        "grep -E '^(CapEff|CapBnd|NoNewPrivs|Seccomp):' /proc/self/status; "
        "touch /probe 2>/dev/null && echo root-writable || echo root-read-only; "
        "touch $HOME/probe && echo home-writable; "
        "cat /sys/fs/cgroup/pids/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids.max",
    )
    assert done.returncode == 0, done.stderr
    fields = dict(line.split(":", 1) for line in done.stdout.splitlines() if ":" in line)
    assert {k: v.strip() for k, v in fields.items()} == {
        "CapEff": "0000000000000000",
        "CapBnd": "0000000000000000",
        "NoNewPrivs": "1",
        "Seccomp": "2",  # filter mode: the daemon's default seccomp profile
    }
    assert "root-read-only" in done.stdout and "home-writable" in done.stdout
    assert "256" in done.stdout.split()


def test_memory_and_pids_limits_hold(image: str) -> None:
    small = ("--memory", "256m", "--memory-swap", "256m")
    fits = run(image, "python", "-c", "b = bytearray(100 << 20); print('ok')", options=small)
    assert fits.returncode == 0 and fits.stdout.strip() == "ok", fits.stderr
    over = run(image, "python", "-c", "b = bytearray(400 << 20); print('ok')", options=small)
    assert over.returncode == 137 and "ok" not in over.stdout  # the OOM killer's SIGKILL
    forks = (
        "import os, time\n"
        "n = 0\n"
        "try:\n"
        "    while n < 2000:\n"
        "        if os.fork() == 0:\n"
        "            time.sleep(60); os._exit(0)\n"
        "        n += 1\n"
        "except OSError as e:\n"
        "    print(n, e.errno)\n"
    )
    bounded = run(image, "python", "-c", forks, options=("--pids-limit", "64"))
    assert bounded.returncode == 0, bounded.stderr
    count, errno = (int(x) for x in bounded.stdout.split())
    assert count < 64 and errno == 11  # EAGAIN, well before 2000 children


def _cmdline(pid: int) -> bytes | None:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return None


def test_docker_kill_ends_every_process_of_a_named_container(image: str) -> None:
    name = f"assay-infra-kill-{uuid.uuid4().hex[:8]}"
    # Children, a grandchild in a session of its own, a python: 6 processes with docker-init.
    script = (
        "sleep 600 & sleep 601 & (setsid sleep 602 &); "
        "python3 -c 'import time; time.sleep(603)' & wait"
    )
    argv = ["docker", "run", "-d", "--rm", "--init", "--name", name, *HARDENED, image]
    started = subprocess.run(
        [*argv, "bash", "-c", script], capture_output=True, text=True, timeout=60
    )
    assert started.returncode == 0, started.stderr
    try:
        seen: dict[int, bytes | None] = {}
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            top = subprocess.run(
                ["docker", "top", name, "-eo", "pid"], capture_output=True, text=True, timeout=30
            )
            seen = {int(pid): _cmdline(int(pid)) for pid in top.stdout.split()[1:]}
            if len(seen) >= 6:
                break
            time.sleep(0.2)
        assert len(seen) >= 6 and all(seen.values()), top.stdout
        killed = subprocess.run(
            ["docker", "kill", name], capture_output=True, text=True, timeout=30
        )
        assert killed.returncode == 0, killed.stderr
        deadline = time.monotonic() + 30

        def alive() -> list[int]:
            return [pid for pid, cmd in seen.items() if _cmdline(pid) == cmd]

        while time.monotonic() < deadline and alive():
            time.sleep(0.1)
        assert alive() == []
    finally:
        subprocess.run(["docker", "rm", "-f", name], capture_output=True, timeout=60)
