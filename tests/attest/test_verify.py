"""Offline verification: any changed byte, a trimmed journal, a forged verdict or another key
fails, and the first failing check is named. In-process (``assay.attest.verify``) for speed."""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from assay.attest import Journal, canonical_json, key_id, seal, verify
from assay.attest._seal import sign
from assay.goldens import iter_goldens
from tests.helpers.goldens import write_golden

KEY = bytes(range(32))
OTHER_KEY = bytes(range(100, 132))

ANSWER = "the cache now evicts the oldest tenant entry first"


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("ASSAY_KEY_FILE", str(tmp_path / "keys" / "attest.key"))


@dataclass
class Sealed:
    root: Path
    id: str
    verdict: str
    journal: Path
    record: Path
    goldens: Path
    worktree: Path

    @property
    def attest_dir(self) -> Path:
        return self.root / "assay-attestations"


def make(tmp_path: Path, events: list[dict[str, Any]], name: str = "run") -> Sealed:
    goldens, worktree = tmp_path / "goldens", tmp_path / "wt"
    if not goldens.exists():
        write_golden(
            goldens, "cache.md", f'id: cache\ninput: "Fix eviction."\nexpected: "{ANSWER}"'
        )
    worktree.mkdir(exist_ok=True)
    journal_path = tmp_path / f"{name}.journal.jsonl"
    journal = Journal(journal_path)
    for event in events:
        journal.append(**event)
    tasks = list(iter_goldens(goldens))
    allow = ["pypi.org:443"]
    sealed = seal(tmp_path, tasks, goldens, "cache", journal_path, worktree, allow, name, KEY)
    record = tmp_path / "assay-attestations" / (sealed.id.removeprefix("sha256:") + ".json")
    return Sealed(tmp_path, sealed.id, sealed.verdict, journal_path, record, goldens, worktree)


SMALL_DIRTY = [
    {"kind": "read", "path": "a.py", "content": "x = 1"},
    {"kind": "read", "path": "n.md", "content": f"see: {ANSWER}"},
    {"kind": "exec", "command": "pytest -q"},
]
SMALL_CLEAN = [
    {"kind": "read", "path": "a.py", "content": "x = 1"},
    {"kind": "exec", "command": "pytest -q"},
    {"kind": "net", "endpoint": "pypi.org:443"},
]


@pytest.fixture
def dirty(tmp_path: Path) -> Sealed:
    sealed = make(tmp_path, SMALL_DIRTY)
    assert sealed.verdict == "DIRTY"
    return sealed


@pytest.fixture
def clean(tmp_path: Path) -> Sealed:
    sealed = make(tmp_path, SMALL_CLEAN)
    assert sealed.verdict == "CLEAN"
    return sealed


# ------------------------------------------------------------------------------ valid


def test_a_fresh_seal_verifies_with_and_without_its_journal(dirty: Sealed) -> None:
    for journal in (None, dirty.journal):
        result = verify(dirty.root, dirty.id, KEY, journal)
        assert result.ok is True
        assert result.reason is None
        assert result.id == dirty.id
        assert result.verdict == "DIRTY"
        assert result.task == "cache"
        assert result.isolation is None
        assert result.notes == ()
        assert result.to_dict() == {
            "ok": True,
            "reason": None,
            "id": dirty.id,
            "verdict": "DIRTY",
            "isolation": None,
            "evidence": [{"event": 1, "class": "ground_truth_shingle", "where": "read"}],
            "notes": [],
        }


def test_the_id_is_the_sha256_of_the_record_bytes(dirty: Sealed) -> None:
    data = dirty.record.read_bytes()
    assert dirty.id == "sha256:" + hashlib.sha256(data).hexdigest()
    record = json.loads(data)
    assert canonical_json(record) == data
    assert record["key_id"] == key_id(KEY)
    assert record["journal"] == {"head": Journal(dirty.journal).head, "events": 3}
    assert record["matches"] == [{"event": 1, "class": "ground_truth_shingle"}]
    assert record["task"]["id"] == "cache"
    assert record["run_id"] == "run"
    assert record["schema_version"] == 1


def test_lineage_and_audit_hold_one_entry_per_seal(tmp_path: Path) -> None:
    first = make(tmp_path, SMALL_DIRTY, "one")
    second = make(tmp_path, SMALL_CLEAN, "two")
    lineage = [json.loads(x) for x in (first.attest_dir / "lineage.jsonl").read_text().splitlines()]
    audit = [json.loads(x) for x in (first.attest_dir / "audit.jsonl").read_text().splitlines()]
    assert [(e["index"], e["id"], e["task"], e["run_id"]) for e in lineage] == [
        (0, first.id, "cache", "one"),
        (1, second.id, "cache", "two"),
    ]
    assert lineage[0]["prev"] == "0" * 64
    assert lineage[1]["prev"] == lineage[0]["hash"]
    assert [(e["index"], e["id"], e["verdict"]) for e in audit] == [
        (0, first.id, "DIRTY"),
        (1, second.id, "CLEAN"),
    ]
    assert audit[1]["prev"] == audit[0]["mac"]
    assert verify(tmp_path, first.id, KEY, first.journal).ok
    assert verify(tmp_path, second.id, KEY, second.journal).ok


