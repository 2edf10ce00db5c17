"""A real Ray cluster on this machine for tests and benchmarks: a head process and worker
processes (``ray start``), every address a loopback one, stopped by process group.

Each node is a ``ray start`` in a session of its own: the daemons it starts (GCS, raylet,
workers) stay in its process group, so stopping the cluster kills exactly those groups, never
another Ray running here (``ray stop`` would stop every Ray on the machine).

Ray replaces ``127.0.0.1`` given as a node's address by the machine's network address, so the
nodes take ``127.0.0.2``, ``127.0.0.3``, ...: loopback addresses Ray leaves as they are.
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

START_TIMEOUT_S = 90.0


def ray_command() -> str:
    """The ``ray`` script of this Python's environment (else the one on ``$PATH``)."""
    here = Path(sys.executable).parent / "ray"
    return str(here) if here.exists() else shutil.which("ray") or "ray"


def _free_port(host: str) -> int:
    with socket.socket() as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@dataclass
class RayCluster:
    """``with RayCluster(nodes=2, cpus=2) as cluster:`` a running cluster at
    ``cluster.address``; ``cluster.env`` is what a driver needs (its token)."""

    nodes: int = 2
    cpus: int = 2
    address: str = ""
    env: dict[str, str] = field(default_factory=dict)
    _groups: list[int] = field(default_factory=list)
    _temp: Path | None = None

    def __enter__(self) -> RayCluster:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        # Short: Ray's unix socket paths live under it (and a socket path has ~107 bytes).
        self._temp = Path(tempfile.mkdtemp(prefix="ray-"))
        head_ip = "127.0.0.2"
        port = _free_port(head_ip)
        self.address = f"{head_ip}:{port}"
        # Token authentication with a token of this cluster's, never written to ~/.ray.
        self.env = {
            "RAY_USAGE_STATS_ENABLED": "0",
            "RAY_AUTH_MODE": "token",
            "RAY_AUTH_TOKEN": secrets.token_hex(32),
        }
        common = [
            f"--num-cpus={self.cpus}",
            "--disable-usage-stats",
            f"--temp-dir={self._temp}",
        ]
        self._node(["--head", f"--node-ip-address={head_ip}", f"--port={port}", *common])
        for n in range(1, self.nodes):
            ip = f"127.0.0.{2 + n}"
            self._node([f"--address={self.address}", f"--node-ip-address={ip}", *common])
        self._wait_for_cpus(self.nodes * self.cpus)

    def _node(self, args: list[str]) -> None:
        assert self._temp is not None
        log = self._temp / f"start-{len(self._groups)}.log"
        with log.open("wb") as out:
            process = subprocess.Popen(
                [ray_command(), "start", *args, "--include-dashboard=false"]
                if "--head" in args
                else [ray_command(), "start", *args],
                env={**os.environ, **self.env},
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self._groups.append(process.pid)
        try:
            code = process.wait(timeout=START_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            code = None
        if code != 0:
            raise RuntimeError(f"ray start {' '.join(args)}: {code}\n{log.read_text()[-3000:]}")

    def _wait_for_cpus(self, cpus: int) -> None:
        """Until every node has joined (``ray status`` counts their CPUs)."""
        deadline = time.monotonic() + START_TIMEOUT_S
        status = ""
        while time.monotonic() < deadline:
            done = subprocess.run(
                [ray_command(), "status", f"--address={self.address}"],
                env={**os.environ, **self.env},
                capture_output=True,
                text=True,
                timeout=60,
            )
            status = done.stdout + done.stderr
            if f"/{cpus}.0 CPU" in status:
                return
            time.sleep(0.5)
        raise RuntimeError(f"the Ray cluster never had {cpus} CPUs:\n{status[-3000:]}")

    def stop(self) -> None:
        """Kill every process of the cluster's nodes (by process group), then its files."""
        for pgid in self._groups:
            try:
                os.killpg(pgid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                continue
        deadline = time.monotonic() + 10
        while any(_group_alive(g) for g in self._groups) and time.monotonic() < deadline:
            time.sleep(0.1)
        self._groups.clear()
        if self._temp is not None:
            shutil.rmtree(self._temp, ignore_errors=True)
            self._temp = None
