"""Ctrl-C while assay is still importing its CLI exits 130 with one line, never a traceback
(the console script used to import click and every command before any handler existed)."""

from __future__ import annotations

import importlib.abc
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

import pytest

from assay import _entry


class _InterruptOnImport(importlib.abc.MetaPathFinder):
    """Raises KeyboardInterrupt when ``assay.cli`` is imported, as a Ctrl-C there would."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> None:
        if fullname == "assay.cli":
            raise KeyboardInterrupt
        return None


def test_an_interrupt_while_the_cli_imports_exits_130_with_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in [m for m in sys.modules if m == "assay.cli" or m.startswith("assay.cli.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setattr(sys, "meta_path", [_InterruptOnImport(), *sys.meta_path])
    with pytest.raises(SystemExit) as info:
        _entry.main()
    assert info.value.code == 130
    assert capsys.readouterr().err == "assay: interrupted\n"


def test_the_console_script_and_python_m_use_the_guarded_entry_point() -> None:
    import tomllib

    pyproject = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    assert pyproject["project"]["scripts"]["assay"] == "assay._entry:main"
    main_module = Path(_entry.__file__).with_name("__main__.py").read_text()
    assert "from assay._entry import main" in main_module
