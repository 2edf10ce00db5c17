"""Lines appended to the lineage or the audit log after a record's entry cannot undo it.

``verify`` checks each chain from genesis up to and including the record's own entry. Damage
after it (a forged line, garbage, a torn line) is a note naming the file and line, shown by
``assay attest verify`` in text and ``--json``; a record whose entry is at or after the damage
fails, naming the line; a seal onto the damaged chain is still refused, naming the line.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from assay.attest import Journal, canonical_json, keygen, load_key, seal, verify
from assay.errors import AssayError
from assay.goldens import iter_goldens
from tests.helpers.cli import CliRunner
from tests.helpers.goldens import write_golden

ANSWER = "the planner now retries each failed shard twice before giving up"


@pytest.fixture
def key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> bytes:
    """The key the CLI reads too (through ``$ASSAY_KEY_FILE``)."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    path = tmp_path / "keys" / "attest.key"
    monkeypatch.setenv("ASSAY_KEY_FILE", str(path))
    keygen(path)
    return load_key(path)


def sealed(tmp_path: Path, key: bytes, name: str) -> str:
    goldens, worktree = tmp_path / "goldens", tmp_path / "wt"
    if not goldens.exists():
        write_golden(goldens, "plan.md", f'id: plan\ninput: "Fix it."\nexpected: "{ANSWER}"')
    worktree.mkdir(exist_ok=True)
    journal = Journal(tmp_path / f"{name}.journal.jsonl")
    journal.append(kind="exec", command="pytest -q")
    tasks = list(iter_goldens(goldens))
    return seal(tmp_path, tasks, goldens, "plan", journal.path, worktree, [], name, key).id


def chain(tmp_path: Path, name: str) -> Path:
    return tmp_path / "assay-attestations" / f"{name}.jsonl"


def _forged_entry(data: bytes) -> bytes:
    """A well-formed next entry whose seal is not its own (a forger without the key)."""
    last = json.loads(data.splitlines()[-1])
    entry: dict[str, Any] = {"index": last["index"] + 1, "id": "sha256:" + "0" * 64}
    entry["prev"] = last.get("hash", last.get("mac"))
    entry["hash" if "hash" in last else "mac"] = "f" * 64
    return data + canonical_json(entry) + b"\n"


APPENDED: dict[str, tuple[Callable[[bytes], bytes], str]] = {
    "forged-entry": (_forged_entry, "entry 2 does not chain to the one before"),
    "garbage": (lambda data: data + b"{not json\n", "not canonical JSON"),
    "torn": (lambda data: data + b'{"index":2,"id":"sha', "not canonical JSON"),
}


@pytest.mark.parametrize("name", ["lineage", "audit"])
@pytest.mark.parametrize("how", sorted(APPENDED))
def test_a_line_appended_after_the_entries_leaves_the_records_valid_with_a_note(
    tmp_path: Path, key: bytes, name: str, how: str
) -> None:
    first, second = sealed(tmp_path, key, "one"), sealed(tmp_path, key, "two")
    path = chain(tmp_path, name)
    damage, problem = APPENDED[how]
    path.write_bytes(damage(path.read_bytes()))
    what = "the lineage file" if name == "lineage" else "the audit log"
    for line, attestation in ((1, first), (2, second)):
        result = verify(tmp_path, attestation, key)
        assert (result.ok, result.reason, result.verdict) == (True, None, "CLEAN")
        assert result.notes == (
            f"{name}: {what} is damaged at {path}:3 ({problem}), after this attestation's"
            f" entry (line {line}); sealing refuses until it is repaired",
        )


