"""Ctrl-C while assay is still importing its CLI exits 130 with one line, never a traceback
(the console script used to import click and every command before any handler existed)."""

from __future__ import annotations

import importlib
import importlib.abc
import sys
import tomllib
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

import pytest


class _InterruptOnImport(importlib.abc.MetaPathFinder):
    """Raises KeyboardInterrupt when click is imported, as a Ctrl-C there would."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> None:
        if fullname == "click":
            raise KeyboardInterrupt
        return None


def test_an_interrupt_while_the_cli_imports_exits_130_with_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in [m for m in sys.modules if m.split(".")[0] == "click" or m.startswith("assay.cli")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setattr(sys, "meta_path", [_InterruptOnImport(), *sys.meta_path])
    with pytest.raises(SystemExit) as info:
        importlib.import_module("assay.cli")
    assert info.value.code == 130
    assert capsys.readouterr().err == "assay: interrupted\n"


def test_the_console_script_and_python_m_use_the_guarded_cli() -> None:
    root = Path(__file__).parents[2]
    pyproject = tomllib.loads((root / "pyproject.toml").read_text())
    assert pyproject["project"]["scripts"]["assay"] == "assay.cli:main"
    main_module = (root / "src" / "assay" / "__main__.py").read_text()
    assert "from assay.cli import main" in main_module
