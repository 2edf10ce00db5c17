"""The agent's worktree: made from the fixture, compared with it file by file, and copied for
verification with the task's tests and test configuration taken from the fixture.

git is run only on the fresh copy of the fixture, before the agent (so that an agent may use
``git diff``), with no user or system configuration and no hooks. After the agent nothing of
its ``.git`` is read or run: which files changed is a file-by-file comparison with the fixture,
so ``skip-worktree``, ``info/exclude``, ``git replace`` or a deleted ``.git`` hide nothing.
"""

from __future__ import annotations

import contextlib
import fnmatch
import os
import shlex
import shutil
import stat
import subprocess
import sys
import tempfile
import tomllib
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Final

from assay.agent._taxonomy import owned
from assay.errors import AssayError, GoldenError
from assay.goldens import Golden

# Not changes the agent made: caches Python and pytest write.
IGNORED_DIRS: Final = frozenset({".git", "__pycache__", ".pytest_cache"})
IGNORED_SUFFIXES: Final = (".pyc",)
# Files that configure how tests run (or run code in every Python process): taken from the
# fixture for verification; one the agent added is removed.
TEST_CONFIG: Final = ("conftest.py", "pytest.ini", ".pytest.ini", "tox.ini", "setup.cfg")
PYTHON_HOOKS: Final = ("sitecustomize.py", "usercustomize.py", "*.pth")
TEST_FILES: Final = ("test_*.py", "*_test.py")
TEST_DIRS: Final = frozenset({"tests", "test"})
DEFAULT_MAX_DISK_MB: Final = 1024
_GIT_ENV: Final = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_TERMINAL_PROMPT": "0",
}


class TaskFailure(AssayError):
    """One task could not be run or measured: that task's ``error`` result, not the run's end."""


def shown(relative: str) -> str:
    """A path as JSON can carry it: an undecodable byte of a file name as ``\\xNN``."""
    return os.fsencode(relative).decode("utf-8", errors="backslashreplace")


def _git(worktree: Path, *args: str) -> None:
    argv = ["git", "-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", *args]
    env = {**os.environ, **_GIT_ENV}
    subprocess.run(argv, cwd=worktree, env=env, capture_output=True, check=True)


def make_worktree(task: Golden, folder: Path, parent: Path) -> Path:
    """A fresh git repository holding the fixture, committed."""
    fixture = folder / "repo"
    if not fixture.is_dir():
        raise GoldenError(
            "an executable task needs a fixture repository (repo/)", source=task.source
        )
    worktree = Path(tempfile.mkdtemp(prefix=f"{task.id}-", dir=parent))
    shutil.copytree(fixture, worktree, dirs_exist_ok=True, symlinks=True)
    try:
        _git(worktree, "init", "-q")
        _git(worktree, "config", "user.name", "assay")
        _git(worktree, "config", "user.email", "assay@localhost")
        exclude = worktree / ".git" / "info" / "exclude"
        exclude.write_text("__pycache__/\n*.pyc\n.pytest_cache/\n", encoding="utf-8")
        _git(worktree, "add", "-A")
        _git(worktree, "commit", "-q", "--allow-empty", "--no-verify", "-m", "fixture")
    except (subprocess.CalledProcessError, OSError) as exc:
        said = getattr(exc, "stderr", b"") or str(exc).encode()
        raise TaskFailure(f"git could not prepare the worktree: {said.decode().strip()}") from None
    return worktree


def _entries(root: Path) -> Iterator[tuple[str, os.stat_result]]:
    """Every file and link under ``root`` (relative path, lstat), caches and ``.git`` left out,
    never following a link."""
    stack = [""]
    while stack:
        relative = stack.pop()
        try:
            names = sorted(os.listdir(root / relative))
        except OSError:
            continue
        for name in names:
            path = os.path.join(relative, name)
            if name in IGNORED_DIRS or name.endswith(IGNORED_SUFFIXES):
                continue
            try:
                info = os.lstat(root / path)
            except OSError:
                continue
            if stat.S_ISDIR(info.st_mode):
                stack.append(path)
            else:
                yield path, info


