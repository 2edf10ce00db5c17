"""A damaged lineage or audit log, and a seal that fails half way, through the command line.

A seal onto a damaged chain is one line naming the file and line, and how to repair it (keep the
intact lines before it); nothing is written. Repaired that way, sealing and verifying work again.
Until then, the records whose entries come before the damage still verify (with a note naming
the line); the one whose entry is the damaged line fails, naming it.
A write that fails (disk full) leaves no record outside the chains: the record, its lineage line
and its audit line land together or not at all.
"""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from assay.attest import Journal
from tests.helpers.cli import CliRunner
from tests.helpers.goldens import ORIGIN, write_golden

ANSWER = "retry each shard three times before paging the on-call engineer"


@pytest.fixture(autouse=True)
def key(cli: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("ASSAY_KEY_FILE", str(tmp_path / "keys" / "attest.key"))
    assert cli("attest", "keygen")[0] == 0
    write_golden(
        tmp_path / "goldens",
        "sched.md",
        f'id: sched\ninput: "Fix it."\nexpected: "{ANSWER}"',
        ORIGIN,
    )
    (tmp_path / "wt").mkdir()
    journal = Journal(tmp_path / "run.jsonl")
    journal.append(kind="exec", command="pytest -q")


def seal(cli: CliRunner, run_id: str) -> tuple[int, str, str]:
    return cli(
        "attest",
        "seal",
        "goldens",
        "--task",
        "sched",
        "--journal",
        "run.jsonl",
        "--worktree",
        "wt",
        "--run-id",
        run_id,
        "--json",
    )


def sealed_id(cli: CliRunner, run_id: str) -> str:
    code, out, err = seal(cli, run_id)
    assert (code, err) == (0, ""), err
    return str(json.loads(out)["id"])


def attestations(tmp_path: Path) -> Path:
    return tmp_path / "assay-attestations"


def state(tmp_path: Path) -> dict[str, bytes]:
    """The records and the chains (the lock files are not state)."""
    folder = attestations(tmp_path)
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.suffix != ".lock" and p.is_file()}


def one_error_line(err: str, source: str, *needles: str) -> str:
    assert "Traceback" not in err
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"assay: error: {source}: "), err
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


def _garbage_line(data: bytes) -> bytes:
    return data + b"{not json\n"


def _torn_last_line(data: bytes) -> bytes:
    return data[: len(data) - 20]


def _unlinked_entry(data: bytes) -> bytes:
    last = json.loads(data.splitlines()[-1])
    last["index"] += 1  # well-formed, but its hash is not its own and prev is wrong
    return data + json.dumps(last, separators=(",", ":"), sort_keys=True).encode() + b"\n"


DAMAGE: dict[str, tuple[Callable[[bytes], bytes], int, str]] = {
    # name: (damage, damaged line, what the line says)
    "garbage-line": (_garbage_line, 3, "not canonical JSON"),
    "torn-last-line": (_torn_last_line, 2, "not canonical JSON"),
    "unlinked-entry": (_unlinked_entry, 3, "entry 2 does not chain to the one before"),
}


@pytest.mark.parametrize("chain", ["lineage", "audit"])
@pytest.mark.parametrize("how", sorted(DAMAGE))
def test_a_damaged_chain_refuses_the_seal_naming_the_line_and_the_repair(
    cli: CliRunner, tmp_path: Path, chain: str, how: str
) -> None:
    first = sealed_id(cli, "one")
    second = sealed_id(cli, "two")
    path = attestations(tmp_path) / f"{chain}.jsonl"
    damage, line, problem = DAMAGE[how]
    path.write_bytes(damage(path.read_bytes()))
    before = state(tmp_path)

    code, out, err = seal(cli, "three")
    assert (code, out) == (1, "")
    what = "lineage" if chain == "lineage" else "audit log"
    one_error_line(
        err,
        f"{path}:{line}",
        f"the {what} is damaged here ({problem})",
        f"lines 1-{line - 1} are intact: keep only them (head -n {line - 1})",
    )
    assert state(tmp_path) == before  # no record, no line: nothing was written

    # A record whose entry is before the damage still verifies, with a note naming the line;
    # one whose entry is the damaged line fails, naming it.
    damaged = f"is damaged at {path}:{line} ({problem})"
    code, out, err = cli("attest", "verify", first)
    assert (code, err) == (0, ""), out
    assert f"note: {chain}: " in out and damaged in out, out
    code, out, _ = cli("attest", "verify", second)
    if line == 2:
        assert code == 1
        assert out.startswith(f"invalid: {second}: {chain}: "), out
        assert damaged in out
    else:
        assert code == 0, out
        assert damaged in out

    # The repair the message gives works: seal and verify again.
    kept = path.read_bytes().splitlines(keepends=True)[: line - 1]
    path.write_bytes(b"".join(kept))
    if line - 1 < 2:  # the torn second entry is gone: so is the second seal's place in it
        sealed_id(cli, "two-again")
    third = sealed_id(cli, "three")
    for attestation in (first, third):
        code, out, err = cli("attest", "verify", attestation)
        assert (code, err) == (0, ""), out


def test_a_damaged_first_line_says_to_move_the_file_away(cli: CliRunner, tmp_path: Path) -> None:
    sealed_id(cli, "one")
    path = attestations(tmp_path) / "lineage.jsonl"
    path.write_bytes(b"\x00\xff garbage\n")
    code, _, err = seal(cli, "two")
    assert code == 1
    one_error_line(err, f"{path}:1", "no line before it is intact: move the file away")


def test_a_lineage_that_is_a_folder_is_one_line(cli: CliRunner, tmp_path: Path) -> None:
    sealed_id(cli, "one")
    path = attestations(tmp_path) / "lineage.jsonl"
    path.unlink()
    path.mkdir()
    records = sorted(p.name for p in attestations(tmp_path).glob("*.json"))
    code, _, err = seal(cli, "two")
    assert code == 1
    one_error_line(err, str(path), "is a folder, not a file")
    assert sorted(p.name for p in attestations(tmp_path).glob("*.json")) == records


def _full_disk_for(name: str) -> Callable[..., Any]:
    real_write = os.write

    def write(fd: int, data: Any) -> int:
        if name in os.path.basename(os.readlink(f"/proc/self/fd/{fd}")):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(fd, data)

    return write


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="Linux /proc only")
@pytest.mark.parametrize("failing", ["lineage.jsonl", "audit.jsonl", ".json."])
def test_a_full_disk_during_a_seal_leaves_no_record_outside_the_chains(
    cli: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failing: str
) -> None:
    first = sealed_id(cli, "one")
    before = state(tmp_path)
    with monkeypatch.context() as patch:
        patch.setattr(os, "write", _full_disk_for(failing))  # ".json." is the record's temp file
        code, out, err = seal(cli, "two")
    assert (code, out) == (1, "")
    assert "Traceback" not in err
    assert len(err.splitlines()) == 1, err
    assert err.startswith(f"assay: error: {attestations(tmp_path)}/")
    assert "No space left on device" in err
    assert state(tmp_path) == before  # the record is gone again, the lineage line undone
    assert not [p for p in attestations(tmp_path).iterdir() if p.suffix == ".tmp"]
    # And the chains take the next seal as if nothing had happened.
    second = sealed_id(cli, "two")
    for attestation in (first, second):
        code, out, _ = cli("attest", "verify", attestation)
        assert code == 0, out
