"""The hostile-input suite (``pytest -m hostile``) names modules that exist: a renamed file must
not drop out of it unseen."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import HOSTILE_MODULES

ROOT = Path(__file__).resolve().parents[1]


def test_every_hostile_module_exists() -> None:
    assert sorted(m for m in HOSTILE_MODULES if not (ROOT / m).is_file()) == []