def _same(a: Path, a_info: os.stat_result, b: Path, b_info: os.stat_result) -> bool:
    if stat.S_IFMT(a_info.st_mode) != stat.S_IFMT(b_info.st_mode):
        return False
    if stat.S_ISLNK(a_info.st_mode):
        return os.readlink(a) == os.readlink(b)
    if not stat.S_ISREG(a_info.st_mode):
        return True  # a fifo or a socket: nothing to compare
    if a_info.st_size != b_info.st_size or (a_info.st_mode & 0o111) != (b_info.st_mode & 0o111):
        return False
    with open(a, "rb") as one, open(b, "rb") as other:
        while True:
            x, y = one.read(1 << 16), other.read(1 << 16)
            if x != y:
                return False
            if not x:
                return True


def changed_files(worktree: Path, fixture: Path) -> list[str]:
    """The files the agent added, changed or deleted, relative, sorted (names JSON can carry)."""
    after = dict(_entries(worktree))
    before = dict(_entries(fixture))
    changed = set(after.keys() ^ before.keys())
    for path in after.keys() & before.keys():
        try:
            if not _same(worktree / path, after[path], fixture / path, before[path]):
                changed.add(path)
        except OSError:
            changed.add(path)
    return sorted(shown(p) for p in changed)


def _is_config(relative: str) -> bool:
    name = os.path.basename(relative)
    return name in TEST_CONFIG or any(fnmatch.fnmatch(name, p) for p in PYTHON_HOOKS)


def _is_test(relative: str) -> bool:
    parts = relative.split(os.sep)
    name = parts[-1]
    return any(fnmatch.fnmatch(name, p) for p in TEST_FILES) or bool(TEST_DIRS & set(parts[:-1]))


# Modules the test runner itself imports: a file of the agent's named after one, where the
# runner's import path starts (the copy's root, a tests folder), would run in its place.
RUNNER_MODULES: Final = frozenset({"pytest", "_pytest", "pluggy", "py", "iniconfig", "packaging"})


def _module_named(relative: str) -> str | None:
    """The top-level module a file defines where the runner imports from: ``x.py`` or ``x/``
    at the copy's root or directly in a tests folder."""
    parts = relative.split(os.sep)
    if len(parts) > 1 and parts[0] in TEST_DIRS:
        parts = parts[1:]
    first = parts[0]
    if len(parts) == 1:
        return first[:-3] if first.endswith(".py") else None
    return first


def command_modules(commands: Sequence[str]) -> frozenset[str]:
    """The standard library's and the runner's modules, and each ``python -m X`` of the
    commands: none of them may be shadowed by a file of the agent's."""
    named = set()
    for command in commands:
        with contextlib.suppress(ValueError):
            words = shlex.split(command)
            named |= {words[i + 1].split(".")[0] for i, w in enumerate(words[:-1]) if w == "-m"}
    return frozenset({*sys.stdlib_module_names, *RUNNER_MODULES, *named})


def _pytest_table(path: Path) -> Any:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8")).get("tool", {}).get("pytest")
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return ...  # unreadable: never equal to a real table


# A command word that runs the file named after it (``bash check.sh``, ``python t.py``).
_INTERPRETERS: Final = frozenset(
    {"sh", "bash", "dash", "zsh", "python", "python3", "node", "perl", "ruby", "source", "."}
)
_SEPARATORS: Final = frozenset({"&&", "||", ";", "|", "&", "(", ")", "!"})


