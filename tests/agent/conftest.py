"""Agent runs are journaled and sealed: every test here gets an attestation key of its own."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def attestation_key(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """Each journaled run seals with a key of its own, outside the project."""
    from assay.attest import keygen

    key = tmp_path_factory.mktemp("key") / "attest.key"
    keygen(key)
    monkeypatch.setenv("ASSAY_KEY_FILE", str(key))
    return key