# ------------------------------------------------------------------ every byte matters


def flip_each_byte(path: Path, check: Any) -> int:
    """Flip every byte of ``path`` in turn (``b ^ 0x01``), call ``check(position)``, restore."""
    original = path.read_bytes()
    try:
        for position in range(len(original)):
            changed = bytearray(original)
            changed[position] ^= 0x01
            path.write_bytes(bytes(changed))
            check(position)
    finally:
        path.write_bytes(original)
    return len(original)


@pytest.mark.slow
@pytest.mark.parametrize("which", ["dirty", "clean"])
def test_flipping_any_byte_of_the_journal_fails_verify(
    request: pytest.FixtureRequest, which: str
) -> None:
    sealed: Sealed = request.getfixturevalue(which)
    failures: dict[int, str | None] = {}

    def check(position: int) -> None:
        result = verify(sealed.root, sealed.id, KEY, sealed.journal)
        if result.ok or not (result.reason or "").startswith("journal:"):
            failures[position] = result.reason

    size = flip_each_byte(sealed.journal, check)
    assert size > 300  # three real events
    assert failures == {}
    assert verify(sealed.root, sealed.id, KEY, sealed.journal).ok is True


@pytest.mark.slow
@pytest.mark.parametrize("which", ["dirty", "clean"])
def test_flipping_any_byte_of_the_record_fails_verify(
    request: pytest.FixtureRequest, which: str
) -> None:
    sealed: Sealed = request.getfixturevalue(which)
    failures: dict[int, str | None] = {}

    def check(position: int) -> None:
        for journal in (None, sealed.journal):
            result = verify(sealed.root, sealed.id, KEY, journal)
            if result.ok or result.reason != "record: its bytes do not hash to its id (modified)":
                failures[position] = result.reason

    size = flip_each_byte(sealed.record, check)
    assert size > 500
    assert failures == {}
    assert verify(sealed.root, sealed.id, KEY, sealed.journal).ok is True


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "prefix"), [("lineage.jsonl", "lineage:"), ("audit.jsonl", "audit:")]
)
def test_flipping_any_byte_of_lineage_or_audit_fails_verify(
    dirty: Sealed, name: str, prefix: str
) -> None:
    failures: dict[int, str | None] = {}

    def check(position: int) -> None:
        result = verify(dirty.root, dirty.id, KEY)
        if result.ok or not (result.reason or "").startswith(prefix):
            failures[position] = result.reason

    size = flip_each_byte(dirty.attest_dir / name, check)
    assert size > 100
    assert failures == {}
    assert verify(dirty.root, dirty.id, KEY).ok is True


# ------------------------------------------------------------------------ the journal


def test_trimming_the_last_journal_event_fails(dirty: Sealed) -> None:
    lines = dirty.journal.read_bytes().splitlines(keepends=True)
    assert len(lines) == 3
    dirty.journal.write_bytes(b"".join(lines[:-1]))
    result = verify(dirty.root, dirty.id, KEY, dirty.journal)
    assert result.ok is False
    assert result.reason == "journal: it has fewer events than the attestation (trimmed?)"
    assert result.verdict == "DIRTY"


def test_an_emptied_journal_fails(dirty: Sealed) -> None:
    dirty.journal.write_bytes(b"")
    result = verify(dirty.root, dirty.id, KEY, dirty.journal)
    assert result.ok is False
    assert result.reason is not None and result.reason.startswith("journal:")


def test_a_journal_extended_after_sealing_fails(clean: Sealed) -> None:
    Journal(clean.journal).append(kind="read", path="later.txt", content="after the seal")
    result = verify(clean.root, clean.id, KEY, clean.journal)
    assert result.ok is False
    assert result.reason == "journal: it holds more events than the attestation"


def test_a_different_valid_journal_fails(clean: Sealed, tmp_path: Path) -> None:
    other = tmp_path / "other.jsonl"
    journal = Journal(other)
    journal.append(kind="read", path="a.py", content="x = 2")
    journal.append(kind="exec", command="pytest -q")
    journal.append(kind="net", endpoint="pypi.org:443")
    result = verify(clean.root, clean.id, KEY, other)
    assert result.ok is False
    assert result.reason == "journal: event 0 does not match the embedded activity"


