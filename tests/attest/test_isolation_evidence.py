"""The record states how the agent was fenced off (``isolation``) and where each match was seen
(``evidence``), both signed; ``verify`` checks them and returns them, the CLI prints them.

Evidence names a path or an endpoint, never text the agent saw: a content match is named by the
event's kind, and so is a path or endpoint that itself holds ground truth.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest

from assay.agent._attester import Attester
from assay.attest import (
    Journal,
    build_record,
    canonical_json,
    keygen,
    load_key,
    seal,
    verify,
    words_of,
)
from assay.attest._ledger import store
from assay.attest._seal import sign
from assay.errors import AssayError
from assay.goldens import Golden, iter_goldens
from tests.helpers.cli import CliRunner
from tests.helpers.goldens import write_golden

ANSWER = "the scheduler now drains the oldest queue before the newest one"
BUBBLEWRAP = {"kind": "bubblewrap", "not_mounted": ["/srv/goldens", "/home/u/.config/assay"]}


@pytest.fixture
def key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> bytes:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    path = tmp_path / "keys" / "attest.key"
    monkeypatch.setenv("ASSAY_KEY_FILE", str(path))
    keygen(path)
    return load_key(path)


@pytest.fixture
def task(tmp_path: Path) -> Golden:
    goldens = tmp_path / "goldens"
    write_golden(goldens, "drain.md", f'id: drain\ninput: "Fix it."\nexpected: "{ANSWER}"')
    (tmp_path / "wt").mkdir()
    [golden] = iter_goldens(goldens)
    return golden


def journal(tmp_path: Path, events: list[dict[str, Any]], name: str = "run") -> Path:
    path = tmp_path / f"{name}.journal.jsonl"
    writer = Journal(path)
    for event in events:
        writer.append(**event)
    return path


def sealed(
    tmp_path: Path, key: bytes, task: Golden, events: list[dict[str, Any]], **extra: Any
) -> str:
    path = journal(tmp_path, events, extra.pop("name", "run"))
    goldens, worktree = tmp_path / "goldens", tmp_path / "wt"
    allow = ["pypi.org:443"]
    return seal(tmp_path, [task], goldens, "drain", path, worktree, allow, "r", key, **extra).id


def record_of(tmp_path: Path, attestation_id: str) -> dict[str, Any]:
    data = (tmp_path / "assay-attestations" / f"{attestation_id[7:]}.json").read_bytes()
    record: dict[str, Any] = json.loads(data)
    return record


def resigned(tmp_path: Path, key: bytes, record: dict[str, Any]) -> str:
    """``record`` signed again with the key and stored with its chain entries (a key holder's
    record, consistent or not)."""
    record["signature"] = sign(key, record)
    data = canonical_json(record)
    return store(tmp_path, data, record["task"]["id"], "r", key, record["verdict"])


# ----------------------------------------------------------------------------- isolation


def test_the_record_states_its_isolation_sorted_and_verify_returns_it(
    tmp_path: Path, key: bytes, task: Golden
) -> None:
    hidden = ["/srv/goldens", "/home/u/.config/assay", "/srv/goldens"]
    events = [{"kind": "exec", "command": "pytest -q"}]
    attestation = sealed(
        tmp_path, key, task, events, isolation={"kind": "bubblewrap", "not_mounted": hidden}
    )
    stated = {"kind": "bubblewrap", "not_mounted": ["/home/u/.config/assay", "/srv/goldens"]}
    assert record_of(tmp_path, attestation)["isolation"] == stated
    result = verify(tmp_path, attestation, key)
    assert (result.ok, result.isolation) == (True, stated)
    assert result.to_dict()["isolation"] == stated


def test_without_isolation_the_record_has_no_such_field(
    tmp_path: Path, key: bytes, task: Golden
) -> None:
    attestation = sealed(tmp_path, key, task, [{"kind": "exec", "command": "pytest -q"}])
    assert "isolation" not in record_of(tmp_path, attestation)
    result = verify(tmp_path, attestation, key)
    assert (result.ok, result.isolation) == (True, None)


@pytest.mark.parametrize(
    ("isolation", "field", "message"),
    [
        ({"kind": "chroot"}, "isolation.kind", "'chroot' is not one of bubblewrap, docker, none"),
        ({"not_mounted": []}, "isolation.kind", "None is not one of bubblewrap, docker, none"),
        ({"kind": "docker", "not_mounted": "/a"}, "isolation.not_mounted", "not a list of path"),
        ({"kind": "docker", "not_mounted": [1]}, "isolation.not_mounted", "not a list of path"),
        ({"kind": "none", "image": "x"}, "isolation", "unknown key 'image' (kind, not_mounted)"),
    ],
)
def test_a_malformed_isolation_is_one_line_naming_the_field_and_seals_nothing(
    tmp_path: Path, key: bytes, task: Golden, isolation: dict[str, Any], field: str, message: str
) -> None:
    with pytest.raises(AssayError) as caught:
        sealed(tmp_path, key, task, [{"kind": "exec", "command": "x"}], isolation=isolation)
    assert caught.value.field == field
    assert message in caught.value.message
    assert "\n" not in str(caught.value)
    assert not (tmp_path / "assay-attestations").exists()


def test_the_isolation_is_signed(tmp_path: Path, key: bytes, task: Golden) -> None:
    attestation = sealed(
        tmp_path, key, task, [{"kind": "exec", "command": "x"}], isolation=BUBBLEWRAP
    )
    record = record_of(tmp_path, attestation)
    record["isolation"] = {"kind": "bubblewrap", "not_mounted": []}  # claim nothing was hidden
    data = canonical_json(record)
    digest = hashlib.sha256(data).hexdigest()
    (tmp_path / "assay-attestations" / f"{digest}.json").write_bytes(data)
    result = verify(tmp_path, f"sha256:{digest}", key)
    assert (result.ok, result.reason) == (False, "signature: the record's HMAC does not check")


@pytest.mark.parametrize(
    "isolation",
    [
        {"kind": "chroot", "not_mounted": []},
        {"kind": "docker", "not_mounted": ["/b", "/a"]},  # not as seal writes it: unsorted
        {"kind": "docker"},
        "bubblewrap",
    ],
)
def test_a_signed_but_malformed_isolation_fails_verify(
    tmp_path: Path, key: bytes, task: Golden, isolation: Any
) -> None:
    attestation = sealed(tmp_path, key, task, [{"kind": "exec", "command": "x"}])
    record = record_of(tmp_path, attestation)
    record["isolation"] = isolation
    result = verify(tmp_path, resigned(tmp_path, key, record), key)
    assert (result.ok, result.reason) == (False, "record: the isolation is malformed")


def test_the_attester_takes_isolation_when_it_seals_and_when_it_builds(
    tmp_path: Path, key: bytes, task: Golden
) -> None:
    attester = Attester(tmp_path, "run_x", (), lambda _: tmp_path / "goldens", key)
    path = journal(tmp_path, [{"kind": "exec", "command": "pytest -q"}])
    worktree = tmp_path / "wt"
    docker = {"kind": "docker", "not_mounted": ["/x"]}
    stored = attester.store(attester.build(task, path, worktree, [], [], isolation=docker))
    assert record_of(tmp_path, stored)["isolation"] == docker
    built = attester.build(task, path, worktree, [], [], isolation={"kind": "none"})
    assert json.loads(built.data)["isolation"] == {"kind": "none", "not_mounted": []}
    assert verify(tmp_path, attester.store(built), key).isolation == {
        "kind": "none",
        "not_mounted": [],
    }
    # Without the keyword: today's record, no isolation.
    plain = attester.build(task, path, worktree, [], [])
    assert "isolation" not in json.loads(plain.data)


def test_the_cli_prints_the_isolation(
    cli: CliRunner, tmp_path: Path, key: bytes, task: Golden
) -> None:
    events = [{"kind": "exec", "command": "pytest -q"}]
    fenced = sealed(tmp_path, key, task, events, isolation=BUBBLEWRAP)
    code, out, err = cli("attest", "verify", fenced)
    assert (code, err) == (0, "")
    assert out == (
        f"valid: {fenced} CLEAN\n"
        "isolation: bubblewrap (not mounted: /home/u/.config/assay, /srv/goldens)\n"
    )
    code, out, _ = cli("attest", "verify", fenced, "--json")
    assert json.loads(out)["isolation"] == {
        "kind": "bubblewrap",
        "not_mounted": ["/home/u/.config/assay", "/srv/goldens"],
    }
    bare = sealed(tmp_path, key, task, events, name="bare", isolation={"kind": "none"})
    assert cli("attest", "verify", bare)[1].splitlines()[1] == "isolation: none"


# ------------------------------------------------------------------------------ evidence


def test_evidence_names_each_match_where_it_was_seen(
    tmp_path: Path, key: bytes, task: Golden
) -> None:
    goldens = os.path.realpath(tmp_path / "goldens")
    worktree = os.path.realpath(tmp_path / "wt")
    events = [
        {"kind": "read", "path": "src/a.py", "content": "x = 1"},
        {"kind": "read", "path": "../goldens/drain.md"},
        {"kind": "read", "path": "/root/.config/assay/attest.key"},
        {"kind": "net", "endpoint": "evil.example:443"},
        {"kind": "read", "path": "notes.md", "content": f"so: {ANSWER}"},
        {"kind": "message", "content": f"done: {ANSWER}"},
        {"kind": "net", "endpoint": "pypi.org:443"},
    ]
    attestation = sealed(tmp_path, key, task, events)
    record = record_of(tmp_path, attestation)
    assert record["evidence"] == [
        {"event": 1, "class": "ground_truth_path", "where": f"{goldens}/drain.md"},
        {"event": 2, "class": "out_of_scope_path", "where": "/root/.config/assay/attest.key"},
        {"event": 3, "class": "out_of_scope_endpoint", "where": "evil.example:443"},
        {"event": 4, "class": "ground_truth_shingle", "where": "read"},
        {"event": 5, "class": "ground_truth_shingle", "where": "message"},
    ]
    assert [(e["event"], e["class"]) for e in record["evidence"]] == [
        (m["event"], m["class"]) for m in record["matches"]
    ]
    assert worktree not in json.dumps(record["evidence"])  # a relative path is made absolute
    for path in (None, tmp_path / "run.journal.jsonl"):
        result = verify(tmp_path, attestation, key, path)
        assert (result.ok, result.reason) == (True, None)
        assert list(result.evidence) == record["evidence"]


def test_evidence_never_holds_text_even_a_path_named_after_the_answer(
    tmp_path: Path, key: bytes, task: Golden
) -> None:
    named = "-".join(words_of(ANSWER))
    events = [
        {"kind": "write", "path": f"/tmp/{named}.txt"},  # out of scope, and ground truth
        {"kind": "read", "path": f"{named}.md", "content": "nothing"},  # ground truth in name
    ]
    attestation = sealed(tmp_path, key, task, events)
    record = record_of(tmp_path, attestation)
    assert record["evidence"] == [
        {"event": 0, "class": "ground_truth_shingle", "where": "write"},
        {"event": 0, "class": "out_of_scope_path", "where": "write"},
        {"event": 1, "class": "ground_truth_shingle", "where": "read"},
    ]
    text = json.dumps(record)
    assert named not in text and "scheduler" not in text
    assert verify(tmp_path, attestation, key, tmp_path / "run.journal.jsonl").ok is True


def test_a_clean_record_has_empty_evidence(tmp_path: Path, key: bytes, task: Golden) -> None:
    attestation = sealed(tmp_path, key, task, [{"kind": "net", "endpoint": "pypi.org:443"}])
    assert record_of(tmp_path, attestation)["evidence"] == []
    assert verify(tmp_path, attestation, key).evidence == ()


DIRTY = [
    {"kind": "read", "path": "../goldens/drain.md"},
    {"kind": "net", "endpoint": "evil.example:443"},
]


def _drop_one(evidence: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return evidence[:1]


def _other_class(evidence: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{**evidence[0], "class": "out_of_scope_path"}, evidence[1]]


def _reordered(evidence: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return evidence[::-1]


def _where_not_text(evidence: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{**evidence[0], "where": 7}, evidence[1]]


def _extra_key(evidence: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{**evidence[0], "content": "x"}, evidence[1]]


@pytest.mark.parametrize(
    "change", [_drop_one, _other_class, _reordered, _where_not_text, _extra_key]
)
def test_evidence_inconsistent_with_the_matches_fails_verify(
    tmp_path: Path, key: bytes, task: Golden, change: Any
) -> None:
    record = record_of(tmp_path, sealed(tmp_path, key, task, DIRTY))
    record["evidence"] = change(record["evidence"])
    result = verify(tmp_path, resigned(tmp_path, key, record), key)
    assert (result.ok, result.reason) == (False, "rescan: the evidence differs from the matches")


def test_a_where_the_journal_contradicts_fails_verify_with_the_journal(
    tmp_path: Path, key: bytes, task: Golden
) -> None:
    record = record_of(tmp_path, sealed(tmp_path, key, task, DIRTY))
    record["evidence"][1]["where"] = "pypi.org:443"
    forged = resigned(tmp_path, key, record)
    assert verify(tmp_path, forged, key).ok is True  # the record alone cannot tell
    result = verify(tmp_path, forged, key, tmp_path / "run.journal.jsonl")
    assert (result.ok, result.reason) == (False, "journal: event 1 does not match the evidence")


def test_a_record_sealed_before_evidence_still_verifies(
    tmp_path: Path, key: bytes, task: Golden
) -> None:
    path = journal(tmp_path, DIRTY)
    record = build_record(task, tmp_path / "goldens", path, tmp_path / "wt", [], "r", key)
    del record["evidence"]
    attestation = resigned(tmp_path, key, record)
    for given in (None, path):
        result = verify(tmp_path, attestation, key, given)
        assert (result.ok, result.verdict, result.evidence) == (True, "DIRTY", ())


def test_the_cli_prints_the_evidence(
    cli: CliRunner, tmp_path: Path, key: bytes, task: Golden
) -> None:
    attestation = sealed(tmp_path, key, task, DIRTY)
    goldens = os.path.realpath(tmp_path / "goldens")
    code, out, err = cli("attest", "verify", attestation)
    assert (code, err) == (0, "")
    assert out == (
        f"valid: {attestation} DIRTY\n"
        "isolation: not recorded\n"
        f"  event 0: ground_truth_path: {goldens}/drain.md\n"
        "  event 1: out_of_scope_endpoint: evil.example:443\n"
    )
    code, out, _ = cli("attest", "verify", attestation, "--json")
    assert [e["where"] for e in json.loads(out)["evidence"]] == [
        f"{goldens}/drain.md",
        "evil.example:443",
    ]
