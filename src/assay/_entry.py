"""The console script's entry point, kept free of imports so that Ctrl-C is handled from the
first moment: importing the CLI (click, the commands) takes tens of milliseconds, and an
interrupt in that window used to print a traceback instead of exiting 130.

It also leaves quickly. Once a command is done, all that remains is the interpreter's own
teardown: freeing every object of the run one by one (a 10,000-golden gate run's goldens,
results and documents, and some 400 modules) took about 20 ms, a twentieth of the run, to give
back memory the process is about to give back whole. :func:`leave` skips it when nothing can
be lost by that (mypy's ``hard_exit`` does the same), and exits as usual otherwise.
"""

from __future__ import annotations

import os
import sys
from typing import Final


def main() -> None:
    """Import the CLI and run it; an interrupt at any point exits 130 with one line."""
    import gc

    # Importing the CLI makes thousands of objects that live as long as the process (modules,
    # functions, classes): at the default threshold the collector rescans them as they come.
    # The CLI sets the same threshold for the command itself (see assay.cli.main).
    gc.set_threshold(20_000, 20, 20)
    try:
        from assay.cli import main as cli_main
    except KeyboardInterrupt:
        sys.stderr.write("assay: interrupted\n")
        sys.exit(130)
    try:
        cli_main()
    except SystemExit as exc:
        leave(exc)
        raise


def leave(done: SystemExit) -> None:
    """End the process with ``done``'s exit code, skipping the interpreter's teardown, when
    that loses nothing; else return (the caller raises ``done``: the usual exit).

    What a teardown does that matters is done here first: the exit functions run (a coverage
    or Ray shutdown hook, logging's flush) and standard output and error are flushed. It is
    skipped only when no code but Python's, assay's and its dependencies' was imported (a
    project's python check or provider, or a plugin, may hold a buffered file that only its
    teardown flushes), no other thread runs (the interpreter would wait for it), and the exit
    code is a number.
    """
    code = done.code
    if code is None:
        code = 0
    if type(code) is not int or not _nothing_to_lose():
        return
    import atexit

    run_exit_functions = getattr(atexit, "_run_exitfuncs", None)  # CPython's, 3.x
    if run_exit_functions is None:
        return
    try:
        run_exit_functions()
        sys.stdout.flush()
        sys.stderr.flush()
    except Exception:  # a closed pipe...: the usual exit reports it as it always has
        return
    os._exit(code)


# The top-level modules of assay and of the libraries it depends on (pyproject.toml's
# dependencies and what they import), besides Python's own. Any other module (a project's
# python check or provider, a plugin, whatever its folder) means the usual exit; a dependency
# that gains a module only costs the quick exit (tests/test_fast_exit.py runs the gate's paths).
_OWN: Final = frozenset(
    {
        "assay",
        "_distutils_hack",  # setuptools' hook in a virtualenv's site-packages
        "_yaml",
        "anyio",
        "attr",
        "attrs",
        "certifi",
        "click",
        "h11",
        "httpcore",
        "httpx",
        "idna",
        "jinja2",
        "jsonschema",
        "jsonschema_specifications",
        "markdown_it",
        "markupsafe",
        "mdurl",
        "mypy_extensions",
        "numpy",
        "pygments",
        "rapidfuzz",
        "referencing",
        "regex",
        "rich",
        "rpds",
        "scipy",
        "sniffio",
        "sqlglot",
        "typing_extensions",
        "yaml",
    }
)


def foreign_modules() -> list[str]:
    """The imported modules that are neither Python's, assay's nor its dependencies'."""
    allowed = _OWN | frozenset(getattr(sys, "stdlib_module_names", ()))
    here = os.path.dirname(os.path.abspath(__file__))
    found = []
    for name, module in list(sys.modules.items()):
        where = getattr(module, "__file__", None)
        if where is None:
            continue  # built in, frozen, or a namespace: no code of a file
        top = name.partition(".")[0]
        if top == "__main__":  # python -m assay, or the console script
            path = os.path.abspath(where)
            if path.startswith(os.path.join(here, "")) or path.startswith(
                os.path.join(os.path.abspath(sys.prefix), "")
            ):
                continue
        elif top in allowed or top.startswith("__editable__"):  # an editable install's finder
            continue
        found.append(name)
    return found


def _nothing_to_lose() -> bool:
    threading = sys.modules.get("threading")
    if threading is not None and threading.active_count() != 1:
        return False
    if sys.flags.inspect or os.environ.get("PYTHONINSPECT"):  # python -i: stay
        return False
    return not foreign_modules()