@pytest.mark.parametrize("name", ["lineage", "audit"])
def test_a_damaged_line_fails_its_own_record_and_the_later_ones_not_the_earlier(
    tmp_path: Path, key: bytes, name: str
) -> None:
    first, second, third = (sealed(tmp_path, key, n) for n in ("one", "two", "three"))
    path = chain(tmp_path, name)
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(lines[0] + b"{not json\n" + lines[2])  # the second seal's entry is gone
    where = "the lineage file" if name == "lineage" else "the audit log"
    damaged = f"{name}: {where} is damaged at {path}:2 (not canonical JSON)"

    result = verify(tmp_path, first, key)
    assert result.ok is True
    assert result.notes[0].startswith(damaged + ", after this attestation's entry (line 1)")
    result = verify(tmp_path, second, key)
    assert result.ok is False
    assert result.reason == f"{damaged}, and the attestation is not in the intact lines before it"
    result = verify(tmp_path, third, key)
    assert result.ok is False
    assert result.reason == f"{damaged}, before this attestation's entry (line 3)"


def test_a_rewritten_entry_fails_naming_its_line(tmp_path: Path, key: bytes) -> None:
    first, second = sealed(tmp_path, key, "one"), sealed(tmp_path, key, "two")
    path = chain(tmp_path, "lineage")
    path.write_bytes(path.read_bytes().replace(b'"run_id":"two"', b'"run_id":"owt"'))
    result = verify(tmp_path, second, key)
    assert result.ok is False
    assert result.reason == (
        f"lineage: the lineage file is damaged at {path}:2 (entry 1 does not chain to the one"
        " before): it is this attestation's entry"
    )
    assert verify(tmp_path, first, key).ok is True


def test_a_last_line_without_its_newline_fails_its_record(tmp_path: Path, key: bytes) -> None:
    # The entry checks, but the next seal would glue its line to it: it is damage, at the line
    # of the record's own entry.
    first = sealed(tmp_path, key, "one")
    path = chain(tmp_path, "audit")
    path.write_bytes(path.read_bytes().rstrip(b"\n"))
    result = verify(tmp_path, first, key)
    assert result.ok is False
    assert result.reason == (
        f"audit: the audit log is damaged at {path}:1 (the last line is cut short (no newline)):"
        " it is this attestation's entry"
    )


def test_a_lineage_note_is_kept_when_the_audit_then_fails(tmp_path: Path, key: bytes) -> None:
    first = sealed(tmp_path, key, "one")
    lineage, audit = chain(tmp_path, "lineage"), chain(tmp_path, "audit")
    lineage.write_bytes(lineage.read_bytes() + b"{not json\n")
    audit.unlink()
    result = verify(tmp_path, first, key)
    assert result.ok is False
    assert result.reason == "audit: the attestation is not in the audit log"
    assert len(result.notes) == 1 and result.notes[0].startswith("lineage: the lineage file is")


@pytest.mark.parametrize("name", ["lineage", "audit"])
def test_sealing_onto_a_damaged_tail_still_refuses_naming_the_line(
    tmp_path: Path, key: bytes, name: str
) -> None:
    first = sealed(tmp_path, key, "one")
    path = chain(tmp_path, name)
    path.write_bytes(path.read_bytes() + b"{not json\n")
    records = sorted((tmp_path / "assay-attestations").glob("*.json"))
    with pytest.raises(AssayError) as caught:
        sealed(tmp_path, key, "two")
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"{path}:2: ")
    assert "is damaged here (not canonical JSON)" in message
    assert sorted((tmp_path / "assay-attestations").glob("*.json")) == records
    assert verify(tmp_path, first, key).ok is True  # while the earlier record still verifies


def test_the_cli_shows_the_note_in_text_and_json(
    cli: CliRunner, tmp_path: Path, key: bytes
) -> None:
    first = sealed(tmp_path, key, "one")
    path = chain(tmp_path, "audit")
    path.write_bytes(_forged_entry(path.read_bytes()))
    note = (
        f"audit: the audit log is damaged at {path}:2 (entry 1 does not chain to the one before),"
        " after this attestation's entry (line 1); sealing refuses until it is repaired"
    )
    code, out, err = cli("attest", "verify", first)
    assert (code, err) == (0, "")
    assert out == f"valid: {first} CLEAN\nisolation: not recorded\nnote: {note}\n"
    code, out, err = cli("attest", "verify", first, "--json")
    assert (code, err) == (0, "")
    assert json.loads(out)["notes"] == [note]
