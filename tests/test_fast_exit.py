"""The console entry point leaves without the interpreter's teardown only when that loses
nothing: exit functions run, output is flushed, and a project's code or another thread makes
it exit the usual way."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

# Prints whether leave() returned (the usual exit follows) or ended the process itself.
SCRIPT = """
import atexit, sys
atexit.register(lambda: sys.stdout.write("exit functions ran\\n"))
{setup}
from assay._entry import leave
sys.stdout.write("buffered, not flushed\\n")
leave(SystemExit({code}))
sys.stdout.write("leave returned\\n")
sys.exit({code})
"""


def run(tmp_path: Path, setup: str = "", code: str = "3") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", SCRIPT.format(setup=setup, code=code)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_it_ends_the_process_with_the_code_after_the_exit_functions_and_a_flush(
    tmp_path: Path,
) -> None:
    done = run(tmp_path)
    assert done.returncode == 3
    assert done.stdout == "buffered, not flushed\nexit functions ran\n"


def test_a_project_module_means_the_usual_exit(tmp_path: Path) -> None:
    (tmp_path / "project_check.py").write_text("x = 1\n", encoding="utf-8")
    done = run(tmp_path, "sys.path.insert(0, '.'); import project_check")
    assert done.returncode == 3
    assert "leave returned" in done.stdout


def test_another_running_thread_means_the_usual_exit(tmp_path: Path) -> None:
    setup = "import threading, time; threading.Thread(target=time.sleep, args=(0.5,)).start()"
    done = run(tmp_path, setup)
    assert done.returncode == 3
    assert "leave returned" in done.stdout


def test_a_text_exit_code_means_the_usual_exit(tmp_path: Path) -> None:
    done = run(tmp_path, code="'message'")
    assert done.returncode == 1
    assert "leave returned" in done.stdout
    assert "message" in done.stderr


def test_a_project_file_left_unflushed_is_still_written(tmp_path: Path) -> None:
    # The case the rule exists for: a project's module holding a buffered file.
    (tmp_path / "project_log.py").write_text(
        "handle = open('log.txt', 'w')\nhandle.write('kept\\n')\n", encoding="utf-8"
    )
    done = run(tmp_path, "sys.path.insert(0, '.'); import project_log")
    assert done.returncode == 3
    assert (tmp_path / "log.txt").read_text(encoding="utf-8") == "kept\n"


def test_the_command_line_output_is_whole_through_a_pipe(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "assay", "gate", "--example", "--no-save", "--format", "json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    import json

    assert json.loads(done.stdout)["summary"]


def test_a_plugin_in_site_packages_is_foreign_wherever_it_is(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Where a module lies says nothing (a project inside /usr, a plugin in site-packages): only
    # Python's, assay's and its dependencies' modules allow the quick exit.
    import os
    import types

    from assay import _entry

    plugin = types.ModuleType("assay_format_plugin")
    plugin.__file__ = os.path.join(sys.prefix, "lib", "site-packages", "assay_format_plugin.py")
    monkeypatch.setitem(sys.modules, "assay_format_plugin", plugin)
    assert "assay_format_plugin" in _entry.foreign_modules()
    monkeypatch.delitem(sys.modules, "assay_format_plugin")
    assert "assay_format_plugin" not in _entry.foreign_modules()


# Every report format and the baseline steps of a gate run import only assay and its
# dependencies: the list above covers what a gate run needs, so it keeps its quick exit.
GATE_PATHS = """
import sys
from assay import _entry
from assay.cli import main
runs = [
    ["gate", "--example", "--no-save", "-w", "-b", "base.json"],
    ["gate", "--example", "--no-save", "-c", "-b", "base.json"],
    *(["gate", "--example", "--no-save", "-f", f, "-o", "report." + f]
      for f in ("text", "json", "markdown", "junit", "html", "outputs")),
    ["gate", "--example"],
    ["runs", "list"],
]
for args in runs:
    try:
        main(args)
    except SystemExit as done:
        assert done.code in (0, 2), (args, done.code)
print(_entry.foreign_modules())
"""


def test_the_gate_paths_import_nothing_foreign(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", GATE_PATHS],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"
