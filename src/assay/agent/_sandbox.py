"""What an agent's world holds, and the bubblewrap command that builds it.

Isolation, not observation: what must stay secret from the agent (the goldens, the reference
solution, assay's package data, the project, its runs and attestations, the key, the user's home,
the other tasks' worktrees, the tracer) is not mounted at all, so no way of reading a file (a
plain ``open``, io_uring, a handle) can reach it. The agent sees:

- read-only: the system (``/usr``, ``/etc``, the ``/bin`` and ``/lib`` links), the interpreter
  and toolchains it runs with (this Python's prefixes, the folders on ``$PATH`` and the prefix
  above a ``bin``), the files and folders its command names, and ``allow_read`` paths;
- read-write: its worktree and its private folder (``$HOME``, ``$TMPDIR``, the instruction);
- a private ``/tmp`` (tmpfs), its own ``/proc`` and a minimal ``/dev``.

A fenced place that lies inside a mounted one (a project inside an ``allow_read`` folder,
assay's package inside a venv) is masked: an empty tmpfs over a folder, ``/dev/null`` over a file.

The sandbox has new user, PID, mount, IPC, UTS and cgroup namespaces (and a network namespace
with ``no_network``), no capabilities, ``no_new_privs``, no further user namespaces, and a
seccomp filter (``_seccomp``). Its environment is built by assay (:func:`agent_env`).
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Final

from assay.attest import inside
from assay.errors import AssayError

# The system, read-only. A merged-/usr system has these as links into /usr: they are made links.
SYSTEM_DIRS: Final = ("/usr", "/etc", "/opt", "/sys")
SYSTEM_LINKS: Final = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
# The caller's variables the agent gets (none of them a secret); everything else is assay's.
PASSED_THROUGH: Final = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TERM", "VIRTUAL_ENV")
HOSTNAME: Final = "assay-sandbox"
# Read-only places outside the worktree every toolchain opens, for a run without a sandbox
# (``isolation none``): not the agent looking around. /proc is not among them: only its entries
# that are no process's (and those of the agent's own processes) are.
SYSTEM_PATHS: Final = tuple(
    "/usr /lib /lib32 /lib64 /libx32 /bin /sbin /etc /sys /dev /run /var/lib /var/cache".split()
)


@dataclass(frozen=True, slots=True)
class World:
    """Everything the agent's sandbox shows, by path.

    Attributes:
        worktree: read-write, the agent's working folder.
        private: read-write, its ``$HOME`` and ``$TMPDIR`` live here (and its instruction).
        readonly: more places mounted read-only (the toolchain, named files, ``allow_read``).
        fenced: places never shown, masked where a mounted place holds them.
        no_network: a network namespace of its own (only its own loopback, nothing listening).
    """

    worktree: Path
    private: Path
    readonly: tuple[str, ...] = ()
    fenced: tuple[str, ...] = ()
    no_network: bool = False

    def visible(self) -> list[str]:
        """Every place the agent can open, for the attestation's allowance: what is mounted."""
        own = ("/proc", "/dev", "/tmp", os.path.realpath(self.private))
        return sorted({*_system(), *own, *self.readonly})

    def scaffolding(self) -> list[str]:
        """The folders bubblewrap makes on the way to a place it mounts from the host (outside
        the system and the sandbox's own places): in the sandbox each holds nothing but those
        mount points. Python lists the folder of the script it runs (``python /srv/agent/
        run.py`` opens ``/srv/agent``): the seal allows opening exactly these folders
        (``allow_listing``), nothing under them that was not mounted. Never a fenced place."""
        shown = self.visible()
        own = [os.path.realpath(p) for p in (self.worktree, self.private)]
        out: set[str] = set()
        for place in (*self.readonly, *own):
            parent = os.path.dirname(os.path.realpath(place))
            while parent != os.sep and not any(inside(parent, v) for v in shown):
                if parent not in self.fenced:
                    out.add(parent)
                parent = os.path.dirname(parent)
        return sorted(out)

    def masked(self) -> list[str]:
        """The fenced places that lie inside a place mounted from the host (and are masked
        there). Not those under the sandbox's own /tmp, /proc or /dev: none of the host's is
        there to hide, and a mask would show where they are; nor one inside another masked
        place (the packaged task's folder inside assay's data): its mask would make its path
        appear in the empty folder above it."""
        mounted = [*_system(), *self.readonly]
        hidden = {f for f in self.fenced if any(inside(f, m) for m in mounted)}
        return sorted(f for f in hidden if not any(g != f and inside(f, g) for g in hidden))