def command_files(commands: Sequence[str], fixture: Path) -> list[str]:
    """The fixture's files the verify and completion-signal commands execute: a command word
    that is a path (``./check.sh``), or the script an interpreter is given (``bash check.sh``);
    not the files they read (``grep x README.md`` reads the agent's README)."""
    out = []
    for command in commands:
        lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        try:
            words = list(lexer)
        except ValueError:
            continue
        first, after_interpreter = True, False
        for word in words:
            if word in _SEPARATORS:
                first, after_interpreter = True, False
                continue
            if first and "=" in word and not word.startswith("="):
                continue  # VAR=value before the command
            candidate = (first and "/" in word) or (after_interpreter and not word.startswith("-"))
            if candidate and _in_fixture(fixture, word):
                out.append(os.path.normpath(word))
            if after_interpreter and not word.startswith("-"):
                after_interpreter = False
            if first:
                after_interpreter = os.path.basename(word) in _INTERPRETERS
            first = False
    return out


def _in_fixture(fixture: Path, word: str) -> bool:
    relative = os.path.normpath(word)
    if relative.startswith(("..", os.sep)) or relative == ".":
        return False
    path = fixture / relative
    return path.is_file() and not path.is_symlink()


def verification_copy(
    worktree: Path,
    fixture: Path,
    dest: Path,
    *,
    owned_files: Sequence[str] = (),
    hidden_tests: Path | None = None,
    commands: Sequence[str] = (),
) -> Path:
    """The agent's worktree as verification runs it, in ``dest``: the agent's files, then from
    the fixture the test configuration (``conftest.py``, ``pytest.ini``, ``tox.ini``,
    ``setup.cfg``, ``pyproject.toml`` when its ``[tool.pytest]`` differs, ``sitecustomize``,
    ``.pth``: one the fixture lacks is removed), the test files the task does not give the
    agent to edit (``owned_files``), the files the commands run, and the modules the runner
    imports (a ``pytest.py`` or ``json.py`` the agent added is removed; the fixture's own modules
    stay the agent's to change); then the hidden tests."""
    total = 0
    try:
        dest.mkdir(parents=True, exist_ok=True)
        for relative, info in _entries(worktree):
            if not (stat.S_ISREG(info.st_mode) or stat.S_ISLNK(info.st_mode)):
                continue  # a fifo or a socket: nothing a test reads
            total += info.st_size
            if total > DEFAULT_MAX_DISK_MB << 20:
                raise TaskFailure(f"the worktree holds more than {DEFAULT_MAX_DISK_MB} MB")
            target = dest / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            if stat.S_ISLNK(info.st_mode):
                os.symlink(os.readlink(worktree / relative), target)
            else:
                shutil.copy2(worktree / relative, target, follow_symlinks=False)
        _restore(dest, fixture, owned_files, commands)
        if hidden_tests is not None and hidden_tests.is_dir():
            shutil.copytree(hidden_tests, dest / "tests", dirs_exist_ok=True, symlinks=True)
    except OSError as exc:
        raise TaskFailure(f"the worktree could not be copied for verification: {exc}") from None
    return dest


def _restore(
    dest: Path, fixture: Path, owned_files: Sequence[str], commands: Sequence[str]
) -> None:
    fixture_files = {p for p, _ in _entries(fixture)}
    modules = command_modules(commands)
    for relative, _ in list(_entries(dest)):
        if relative in fixture_files:
            continue
        # A conftest.py or .pth the agent added, or its pytest.py / json.py.
        planted = _is_config(relative) or _module_named(relative) in modules
        config = relative == "pyproject.toml" and _pytest_table(dest / relative) is not None
        if planted or config:
            (dest / relative).unlink()
    wanted = set(command_files(commands, fixture))
    for relative in fixture_files:
        if _is_config(relative) or relative in wanted:
            _put(fixture, dest, relative)
        elif relative == "pyproject.toml":
            if _pytest_table(dest / relative) != _pytest_table(fixture / relative):
                _put(fixture, dest, relative)
        elif _is_test(relative) and not owned(shown(relative), owned_files):
            _put(fixture, dest, relative)


def _put(fixture: Path, dest: Path, relative: str) -> None:
    target = dest / relative
    if target.is_symlink() or target.is_file():
        target.unlink()
    elif target.is_dir():
        shutil.rmtree(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(fixture / relative, target, follow_symlinks=False)