def test_a_missing_journal_fails(clean: Sealed, tmp_path: Path) -> None:
    result = verify(clean.root, clean.id, KEY, tmp_path / "nope.jsonl")
    assert result.ok is False
    assert result.reason is not None and result.reason.startswith("journal: cannot read it")


# ---------------------------------------------------------------------- forged verdict


def load(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_bytes())
    return data


def save_as_new(root: Path, record: dict[str, Any]) -> str:
    data = canonical_json(record)
    hexpart = hashlib.sha256(data).hexdigest()
    (root / "assay-attestations" / f"{hexpart}.json").write_bytes(data)
    return f"sha256:{hexpart}"


def forge_clean(record: dict[str, Any], *, scrub_activity: bool) -> dict[str, Any]:
    forged = dict(record)
    forged["verdict"] = "CLEAN"
    forged["matches"] = []
    forged["evidence"] = []
    if scrub_activity:
        forged["activity"] = [{**a, "digests": [], "flags": []} for a in record["activity"]]
    return forged


@pytest.mark.parametrize("scrub_activity", [False, True])
def test_a_forged_clean_verdict_fails_the_signature(dirty: Sealed, scrub_activity: bool) -> None:
    forged_id = save_as_new(
        dirty.root, forge_clean(load(dirty.record), scrub_activity=scrub_activity)
    )
    assert forged_id != dirty.id
    for journal in (None, dirty.journal):
        result = verify(dirty.root, forged_id, KEY, journal)
        assert result.ok is False
        assert result.reason == "signature: the record's HMAC does not check"
        assert result.verdict == "CLEAN"


def test_a_forged_clean_verdict_fails_the_rescan_when_activity_still_matches(
    dirty: Sealed,
) -> None:
    # Even re-signed with the key, a CLEAN verdict over activity holding digests is caught.
    forged = forge_clean(load(dirty.record), scrub_activity=False)
    forged["signature"] = sign(KEY, forged)
    result = verify(dirty.root, save_as_new(dirty.root, forged), KEY)
    assert result.ok is False
    assert result.reason == "rescan: the matches differ from the activity"


def test_a_re_signed_forgery_fails_lineage_then_audit(dirty: Sealed) -> None:
    forged = forge_clean(load(dirty.record), scrub_activity=True)
    forged["signature"] = sign(KEY, forged)
    forged_id = save_as_new(dirty.root, forged)

    result = verify(dirty.root, forged_id, KEY)
    assert result.ok is False
    assert result.reason == "lineage: the attestation is not in the lineage"

    # The journal contradicts the scrubbed activity.
    result = verify(dirty.root, forged_id, KEY, dirty.journal)
    assert result.ok is False
    assert result.reason == "journal: event 1 does not match the embedded activity"

    # Anyone can extend the plain hash chain of the lineage ...
    lineage = dirty.attest_dir / "lineage.jsonl"
    last = json.loads(lineage.read_text().splitlines()[-1])
    entry: dict[str, Any] = {
        "index": last["index"] + 1,
        "id": forged_id,
        "task": "cache",
        "run_id": "run",
        "prev": last["hash"],
    }
    entry["hash"] = hashlib.sha256(canonical_json(entry)).hexdigest()
    with open(lineage, "ab") as handle:
        handle.write(canonical_json(entry) + b"\n")
    result = verify(dirty.root, forged_id, KEY)
    assert result.ok is False
    assert result.reason == "audit: the attestation is not in the audit log"

    # ... but not the audit log, whose links are HMACs under the key.
    audit = dirty.attest_dir / "audit.jsonl"
    last = json.loads(audit.read_text().splitlines()[-1])
    forged_entry: dict[str, Any] = {
        "index": last["index"] + 1,
        "id": forged_id,
        "verdict": "CLEAN",
        "prev": last["mac"],
    }
    forged_entry["mac"] = hashlib.sha256(canonical_json(forged_entry)).hexdigest()
    with open(audit, "ab") as handle:
        handle.write(canonical_json(forged_entry) + b"\n")
    result = verify(dirty.root, forged_id, KEY)
    assert result.ok is False
    assert result.reason == (
        f"audit: the audit log is damaged at {audit}:2 (entry 1 does not chain to the one"
        " before): it is this attestation's entry"
    )
    # The original DIRTY attestation still verifies (the forged line came after its entry),
    # and the result says the audit log is damaged, and where.
    original = verify(dirty.root, dirty.id, KEY)
    assert (original.ok, original.verdict) == (True, "DIRTY")
    assert original.notes == (
        f"audit: the audit log is damaged at {audit}:2 (entry 1 does not chain to the one"
        " before), after this attestation's entry (line 1); sealing refuses until it is repaired",
    )