def _system() -> list[str]:
    """The system places mounted from the host, resolved."""
    return [os.path.realpath(p) for p in (*SYSTEM_DIRS, *SYSTEM_LINKS) if os.path.exists(p)]


def bwrap_path() -> str | None:
    return shutil.which("bwrap")


def path_dirs() -> list[str]:
    """The folders on ``$PATH``, each with the tool prefix above a ``bin``, ``sbin`` or
    ``shims`` folder."""
    places = []
    for entry in os.environ.get("PATH", "").split(os.pathsep):
        if entry and os.path.isabs(entry):
            places.append(entry)
            if os.path.basename(entry.rstrip(os.sep)) in ("bin", "sbin", "shims"):
                places.append(os.path.dirname(entry.rstrip(os.sep)))
    return places


def toolchain(fenced: Sequence[str]) -> list[str]:
    """The interpreter and toolchains the agent needs, read-only: this Python's prefixes (it may
    run ``python -m pytest``) and :func:`path_dirs`; never the root, a home as a whole, or a
    place holding a fenced one (the project, the goldens, the home: a venv inside the project
    is fine). assay's own package is the exception: a venv that assay was installed into holds
    its data (the packaged tasks), and without the venv its ``python`` is the base interpreter
    without ``pyvenv.cfg`` (none of the venv's packages, not even pytest). The venv is
    mounted; the fenced places inside assay's package are masked (:meth:`World.masked`)."""
    package = os.path.realpath(package_folder())
    held = [f for f in fenced if not inside(f, package)]  # inside the package: masked instead
    places = resolved([sys.prefix, sys.base_prefix, sys.exec_prefix, *path_dirs()], held)
    system = (*SYSTEM_DIRS, *SYSTEM_LINKS)  # under /usr already
    return [p for p in places if os.path.isdir(p) and not any(inside(p, s) for s in system)]


def resolved(places: Iterable[str], fenced: Sequence[str] = ()) -> list[str]:
    """``places`` resolved, each once, in order: never the root, nor a place that holds one of
    ``fenced``."""
    out: list[str] = []
    for place in places:
        real = os.path.realpath(place)
        if real != os.sep and real not in out and not any(inside(f, real) for f in fenced):
            out.append(real)
    return out


def package_folder() -> Path:
    """assay's own package: its data (the packaged tasks and their solutions) is never in the
    sandbox, though a venv that holds the package is."""
    return Path(os.path.realpath(__file__)).parent.parent  # src/assay, from src/assay/agent


def named_paths(command: str, fenced: Sequence[str]) -> list[str]:
    """The absolute paths an agent's command names that exist (its script, its binary, its
    config), read-only; a fenced one is not shown (the command then fails to find it)."""
    try:
        words = shlex.split(command)
    except ValueError:
        return []
    out = []
    for word in words:
        value = word.split("=", 1)[1] if word.startswith("--") and "=" in word else word
        if not os.path.isabs(value) or not os.path.exists(value):
            continue
        real = os.path.realpath(value)
        if real == os.sep or any(inside(real, f) for f in fenced):
            continue
        if any(inside(real, p) for p in ("/proc", "/dev", "/sys", *SYSTEM_DIRS, *SYSTEM_LINKS)):
            continue  # already in its world (the system), or its own (/proc, /dev)
        out.append(real)
    return out


def fenced_places(
    *,
    scratch: Path,
    project: str | None,
    goldens: Iterable[str] = (),
    extra: Iterable[str] = (),
) -> list[str]:
    """What the agent must never see: the project, the goldens, assay's package data (the
    packaged tasks' reference solutions), the key and its folder, the user's home, the scratch
    folder (the tracer's files, the other tasks' worktrees)."""
    from assay.attest import resolve_key_path

    places = [str(scratch), str(package_folder() / "data"), *goldens, *extra]
    if project is not None:
        places.append(project)
    try:
        key = resolve_key_path(None)
        places += [str(key), str(key.parent)]
    except (AssayError, OSError, RuntimeError):
        pass
    with contextlib.suppress(RuntimeError, KeyError):
        places.append(str(Path.home()))
    return resolved(places)


