"""Run the ``assay`` command line from a test: in-process (the default) or as a real process.

:func:`run_cli` calls ``assay.cli.main(args)`` inside the test process, the way ``python -m assay``
would run it in ``cwd``, and returns ``(exit code, stdout, stderr)``. It is about a hundred times
faster than spawning an interpreter. Process-wide state a run may touch is isolated and put back
afterwards:

- the working directory (``cwd``) and ``sys.argv``;
- ``os.environ`` (``env`` overrides are applied for the run; whatever the run changes is undone);
- ``sys.path`` and ``sys.modules``: ``cwd`` and the ``$PYTHONPATH`` entries lead ``sys.path``, as in
  ``python -m``; modules the run imports from them (a python provider's module) are forgotten;
- stdin (empty), stdout and stderr (UTF-8 text, captured; never a terminal, as with a pipe);
- signal handlers, the warning filters and the logging configuration of existing loggers;
- click's per-command cache of the help option (a process builds it once, from the first
  context that asks: ``assay`` and ``assay --help`` would otherwise depend on test order);
- ``SystemExit`` becomes the exit code; an exception escaping ``main`` is printed as the
  interpreter would print it (a traceback on stderr) and gives exit code 1;
- ``timeout``: a run still going after it is interrupted (as Ctrl-C would) and the test fails.

:func:`run_cli_subprocess` and :func:`spawn` start a real ``python -m assay``: for what only a
process shows (exit status, signals, imports at start-up, several processes at once, the
installed entry point).
"""

from __future__ import annotations

import _thread
import importlib
import io
import logging
import os
import signal
import subprocess
import sys
import threading
import time
import traceback
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

# Generous: a pathological regex or a 10 MB output must still finish well inside this.
CLI_TIMEOUT_S = 10.0

CliResult = tuple[int, str, str]
#: ``cli(*args, cwd=None, env=None)`` → (exit code, stdout, stderr).
CliRunner = Callable[..., CliResult]
Args = Sequence[str | os.PathLike[str]]
Env = Mapping[str, str | None]


class CliTimeout(AssertionError):
    """An in-process run did not finish within its timeout."""


def run_cli(
    args: Args, cwd: Path, timeout: float = CLI_TIMEOUT_S, *, env: Env | None = None
) -> CliResult:
    """``assay *args`` in ``cwd``, in-process; return (exit code, stdout, stderr)."""
    return run_cli_in_process(args, cwd, timeout=timeout, env=env)


# --------------------------------------------------------------------------- real processes


def process_env(env: Env | None = None) -> dict[str, str]:
    """The environment of a spawned ``python -m assay``: ours, UTF-8 streams, default warnings."""
    out = dict(os.environ)
    out.pop("PYTHONWARNINGS", None)
    out["PYTHONIOENCODING"] = "utf-8"
    for key, value in (env or {}).items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = value
    return out


