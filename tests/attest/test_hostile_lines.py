"""Hostile journal, ledger and record bytes are a named failure, never a traceback: NaN (which
Python's JSON parser accepts), nesting too deep to parse, and an index that is a boolean."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.attest import GENESIS, Journal, event_hash
from assay.attest._canonical import canonical_json, parse_canonical

DEEP = ("[" * 100_000 + "]" * 100_000).encode()


@pytest.mark.parametrize(
    "raw",
    [
        b'{"content":NaN,"index":0,"kind":"read"}',
        b'{"content":Infinity,"index":0,"kind":"read"}',
        b'{"content":' + DEEP + b',"index":0,"kind":"read"}',
        b"[1,2]",
        b'{"a": 1}',  # not canonical (whitespace)
        b"\xff\xfe",
    ],
)
def test_parse_canonical_refuses_what_is_not_one_canonical_object(raw: bytes) -> None:
    assert parse_canonical(raw) is None


def test_parse_canonical_returns_the_object_of_canonical_bytes() -> None:
    event = {"kind": "read", "index": 0, "path": "é"}
    assert parse_canonical(canonical_json(event)) == event


def _line(event: dict[str, object]) -> bytes:
    body = {**event, "prev_hash": GENESIS}
    return canonical_json({**body, "hash": event_hash(body)}) + b"\n"


@pytest.mark.parametrize(
    "line",
    [
        b'{"content":NaN,"hash":"x","index":0,"kind":"read","prev_hash":"'
        + GENESIS.encode()
        + b'"}\n',
        b'{"content":' + DEEP + b',"index":0,"kind":"read"}\n',
    ],
)
def test_a_journal_line_that_cannot_be_canonical_is_named(tmp_path: Path, line: bytes) -> None:
    path = tmp_path / "run.journal.jsonl"
    path.write_bytes(line)
    check = Journal.__new__(Journal)
    check.path = path
    result = check.verify()
    assert not result.ok
    assert result.reason is not None and result.reason.startswith("line 1: not canonical JSON")


def test_an_index_that_is_true_is_not_index_1(tmp_path: Path) -> None:
    path = tmp_path / "run.journal.jsonl"
    first = _line({"kind": "read", "index": 0})
    second_body = {"kind": "read", "index": True, "prev_hash": parse_canonical(first[:-1])["hash"]}  # type: ignore[index]
    second = canonical_json({**second_body, "hash": event_hash(second_body)}) + b"\n"
    path.write_bytes(first + second)
    check = Journal.__new__(Journal)
    check.path = path
    result = check.verify()
    assert not result.ok
    assert result.reason is not None and "line 2: index True out of order" in result.reason
