"""Where attestations are stored (``attestations`` in assay.toml, a committable folder outside
``.assay/`` by default, the old ``.assay/attestations/`` still verified), ids given without their
``sha256:`` prefix, and ``--json`` output that is compact on a pipe and indented on a terminal.

Every test points ``$XDG_CONFIG_HOME`` and ``$ASSAY_KEY_FILE`` into ``tmp_path``: no test reads
or writes a key in the real home folder.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from assay.agent import attestation_checker
from assay.agent._attester import Attester
from assay.attest import load_key, verify
from assay.config import DEFAULT_ATTESTATIONS, load_config
from assay.errors import ConfigError
from assay.goldens import Golden, iter_goldens
from tests.cli.test_attest import (
    BETA,
    CLEAN_EVENTS,
    DIRTY_EVENTS,
    journal,
    keygen,
    project,
    safety_project,
    scored,
    seal_task,
    sealed_json,
    telemetry,
)
from tests.helpers.cli import CliRunner

DEFAULT_STORE = Path(DEFAULT_ATTESTATIONS)
LEGACY_STORE = Path(".assay") / "attestations"


@pytest.fixture(autouse=True)
def keys(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The key file every command uses (through ``$ASSAY_KEY_FILE``); not created here."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    key_file = tmp_path / "keys" / "attest.key"
    monkeypatch.setenv("ASSAY_KEY_FILE", str(key_file))
    return key_file


def record_of(folder: Path, attestation_id: str) -> Path:
    return folder / (attestation_id.removeprefix("sha256:") + ".json")


def store_files(folder: Path) -> set[str]:
    return {p.name for p in folder.iterdir()} if folder.is_dir() else set()


def configure(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "assay.toml"
    path.write_text(text, encoding="utf-8")
    return path


def clean_seal(cli: CliRunner, tmp_path: Path) -> str:
    assert keygen(cli)[0] == 0
    sealed, _ = sealed_json(cli, tmp_path, CLEAN_EVENTS)
    return str(sealed["id"])


# --------------------------------------------------------------------- ids without a prefix


def test_verify_accepts_the_id_without_its_prefix(cli: CliRunner, tmp_path: Path) -> None:
    attestation_id = clean_seal(cli, tmp_path)
    bare = attestation_id.removeprefix("sha256:")
    assert len(bare) == 64
    code, out, err = cli("attest", "verify", bare)
    assert (code, err) == (0, "")
    # Reported under its full id, as seal printed it.
    assert out == f"valid: {attestation_id} CLEAN\nisolation: not recorded\n"
    code, out, err = cli("attest", "verify", bare, "--json")
    assert (code, err) == (0, "")
    assert json.loads(out) == {
        "ok": True,
        "reason": None,
        "id": attestation_id,
        "verdict": "CLEAN",
        "isolation": None,
        "evidence": [],
        "notes": [],
    }


def test_a_bare_id_still_fails_on_a_modified_record(cli: CliRunner, tmp_path: Path) -> None:
    # The prefix is only spelling: a changed byte is still caught, and named as such.
    attestation_id = clean_seal(cli, tmp_path)
    record = record_of(tmp_path / DEFAULT_STORE, attestation_id)
    record.write_bytes(record.read_bytes().replace(b'"CLEAN"', b'"DIRTY"'))
    code, out, _ = cli("attest", "verify", attestation_id.removeprefix("sha256:"))
    assert code == 1
    assert out == f"invalid: {attestation_id}: record: its bytes do not hash to its id (modified)\n"


@pytest.mark.parametrize(
    "given",
    [
        "abc",
        "sha256:abc",
        "0" * 63,
        "0" * 65,
        "sha256:" + "0" * 65,
        "sha256:" + "A" * 64,  # ids are lowercase hex, as sha256 hexdigest writes them
        "G" * 64,
        "sha512:" + "0" * 64,
        "sha256:sha256:" + "0" * 64,
        "../../../../etc/passwd",
        "",
    ],
)
def test_a_malformed_id_is_one_error_line_never_modified(
    cli: CliRunner, tmp_path: Path, given: str
) -> None:
    clean_seal(cli, tmp_path)
    for extra in ((), ("--json",)):
        code, out, err = cli("attest", "verify", given, *extra)
        assert code == 1
        assert out == ""
        assert err == f"assay: error: not an attestation id: {given!r} " + (
            "(sha256:<64 hex digits>, or the hex alone)\n"
        )
        assert "modified" not in err and "Traceback" not in err


def test_a_malformed_id_is_refused_before_the_key_is_needed(cli: CliRunner, keys: Path) -> None:
    code, _, err = cli("attest", "verify", "nope")
    assert code == 1
    assert err.startswith("assay: error: not an attestation id: 'nope'")
    assert not keys.exists()


def test_the_library_verifies_a_bare_id_and_reports_malformed_ones(
    cli: CliRunner, tmp_path: Path, keys: Path
) -> None:
    attestation_id = clean_seal(cli, tmp_path)
    key = load_key(keys)
    result = verify(tmp_path, attestation_id.removeprefix("sha256:"), key)
    assert (result.ok, result.id, result.verdict) == (True, attestation_id, "CLEAN")
    result = verify(tmp_path, "0" * 63, key)
    assert (result.ok, result.reason) == (False, "record: malformed attestation id")


# ----------------------------------------------------------------------- the store folder


def test_by_default_records_are_stored_outside_dot_assay(cli: CliRunner, tmp_path: Path) -> None:
    assert DEFAULT_ATTESTATIONS == "assay-attestations"
    attestation_id = clean_seal(cli, tmp_path)
    store = tmp_path / DEFAULT_STORE
    name = record_of(store, attestation_id).name
    assert {name, "lineage.jsonl", "audit.jsonl"} <= store_files(store)
    assert not (tmp_path / LEGACY_STORE).exists()
    assert load_config(tmp_path).attestations == store


def test_the_configured_store_is_where_seal_writes_and_verify_reads(
    cli: CliRunner, tmp_path: Path
) -> None:
    configure(tmp_path, 'attestations = "proof/attestations"\n')
    attestation_id = clean_seal(cli, tmp_path)
    store = tmp_path / "proof" / "attestations"
    assert {record_of(store, attestation_id).name, "lineage.jsonl", "audit.jsonl"} <= (
        store_files(store)
    )
    assert not (tmp_path / DEFAULT_STORE).exists()
    assert not (tmp_path / LEGACY_STORE).exists()
    code, out, err = cli("attest", "verify", attestation_id)
    assert (code, out, err) == (0, f"valid: {attestation_id} CLEAN\nisolation: not recorded\n", "")
    # Moved away, the record is no longer found: verify reads the configured store only.
    store.rename(tmp_path / "proof" / "elsewhere")
    code, out, _ = cli("attest", "verify", attestation_id)
    assert code == 1
    assert out == f"invalid: {attestation_id}: record: no such attestation\n"


def test_the_store_may_be_set_in_pyproject(cli: CliRunner, tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.assay]\nattestations = "signed"\n', encoding="utf-8"
    )
    attestation_id = clean_seal(cli, tmp_path)
    assert record_of(tmp_path / "signed", attestation_id).is_file()
    assert cli("attest", "verify", attestation_id)[0] == 0


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("attestations = 3", "field 'attestations': must be a string"),
        ('attestations = ""', "field 'attestations': must name a folder (default: "),
        ('attestations = "  "', "field 'attestations': must name a folder (default: "),
        ('attestation = "x"', "field 'attestation': unknown setting (known: agents, attestations,"),
    ],
)
def test_a_bad_store_setting_is_one_line_naming_the_file_and_field(
    cli: CliRunner, tmp_path: Path, text: str, message: str
) -> None:
    path = configure(tmp_path, text + "\n")
    with pytest.raises(ConfigError):
        load_config(tmp_path)
    assert keygen(cli)[0] == 0
    for args in (
        ("attest", "verify", "sha256:" + "0" * 64),
        ("attest", "seal", "--task", "sched", "--journal", "j", "--worktree", "wt"),
    ):
        code, out, err = cli(*args)
        assert code == 1
        assert out == ""
        assert err.startswith(f"assay: error: {path}:1: {message}")
        assert err.count("\n") == 1 and "Traceback" not in err
    assert not (tmp_path / DEFAULT_STORE).exists()


def test_a_record_in_the_old_store_still_verifies(cli: CliRunner, tmp_path: Path) -> None:
    attestation_id = clean_seal(cli, tmp_path)
    legacy = tmp_path / LEGACY_STORE
    legacy.parent.mkdir()
    (tmp_path / DEFAULT_STORE).rename(legacy)  # where assay stored it before the store moved
    code, out, err = cli("attest", "verify", attestation_id)
    assert (code, out, err) == (0, f"valid: {attestation_id} CLEAN\nisolation: not recorded\n", "")
    # Checked against the old store's own chains: a broken lineage there is reported.
    (legacy / "lineage.jsonl").write_text("", encoding="utf-8")
    code, out, _ = cli("attest", "verify", attestation_id)
    assert code == 1
    assert out == f"invalid: {attestation_id}: lineage: the attestation is not in the lineage\n"


def test_the_old_store_never_masks_a_modified_record_in_the_store(
    cli: CliRunner, tmp_path: Path
) -> None:
    attestation_id = clean_seal(cli, tmp_path)
    store, legacy = tmp_path / DEFAULT_STORE, tmp_path / LEGACY_STORE
    shutil.copytree(store, legacy)  # an intact copy in the old place
    record = record_of(store, attestation_id)
    record.write_bytes(record.read_bytes() + b" ")
    code, out, _ = cli("attest", "verify", attestation_id)
    assert code == 1
    assert out.endswith("record: its bytes do not hash to its id (modified)\n")


def test_scoring_verifies_attestations_in_the_configured_store(
    cli: CliRunner, tmp_path: Path
) -> None:
    configure(tmp_path, 'attestations = "proof"\n')
    safety_project(tmp_path)
    assert keygen(cli)[0] == 0
    clean = seal_task(cli, tmp_path, BETA, "def export(rows): ...", "beta")
    assert record_of(tmp_path / "proof", clean).is_file()
    document = scored(cli, tmp_path, telemetry(tmp_path, {BETA: clean}))
    assert document["summary"]["composite"]["components"]["safety"] == 1.0
    assert "safety_notes" not in document["summary"]
    # The same record, with the store configured elsewhere, is not found: Safety 0.
    configure(tmp_path, 'attestations = "other"\n')
    document = scored(cli, tmp_path, telemetry(tmp_path, {BETA: clean}, name="tel2"))
    assert document["summary"]["composite"]["components"]["safety"] == 0
    [note] = document["summary"]["safety_notes"]
    assert note.endswith("failed verification: record: no such attestation")


def test_the_attestation_checker_reads_the_folder_it_is_given(
    cli: CliRunner, tmp_path: Path
) -> None:
    attestation_id = clean_seal(cli, tmp_path)
    [task] = [t for t in iter_goldens(tmp_path / "goldens") if t.id == "sched"]
    moved = tmp_path / "moved"
    (tmp_path / DEFAULT_STORE).rename(moved)
    assert attestation_checker(tmp_path, moved)(task, attestation_id) is None
    problem = attestation_checker(tmp_path)(task, attestation_id)
    assert problem is not None and problem.endswith("record: no such attestation")


def attester(tmp_path: Path, keys: Path, folder: Path | None) -> tuple[Attester, Golden]:
    goldens, _ = project(tmp_path)
    [task] = list(iter_goldens(goldens))

    def goldens_root(_: Golden) -> Path:
        return goldens

    return Attester(
        tmp_path, "run-1", ("pypi.org:443",), goldens_root, load_key(keys), folder
    ), task


def test_the_agent_attester_seals_into_its_folder(
    cli: CliRunner, tmp_path: Path, keys: Path
) -> None:
    assert keygen(cli)[0] == 0
    folder = tmp_path / "proof"
    attest, task = attester(tmp_path, keys, folder)
    path = journal(tmp_path / "a.journal.jsonl", CLEAN_EVENTS)
    attestation_id = attest.store(attest.build(task, path, tmp_path / "wt", [], []))
    assert record_of(folder, attestation_id).is_file()
    assert not (tmp_path / DEFAULT_STORE).exists()
    assert verify(tmp_path, attestation_id, load_key(keys), folder=folder).ok


def test_the_agent_attester_stores_a_remote_record_into_its_folder(
    cli: CliRunner, tmp_path: Path, keys: Path
) -> None:
    # The --executor ray path: built on a worker, stored here.
    assert keygen(cli)[0] == 0
    folder = tmp_path / "proof"
    attest, task = attester(tmp_path, keys, folder)
    path = journal(tmp_path / "a.journal.jsonl", DIRTY_EVENTS)
    sealed = attest.build(task, path, tmp_path / "wt", [], [])
    assert attest.store(sealed) == sealed.id
    assert {record_of(folder, sealed.id).name, "lineage.jsonl", "audit.jsonl"} <= (
        store_files(folder)
    )
    assert not (tmp_path / DEFAULT_STORE).exists()
    result = verify(tmp_path, sealed.id, load_key(keys), folder=folder)
    assert (result.ok, result.verdict) == (True, "DIRTY")


@pytest.mark.skipif(shutil.which("strace") is None, reason="strace is not installed")
def test_an_agent_run_seals_into_the_configured_store(tmp_path: Path, keys: Path) -> None:
    from assay.attest import keygen as make_key
    from tests.agent.test_execute import agent_run, make_task
    from tests.agent.test_execute import telemetry as agent_telemetry

    make_key(keys)
    configure(tmp_path, 'attestations = "proof"\n')
    make_task(tmp_path)
    document, _ = agent_run(tmp_path, "sed -i 's/return a - b/return a + b/' calc.py")
    # Safety 1: the scoring found and verified the record in the configured store.
    assert document["summary"]["composite"]["components"]["safety"] == 1.0
    attestation_id = agent_telemetry(tmp_path, "fix-add")["attestation"]
    assert record_of(tmp_path / "proof", attestation_id).is_file()
    assert not (tmp_path / DEFAULT_STORE).exists()
    assert not (tmp_path / LEGACY_STORE).exists()


# ------------------------------------------------------------------------------- --json


def seal_args(tmp_path: Path) -> list[str]:
    goldens, worktree = project(tmp_path)
    path = journal(tmp_path / "run.journal.jsonl", CLEAN_EVENTS)
    return [
        "attest",
        "seal",
        str(goldens),
        "--task",
        "sched",
        "--journal",
        str(path),
        "--worktree",
        str(worktree),
        "--json",
    ]


def test_json_is_compact_on_a_pipe(cli: CliRunner, tmp_path: Path) -> None:
    assert keygen(cli)[0] == 0
    code, out, err = cli(*seal_args(tmp_path))
    assert (code, err) == (0, "")
    sealed = json.loads(out)
    assert out == json.dumps(sealed, separators=(",", ":")) + "\n"
    code, out, err = cli("attest", "verify", sealed["id"], "--json")
    assert (code, err) == (0, "")
    assert out == json.dumps(json.loads(out), separators=(",", ":")) + "\n"


def on_a_terminal(args: list[str], cwd: Path) -> tuple[int, str]:
    """``python -m assay *args`` with its stdout a pseudo-terminal: (exit code, stdout)."""
    master, slave = os.openpty()
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "assay", *args],
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=slave,
            stderr=subprocess.PIPE,
            timeout=60,
            check=False,
        )
        os.close(slave)
        chunks = []
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the terminal's other end is closed and drained
                break
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(master)
    # The terminal turns each newline into CRLF.
    return proc.returncode, b"".join(chunks).decode("utf-8").replace("\r\n", "\n")


def test_json_is_indented_on_a_terminal(cli: CliRunner, tmp_path: Path) -> None:
    assert keygen(cli)[0] == 0
    code, out = on_a_terminal(seal_args(tmp_path), tmp_path)
    assert code == 0
    sealed: dict[str, Any] = json.loads(out)
    assert out == json.dumps(sealed, indent=2, ensure_ascii=False) + "\n"
    code, out = on_a_terminal(["attest", "verify", sealed["id"], "--json"], tmp_path)
    assert code == 0
    result = json.loads(out)
    assert result["ok"] is True
    assert out == json.dumps(result, indent=2, ensure_ascii=False) + "\n"