def run_cli_subprocess(
    args: Args, cwd: Path, timeout: float = CLI_TIMEOUT_S, *, env: Env | None = None
) -> CliResult:
    """Run ``python -m assay *args`` in ``cwd`` as a real process; return (code, stdout, stderr)."""
    proc = subprocess.run(
        [sys.executable, "-m", "assay", *(str(a) for a in args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=timeout,
        env=process_env(env),
        check=False,
    )
    return proc.returncode, proc.stdout, proc.stderr


def spawn(args: Args, cwd: Path, *, env: Env | None = None) -> subprocess.Popen[str]:
    """Start ``python -m assay *args`` in ``cwd`` with piped stdout and stderr (UTF-8 text)."""
    return subprocess.Popen(
        [sys.executable, "-m", "assay", *(str(a) for a in args)],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
        env=process_env(env),
    )


# --------------------------------------------------------------------------- in-process


class _Sink(io.BytesIO):
    """A captured stream's bytes; they stay readable after the run closes the stream (``main``
    closes stderr when its reader went away)."""

    def close(self) -> None:
        self.flush()


def _universal_newlines(data: bytes) -> str:
    # What reading a pipe with text=True gives: decoded, '\r\n' and '\r' read as '\n'.
    return data.decode("utf-8", errors="replace").replace("\r\n", "\n").replace("\r", "\n")


def _exit_code(exc: SystemExit, stderr: io.TextIOBase) -> int:
    # The interpreter's rules for sys.exit(value).
    code = exc.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=stderr)
    return 1


def _purge_modules(before: set[str], roots: Sequence[Path]) -> None:
    """Forget modules the run imported from ``roots`` (a later run must import them afresh)."""
    if not roots:
        return
    for name in set(sys.modules) - before:
        if name.partition(".")[0] in ("assay", "tests"):
            continue  # our own packages, whatever the working directory
        file = getattr(sys.modules.get(name), "__file__", None)
        if file is None:
            continue
        path = Path(file).resolve()
        if any(path.is_relative_to(root) for root in roots):
            del sys.modules[name]


def _handlers() -> dict[int, Any]:
    out = {}
    for signum in signal.valid_signals():
        try:
            out[signum] = signal.getsignal(signum)
        except (OSError, ValueError):
            continue
    return out


def _restore_handlers(saved: Mapping[int, Any]) -> None:
    for signum, handler in saved.items():
        if handler is None or signal.getsignal(signum) is handler:
            continue
        try:
            signal.signal(signum, handler)
        except (OSError, ValueError, TypeError):
            continue


LoggerState = tuple[int, bool, bool, list[logging.Handler]]


def _loggers() -> dict[logging.Logger, LoggerState]:
    loggers = [logging.getLogger()]
    loggers += [
        lg for lg in logging.Logger.manager.loggerDict.values() if isinstance(lg, logging.Logger)
    ]
    return {lg: (lg.level, lg.propagate, lg.disabled, list(lg.handlers)) for lg in loggers}


def _restore_loggers(saved: Mapping[logging.Logger, LoggerState]) -> None:
    for logger, (level, propagate, disabled, handlers) in saved.items():
        logger.setLevel(level)
        logger.propagate, logger.disabled = propagate, disabled
        logger.handlers[:] = handlers


@contextmanager
def _isolated(cwd: Path, argv: list[str], env: Env | None) -> Iterator[None]:
    """The process-wide state of one in-process run, put back afterwards."""
    saved_env = dict(os.environ)
    saved_cwd = os.getcwd()
    saved_argv, saved_path = sys.argv, list(sys.path)
    saved_streams = sys.stdin, sys.stdout, sys.stderr
    saved_modules = set(sys.modules)
    saved_handlers = _handlers()
    saved_loggers = _loggers()
    roots: list[Path] = []
    try:
        for key, value in (env or {}).items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        # A pipe has no size: click wraps help text at 80 columns, as shutil's fallback gives.
        os.environ.setdefault("COLUMNS", "80")
        os.environ.setdefault("LINES", "24")
        os.chdir(cwd)
        roots = [Path.cwd().resolve()]
        roots += [
            Path(p).resolve() for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p
        ]
        # `python -m` puts the working directory first, after it $PYTHONPATH.
        sys.path[:0] = [str(p) for p in roots]
        sys.argv = ["assay", *argv]
        importlib.invalidate_caches()  # modules the test just wrote are found
        with warnings.catch_warnings():
            yield
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved_streams
        sys.argv = saved_argv
        sys.path[:] = saved_path
        _purge_modules(saved_modules, roots)
        for root in roots:
            sys.path_importer_cache.pop(str(root), None)
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
        _restore_handlers(saved_handlers)
        _restore_loggers(saved_loggers)


def _forget_help_options() -> None:
    """Drop the help option click caches on each command (``Command._help_option``)."""
    from assay.cli import COMMANDS, cli

    todo: list[Any] = [cli]
    for target in COMMANDS.values():  # the commands imported so far (they load lazily)
        module_name, attribute = target.split(":")
        module = sys.modules.get(module_name)
        if module is not None:
            todo.append(getattr(module, attribute))
    while todo:
        command = todo.pop()
        if getattr(command, "_help_option", None) is not None:
            command._help_option = None
        todo.extend(getattr(command, "commands", {}).values())


def _call_main(argv: list[str], stderr: io.TextIOBase) -> int:
    from assay.cli import main

    _forget_help_options()

    try:
        main(argv)
    except SystemExit as exc:
        return _exit_code(exc, stderr)
    except KeyboardInterrupt:
        raise
    except BaseException:
        # What the interpreter does with an exception nobody caught.
        traceback.print_exc(file=stderr)
        return 1
    return 0


def run_cli_in_process(
    args: Args, cwd: Path, *, timeout: float = CLI_TIMEOUT_S, env: Env | None = None
) -> CliResult:
    """``assay *args`` in ``cwd`` inside this process; return (exit code, stdout, stderr)."""
    argv = [str(a) for a in args]
    out_sink, err_sink = _Sink(), _Sink()
    stdout = io.TextIOWrapper(out_sink, encoding="utf-8", newline="\n", write_through=True)
    stderr = io.TextIOWrapper(
        err_sink, encoding="utf-8", errors="backslashreplace", newline="\n", write_through=True
    )
    finished, fired = threading.Event(), threading.Event()

    def watchdog() -> None:
        if not finished.wait(timeout):
            fired.set()
            _thread.interrupt_main()  # as Ctrl-C would: the run stops at its next Python step

    with _isolated(cwd, argv, env):
        sys.stdin = io.TextIOWrapper(io.BytesIO(b""), encoding="utf-8")
        sys.stdout, sys.stderr = stdout, stderr
        started = time.monotonic()
        guard = threading.Thread(target=watchdog, name="assay-cli-watchdog", daemon=True)
        guard.start()
        try:
            try:
                code = _call_main(argv, stderr)
            finally:
                finished.set()
                guard.join()
            if fired.is_set():
                time.sleep(0.01)  # an interrupt still pending arrives here, inside the try
        except KeyboardInterrupt:
            if not fired.is_set():
                raise
            code = 130
        elapsed = time.monotonic() - started
        for stream in (stdout, stderr):
            if not stream.closed:
                stream.flush()
    out, err = _universal_newlines(out_sink.getvalue()), _universal_newlines(err_sink.getvalue())
    if fired.is_set():
        raise CliTimeout(
            f"assay {' '.join(argv)} did not finish within {timeout:g} s "
            f"(interrupted after {elapsed:.1f} s, exit {code})\nstdout:\n{out}\nstderr:\n{err}"
        )
    return code, out, err