def test_rewriting_the_audit_verdict_fails(dirty: Sealed) -> None:
    audit = dirty.attest_dir / "audit.jsonl"
    audit.write_text(audit.read_text().replace('"verdict":"DIRTY"', '"verdict":"CLEAN"'))
    result = verify(dirty.root, dirty.id, KEY)
    assert result.ok is False
    assert result.reason == (
        f"audit: the audit log is damaged at {audit}:1 (entry 0 does not chain to the one"
        " before), and the attestation is not in the intact lines before it"
    )


# -------------------------------------------------------------------------- wrong key


def test_another_key_fails_naming_a_different_key(dirty: Sealed) -> None:
    for journal in (None, dirty.journal):
        result = verify(dirty.root, dirty.id, OTHER_KEY, journal)
        assert result.ok is False
        assert result.reason == "key: signed with a different key"
        assert "different key" in result.reason
        assert result.verdict == "DIRTY"
        assert result.task == "cache"


def test_a_record_claiming_the_other_key_id_fails_the_signature(dirty: Sealed) -> None:
    record = load(dirty.record)
    record["key_id"] = key_id(OTHER_KEY)
    forged_id = save_as_new(dirty.root, record)
    result = verify(dirty.root, forged_id, OTHER_KEY)
    assert result.ok is False
    assert result.reason == "signature: the record's HMAC does not check"


# ----------------------------------------------------------------- unknown and malformed


@pytest.mark.parametrize(
    ("attestation_id", "reason"),
    [
        ("sha256:" + "0" * 64, "record: no such attestation"),
        ("sha256:" + "ab" * 32, "record: no such attestation"),
        ("sha256:abc", "record: malformed attestation id"),
        ("sha256:" + "G" * 64, "record: malformed attestation id"),
        ("sha256:" + "A" * 64, "record: malformed attestation id"),
        ("sha256:../../../../etc/passwd", "record: malformed attestation id"),
    ],
)
def test_unknown_or_malformed_ids_fail(dirty: Sealed, attestation_id: str, reason: str) -> None:
    result = verify(dirty.root, attestation_id, KEY)
    assert result.ok is False
    assert result.reason == reason
    assert result.verdict is None


def test_a_record_under_the_wrong_name_fails(dirty: Sealed) -> None:
    other = dirty.attest_dir / ("0" * 64 + ".json")
    other.write_bytes(dirty.record.read_bytes())
    result = verify(dirty.root, "sha256:" + "0" * 64, KEY)
    assert result.ok is False
    assert result.reason == "record: its bytes do not hash to its id (modified)"


def test_a_symlinked_record_is_not_followed(dirty: Sealed, tmp_path: Path) -> None:
    elsewhere = tmp_path / "copy.json"
    elsewhere.write_bytes(dirty.record.read_bytes())
    dirty.record.unlink()
    os.symlink(elsewhere, dirty.record)
    result = verify(dirty.root, dirty.id, KEY)
    assert result.ok is False
    assert result.reason == "record: no such attestation"


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("lineage.jsonl", "lineage: the attestation is not in the lineage"),
        ("audit.jsonl", "audit: the attestation is not in the audit log"),
    ],
)
def test_a_deleted_chain_fails(dirty: Sealed, name: str, reason: str) -> None:
    (dirty.attest_dir / name).unlink()
    result = verify(dirty.root, dirty.id, KEY)
    assert result.ok is False
    assert result.reason == reason


def test_a_dropped_lineage_entry_breaks_the_chain(tmp_path: Path) -> None:
    first = make(tmp_path, SMALL_DIRTY, "one")
    second = make(tmp_path, SMALL_CLEAN, "two")
    lineage = first.attest_dir / "lineage.jsonl"
    lines = lineage.read_bytes().splitlines(keepends=True)
    lineage.write_bytes(lines[1])
    result = verify(tmp_path, second.id, KEY)
    assert result.ok is False
    assert result.reason == (
        f"lineage: the lineage file is damaged at {lineage}:1 (entry 0 does not chain to the"
        " one before): it is this attestation's entry"
    )


def test_verify_writes_nothing(dirty: Sealed, tmp_path: Path) -> None:
    def snapshot() -> dict[str, bytes]:
        return {
            str(p.relative_to(tmp_path)): p.read_bytes()
            for p in sorted(tmp_path.rglob("*"))
            if p.is_file()
        }

    before = snapshot()
    verify(dirty.root, dirty.id, KEY, dirty.journal)
    verify(dirty.root, dirty.id, OTHER_KEY, dirty.journal)
    verify(dirty.root, "sha256:" + "0" * 64, KEY)
    assert snapshot() == before
