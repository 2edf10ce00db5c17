"""The hash-chained journal (``assay.attest.Journal``) and RFC 8785 canonical JSON.

Hashes are recomputed here independently of the library (``json.dumps`` with sorted keys and
no whitespace equals RFC 8785 for ASCII/BMP keys and values without floats).
"""

from __future__ import annotations

import hashlib
import json
import struct
from pathlib import Path
from typing import Any

import pytest

from assay.attest import GENESIS, KINDS, Journal, canonical_json, event_hash
from assay.errors import ValidationError


@pytest.fixture(autouse=True)
def _isolated_keys(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("ASSAY_KEY_FILE", str(tmp_path / "keys" / "attest.key"))


def independent_hash(event: dict[str, Any]) -> str:
    body = {k: v for k, v in event.items() if k != "hash"}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def lines_of(path: Path) -> list[bytes]:
    data = path.read_bytes()
    assert data.endswith(b"\n")
    return data[:-1].split(b"\n")


# ------------------------------------------------------------------------------ Journal


def test_genesis_is_64_zeros_and_kinds_are_documented() -> None:
    assert GENESIS == "0" * 64
    assert KINDS == ("read", "write", "exec", "net", "tool", "message")


def test_first_append_returns_the_event_with_index_prev_hash_and_hash(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "run.journal.jsonl")
    event = journal.append(kind="read", path="src/app.py", content="print('hi')\n")
    assert event == {
        "index": 0,
        "kind": "read",
        "path": "src/app.py",
        "content": "print('hi')\n",
        "prev_hash": "0" * 64,
        "hash": independent_hash(event),
    }
    assert len(event["hash"]) == 64
    assert all(c in "0123456789abcdef" for c in event["hash"])
    assert journal.head == event["hash"]


def test_events_chain_and_each_hash_is_sha256_of_the_canonical_event(tmp_path: Path) -> None:
    path = tmp_path / "run.journal.jsonl"
    journal = Journal(path)
    first = journal.append(kind="read", path="README.md", content="café — naïve ü 日本語 ∑")
    second = journal.append(kind="exec", command="pytest -q tests/")
    third = journal.append(kind="net", endpoint="pypi.org:443")
    fourth = journal.append(kind="message", content='quote " backslash \\ newline \n tab \t')

    assert [e["index"] for e in (first, second, third, fourth)] == [0, 1, 2, 3]
    assert first["prev_hash"] == GENESIS
    assert second["prev_hash"] == first["hash"]
    assert third["prev_hash"] == second["hash"]
    assert fourth["prev_hash"] == third["hash"]
    for event in (first, second, third, fourth):
        assert event["hash"] == independent_hash(event)
        assert event["hash"] == event_hash(event)
    assert second == {
        "index": 1,
        "kind": "exec",
        "command": "pytest -q tests/",
        "prev_hash": first["hash"],
        "hash": independent_hash(second),
    }
    assert "path" not in third and "content" not in third
    assert third["endpoint"] == "pypi.org:443"

    # Each line is the canonical JSON of the whole event (hash included), UTF-8, no escapes.
    lines = lines_of(path)
    assert len(lines) == 4
    for line, event in zip(lines, (first, second, third, fourth), strict=True):
        expected = json.dumps(event, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        assert line == expected.encode("utf-8")
        assert json.loads(line) == event
    assert "café — naïve ü 日本語 ∑".encode() in lines[0]


def test_verify_returns_ok_head_and_event_count(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "j.jsonl")
    events = [
        journal.append(kind="read", path="a.txt", content="one"),
        journal.append(kind="write", path="b.txt", content="two"),
        journal.append(kind="tool", command="grep -r foo"),
    ]
    check = journal.verify()
    assert check.ok is True
    assert check.reason is None
    assert check.head == events[-1]["hash"]
    assert check.events == 3
    # A fresh handle on the same file sees the same chain.
    again = Journal(tmp_path / "j.jsonl").verify()
    assert (again.ok, again.head, again.events) == (True, events[-1]["hash"], 3)


def test_verify_of_a_missing_journal_is_not_ok_and_does_not_raise(tmp_path: Path) -> None:
    check = Journal(tmp_path / "absent.jsonl").verify()
    assert check.ok is False
    assert check.reason is not None and "cannot read the journal" in check.reason
    assert check.events == 0
    assert check.head == GENESIS
    assert not (tmp_path / "absent.jsonl").exists()


@pytest.mark.parametrize("kind", ["READ", "delete", "", "reads", "file_read"])
def test_unknown_kind_raises_validation_error_and_writes_nothing(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "j.jsonl"
    journal = Journal(path)
    journal.append(kind="read", path="a.txt", content="x")
    before = path.read_bytes()
    with pytest.raises(ValidationError) as info:
        journal.append(kind=kind, content="x")
    assert info.value.field == "kind"
    assert "unknown event kind" in str(info.value)
    assert path.read_bytes() == before
    # The chain is intact and continues from the last good event.
    nxt = journal.append(kind="read", path="b.txt")
    assert nxt["index"] == 1
    assert journal.verify().ok is True


def test_a_non_string_field_raises_validation_error(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "j.jsonl")
    with pytest.raises(ValidationError) as info:
        journal.append(kind="read", content=123)  # type: ignore[arg-type]
    assert info.value.field == "content"
    assert not (tmp_path / "j.jsonl").exists()


def test_reopening_an_existing_journal_continues_the_chain(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    first = Journal(path)
    a = first.append(kind="read", path="a.txt", content="alpha")
    b = first.append(kind="read", path="b.txt", content="beta")

    reopened = Journal(path)
    assert reopened.head == b["hash"]
    c = reopened.append(kind="write", path="c.txt", content="gamma")
    assert c["index"] == 2
    assert c["prev_hash"] == b["hash"]
    assert c["hash"] == independent_hash(c)

    check = Journal(path).verify()
    assert (check.ok, check.events, check.head) == (True, 3, c["hash"])
    assert [json.loads(line)["index"] for line in lines_of(path)] == [0, 1, 2]
    assert json.loads(lines_of(path)[0]) == a


def test_reopening_an_empty_file_starts_at_genesis(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    path.write_bytes(b"")
    event = Journal(path).append(kind="read", path="a.txt")
    assert event["index"] == 0
    assert event["prev_hash"] == GENESIS


def test_reopening_a_broken_journal_raises(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    journal = Journal(path)
    journal.append(kind="read", path="a.txt", content="alpha")
    journal.append(kind="read", path="b.txt", content="beta")
    path.write_bytes(path.read_bytes().replace(b"beta", b"BETA"))
    with pytest.raises(ValidationError) as info:
        Journal(path)
    assert "the journal is broken" in str(info.value)
    assert "line 2" in str(info.value)


@pytest.mark.parametrize(
    ("mutate", "reason"),
    [
        (lambda lines: [lines[0], lines[2]], "line 2"),
        (lambda lines: [lines[1], lines[0], lines[2]], "line 1"),
        (
            lambda lines: [
                lines[0],
                lines[1].replace(b'"kind":"read"', b'"kind":"seek"'),
                lines[2],
            ],
            "line 2",
        ),
        (lambda lines: [lines[0], lines[1].replace(b",", b", ", 1), lines[2]], "not canonical"),
    ],
    ids=["dropped-middle", "reordered", "kind-changed", "whitespace-added"],
)
def test_verify_names_the_first_broken_line(tmp_path: Path, mutate: Any, reason: str) -> None:
    path = tmp_path / "j.jsonl"
    journal = Journal(path)
    for name in ("a.txt", "b.txt", "c.txt"):
        journal.append(kind="read", path=name, content=f"text of {name}")
    path.write_bytes(b"\n".join(mutate(lines_of(path))) + b"\n")
    result = journal.verify()
    assert result.ok is False
    assert result.reason is not None and reason in result.reason


# ------------------------------------------------------------------------ canonical_json


def test_canonical_json_has_no_whitespace_and_sorts_keys() -> None:
    value = {"b": [1, 2, {"z": None, "a": True}], "a": "x", "c": False}
    assert canonical_json(value) == b'{"a":"x","b":[1,2,{"a":true,"z":null}],"c":false}'


def test_keys_sort_by_utf16_code_units_astral_before_u_ffff() -> None:
    astral = "\U0001f600"  # UTF-16: D83D DE00
    value = {"\uffff": 1, astral: 2, "\ue000": 3, "z": 4}
    out = canonical_json(value).decode("utf-8")
    # Code-point order would be z, U+E000, U+FFFF, U+1F600; UTF-16 order puts the surrogate
    # pair (0xD83D...) before U+E000 and U+FFFF.
    assert out == '{"z":4,"' + astral + '":2,"\ue000":3,"\uffff":1}'
    assert sorted(value) != ["z", astral, "\ue000", "\uffff"]  # not Python's default order


def test_rfc8785_key_sorting_example() -> None:
    # RFC 8785 section 3.2.3.
    value = {
        "\u20ac": "Euro Sign",
        "\r": "Carriage Return",
        "\ufb33": "Hebrew Letter Dalet With Dagesh",
        "1": "One",
        "\U0001f600": "Emoji: Grinning Face",
        "\u0080": "Control",
        "\u00f6": "Latin Small Letter O With Diaeresis",
    }
    keys = list(json.loads(canonical_json(value)))
    assert keys == ["\r", "1", "\u0080", "\u00f6", "\u20ac", "\U0001f600", "\ufb33"]


def test_rfc8785_main_example() -> None:
    # RFC 8785 section 3.2.2 (input parsed the way any JSON parser would).
    source = (
        '{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],'
        ' "string": "\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/",'
        ' "literals": [null, true, false]}'
    )
    expected = (
        '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],'
        '"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}'
    )
    assert canonical_json(json.loads(source)) == expected.encode("utf-8")


@pytest.mark.parametrize(
    ("number", "text"),
    [
        (1.0, "1"),
        (1e21, "1e+21"),
        (1e20, "100000000000000000000"),
        (1e-7, "1e-7"),
        (0.000001, "0.000001"),
        (1.5e-7, "1.5e-7"),
        (0.0, "0"),
        (-0.0, "0"),
        (-0.5, "-0.5"),
        (123.456, "123.456"),
        (4.50, "4.5"),
        (1e30, "1e+30"),
        (2e-3, "0.002"),
    ],
)
def test_numbers_use_the_ecmascript_form(number: float, text: str) -> None:
    assert canonical_json(number) == text.encode("ascii")
    assert canonical_json([number]) == f"[{text}]".encode("ascii")


@pytest.mark.parametrize(
    ("ieee_hex", "text"),
    [
        # RFC 8785 appendix B.
        ("0000000000000000", "0"),
        ("8000000000000000", "0"),
        ("0000000000000001", "5e-324"),
        ("8000000000000001", "-5e-324"),
        ("7fefffffffffffff", "1.7976931348623157e+308"),
        ("ffefffffffffffff", "-1.7976931348623157e+308"),
        ("4340000000000000", "9007199254740992"),
        ("c340000000000000", "-9007199254740992"),
        ("4430000000000000", "295147905179352830000"),
        ("44b52d02c7e14af5", "9.999999999999997e+22"),
        ("44b52d02c7e14af6", "1e+23"),
        ("44b52d02c7e14af7", "1.0000000000000001e+23"),
        ("444b1ae4d6e2ef4e", "999999999999999700000"),
        ("444b1ae4d6e2ef4f", "999999999999999900000"),
        ("444b1ae4d6e2ef50", "1e+21"),
        ("3eb0c6f7a0b5ed8c", "9.999999999999997e-7"),
        ("3eb0c6f7a0b5ed8d", "0.000001"),
        ("41b3de4355555553", "333333333.3333332"),
        ("41b3de4355555554", "333333333.33333325"),
        ("41b3de4355555555", "333333333.3333333"),
        ("41b3de4355555556", "333333333.3333334"),
        ("41b3de4355555557", "333333333.33333343"),
        ("becbf647612f3696", "-0.0000033333333333333333"),
        ("43143ff3c1cb0959", "1424953923781206.2"),
    ],
)
def test_rfc8785_number_vectors(ieee_hex: str, text: str) -> None:
    (number,) = struct.unpack(">d", bytes.fromhex(ieee_hex))
    assert canonical_json(number) == text.encode("ascii")


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), float("-inf")])
def test_non_finite_numbers_are_rejected(bad: float) -> None:
    with pytest.raises(ValueError):
        canonical_json({"x": bad})


def test_strings_escape_only_what_json_requires() -> None:
    value = 'é/€😀\u2028\x1f\n\t"\\'
    assert canonical_json(value) == '"é/€😀\u2028\\u001f\\n\\t\\"\\\\"'.encode()


def test_non_json_values_are_rejected() -> None:
    with pytest.raises(TypeError, match="not a JSON value"):
        canonical_json({"x": {1, 2}})


def test_non_string_keys_are_rejected_with_a_type_error() -> None:
    with pytest.raises(TypeError, match="keys must be strings"):
        canonical_json({1: "x"})
    with pytest.raises(TypeError, match="keys must be strings"):
        canonical_json({"a": 1, 2: "x"})


def test_event_hash_ignores_only_the_hash_field() -> None:
    event = {"index": 0, "kind": "read", "prev_hash": GENESIS}
    with_hash = {**event, "hash": "f" * 64}
    assert event_hash(event) == event_hash(with_hash) == independent_hash(event)
    assert event_hash({**event, "path": "a"}) != event_hash(event)