def default_allow_read(scratch: Path, project: str | None = None) -> list[str]:
    """Without a sandbox: the system, this Python (and its import path), the folders of
    ``$PATH`` (and the tool prefix above a ``bin`` or ``shims`` folder), git's own
    configuration; never a folder holding ``scratch`` or the ``project``."""
    places = [*SYSTEM_PATHS, sys.prefix, sys.base_prefix, sys.exec_prefix]
    places += [p for p in sys.path if p and os.path.isabs(p)]
    places += path_dirs()
    with contextlib.suppress(RuntimeError, KeyError):
        home = Path.home()
        places += [str(home / ".gitconfig"), str(home / ".config" / "git")]
    with contextlib.suppress(OSError):
        # Not the links (self, mounts, net): resolved here they would name assay's own process.
        entries = [f"/proc/{e}" for e in os.listdir("/proc") if not e.isdigit()]
        places += [e for e in entries if not os.path.islink(e)]
    fenced = [os.path.realpath(p) for p in (scratch, project) if p is not None]
    return resolved(places, fenced)


def agent_env(world: World, extra: Mapping[str, str], passed: Iterable[str] = ()) -> dict[str, str]:
    """The environment assay builds for the agent: the caller's ``PASSED_THROUGH`` variables and
    those ``[agents.NAME] env`` names, a private ``$HOME`` and ``$TMPDIR``, assay's task
    variables (``extra``); nothing else (no ``OLDPWD``, no ``ASSAY_KEY_FILE``, no secrets)."""
    env = {k: os.environ[k] for k in (*PASSED_THROUGH, *passed) if k in os.environ}
    env.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    env.setdefault("LANG", "C.UTF-8")
    env["HOME"] = str(world.private / "home")
    env["TMPDIR"] = str(world.private / "tmp")
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    # assay's own pytest plugin is not the agent's to load (an editable install's code lives in
    # the project, outside the sandbox); the task's own plugins load as usual.
    env["PYTEST_ADDOPTS"] = "-p no:assay"
    env.update(extra)
    return env


def _system_args() -> list[str]:
    args: list[str] = []
    for place in SYSTEM_LINKS:
        if os.path.islink(place):
            args += ["--symlink", os.readlink(place), place]
        elif os.path.isdir(place):
            args += ["--ro-bind", place, place]
    for place in SYSTEM_DIRS:
        if os.path.isdir(place):
            args += ["--ro-bind", place, place]
    return args


def bwrap_args(world: World, env: Mapping[str, str]) -> list[str]:
    """The bubblewrap options that build ``world`` (the command and the fds come after)."""
    args = ["--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts"]
    args += ["--unshare-cgroup-try", *(["--unshare-net"] if world.no_network else [])]
    args += ["--disable-userns", "--cap-drop", "ALL", "--hostname", HOSTNAME]
    args += ["--die-with-parent", "--new-session", *_system_args()]
    args += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
    # Shallow first: a deeper mount is made inside the shallower one it lies in.
    for place in sorted(world.readonly, key=lambda p: (p.count(os.sep), p)):
        args += ["--ro-bind", place, place]
    for place in world.masked():
        args += ["--ro-bind", "/dev/null", place] if os.path.isfile(place) else ["--tmpfs", place]
    args += ["--bind", str(world.private), str(world.private)]
    args += ["--bind", str(world.worktree), str(world.worktree)]
    args += ["--chdir", str(world.worktree), "--clearenv"]
    for key, value in sorted(env.items()):
        args += ["--setenv", key, value]
    return args


@cache
def check_bubblewrap() -> None:
    """bubblewrap can build a sandbox here (once per process)."""
    if not sys.platform.startswith("linux"):
        raise AssayError(
            "the agent's sandbox needs Linux (bubblewrap); --isolation none runs it without one "
            "(observation only: see the threat model in docs/guide/attestation.md)"
        )
    bwrap = bwrap_path()
    if bwrap is None:
        raise AssayError(
            "the agent's sandbox needs bubblewrap, and none is installed (Debian: apt-get "
            "install bubblewrap); --isolation none runs it without one (observation only)"
        )
    probe = [bwrap, "--unshare-user", "--unshare-pid", "--disable-userns", "--cap-drop", "ALL"]
    probe += [*_system_args(), "--proc", "/proc", "--dev", "/dev", "--", "true"]
    try:
        done = subprocess.run(probe, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise AssayError(f"bubblewrap did not start: {exc}") from None
    if done.returncode != 0:
        said = (done.stderr.strip().splitlines() or ["no reason given"])[-1]
        raise AssayError(
            f"bubblewrap cannot build a sandbox here ({said}); user namespaces may be disabled "
            "(sysctl kernel.unprivileged_userns_clone=1); --isolation none runs without one"
        )
