"""RFC 6901 JSON Pointers: parsing, escaping and strict resolution."""

from __future__ import annotations

from typing import Any

import pytest

from assay.asserts._pointer import MISSING, PointerSyntaxError, escape_token, parse_pointer, resolve

# RFC 6901 section 5.
RFC_DOC: dict[str, Any] = {
    "foo": ["bar", "baz"],
    "": 0,
    "a/b": 1,
    "c%d": 2,
    "e^f": 3,
    "g|h": 4,
    "i\\j": 5,
    'k"l': 6,
    " ": 7,
    "m~n": 8,
}


@pytest.mark.parametrize(
    ("pointer", "expected"),
    [
        ("", RFC_DOC),
        ("/foo", ["bar", "baz"]),
        ("/foo/0", "bar"),
        ("/", 0),
        ("/a~1b", 1),
        ("/c%d", 2),
        ("/e^f", 3),
        ("/g|h", 4),
        ("/i\\j", 5),
        ('/k"l', 6),
        ("/ ", 7),
        ("/m~0n", 8),
    ],
)
def test_rfc6901_section5_examples(pointer: str, expected: Any) -> None:
    assert resolve(RFC_DOC, pointer) == expected


def test_whole_document_is_the_same_object() -> None:
    assert resolve(RFC_DOC, "") is RFC_DOC


def test_second_array_element() -> None:
    assert resolve(RFC_DOC, "/foo/1") == "baz"


def test_tilde_one_is_decoded_before_tilde_zero() -> None:
    # "~01" is "~0" followed by "1": it decodes to the key "~1", never to "/".
    assert parse_pointer("/~01") == ("~1",)
    doc = {"~1": "tilde-one", "/": "slash"}
    assert resolve(doc, "/~01") == "tilde-one"
    assert resolve({"/": "slash"}, "/~01") is MISSING


def test_parse_pointer_tokens() -> None:
    assert parse_pointer("") == ()
    assert parse_pointer("/") == ("",)
    assert parse_pointer("/a/b") == ("a", "b")
    assert parse_pointer("/a~1b/m~0n") == ("a/b", "m~n")
    assert parse_pointer("//") == ("", "")
    assert parse_pointer("/~0~1") == ("~/",)


@pytest.mark.parametrize("pointer", ["/01", "/00", "/007"])
def test_leading_zero_index_is_missing(pointer: str) -> None:
    assert resolve(["a", "b", "c", "d", "e", "f", "g", "h"], pointer) is MISSING


def test_zero_index_resolves() -> None:
    assert resolve(["a", "b"], "/0") == "a"
    assert resolve([["x", "y"]], "/0/1") == "y"


def test_leading_zero_is_fine_as_an_object_key() -> None:
    assert resolve({"01": "one"}, "/01") == "one"


def test_dash_is_missing() -> None:
    assert resolve(["a", "b"], "/-") is MISSING
    assert resolve([], "/-") is MISSING


def test_dash_is_an_ordinary_object_key() -> None:
    assert resolve({"-": 1}, "/-") == 1


@pytest.mark.parametrize("pointer", ["/1e0", "/+1", "/-1", "/ 1", "/1 ", "/0x1", "/1.0", "/١"])
def test_non_decimal_indices_are_missing(pointer: str) -> None:
    assert resolve(["a", "b", "c"], pointer) is MISSING


@pytest.mark.parametrize("pointer", ["/2", "/3", "/100", "/99999999999999999999"])
def test_out_of_range_is_missing(pointer: str) -> None:
    assert resolve(["a", "b"], pointer) is MISSING


def test_missing_key_is_missing() -> None:
    assert resolve({"a": 1}, "/b") is MISSING
    assert resolve({"a": {"b": 1}}, "/a/c") is MISSING
    assert resolve({"a": {"b": 1}}, "/a/b/c") is MISSING


@pytest.mark.parametrize("pointer", ["/a~2", "/a~", "/~", "/a~b", "/ok/~x", "/~~0"])
def test_invalid_escape_raises(pointer: str) -> None:
    with pytest.raises(PointerSyntaxError):
        parse_pointer(pointer)
    with pytest.raises(PointerSyntaxError):
        resolve({"a": 1}, pointer)


@pytest.mark.parametrize("pointer", ["a", "foo/0", " /a", "#foo", "~1", " #/a"])
def test_pointer_must_start_with_slash(pointer: str) -> None:
    with pytest.raises(PointerSyntaxError):
        parse_pointer(pointer)
    with pytest.raises(PointerSyntaxError):
        resolve(RFC_DOC, pointer)


def test_non_string_pointer_is_a_syntax_error() -> None:
    with pytest.raises(PointerSyntaxError):
        parse_pointer(5)  # type: ignore[arg-type]


def test_pointer_syntax_error_is_a_value_error() -> None:
    assert issubclass(PointerSyntaxError, ValueError)


@pytest.mark.parametrize("key", ["__class__", "__dict__", "keys", "get", "__len__"])
def test_only_own_keys_are_followed(key: str) -> None:
    assert resolve({"a": 1}, f"/{key}") is MISSING
    assert resolve({key: "own"}, f"/{key}") == "own"


@pytest.mark.parametrize(
    ("document", "pointer"),
    [
        ("hello", "/0"),
        ("hello", "/upper"),
        ("hello", "/__class__"),
        (42, "/0"),
        (4.5, "/real"),
        (True, "/0"),
        (None, "/0"),
        ({"s": "abc"}, "/s/0"),
        ({"n": 12}, "/n/0"),
        (["abc"], "/0/0"),
    ],
)
def test_scalars_cannot_be_traversed(document: Any, pointer: str) -> None:
    assert resolve(document, pointer) is MISSING


def test_array_index_on_a_list_of_lists_and_objects() -> None:
    doc = {"items": [{"id": 1}, {"id": 2, "tags": ["x", "y"]}]}
    assert resolve(doc, "/items/1/tags/1") == "y"
    assert resolve(doc, "/items/1/id") == 2
    assert resolve(doc, "/items/2/id") is MISSING


def test_falsy_values_are_not_missing() -> None:
    doc = {"zero": 0, "empty": "", "null": None, "false": False, "list": [], "obj": {}}
    for key, value in doc.items():
        found = resolve(doc, f"/{key}")
        assert found is not MISSING
        assert found == value


def test_missing_is_falsy_and_reprs_as_missing() -> None:
    assert not MISSING
    assert repr(MISSING) == "MISSING"


@pytest.mark.parametrize(
    ("token", "escaped"),
    [
        ("plain", "plain"),
        ("a/b", "a~1b"),
        ("m~n", "m~0n"),
        ("~1", "~01"),
        ("/~", "~1~0"),
        ("~/", "~0~1"),
        ("", ""),
        ("~~//", "~0~0~1~1"),
    ],
)
def test_escape_token(token: str, escaped: str) -> None:
    assert escape_token(token) == escaped


@pytest.mark.parametrize("key", ["plain", "a/b", "m~n", "~1", "~0", "/~", "~/", "", "~01/", " "])
def test_escape_token_round_trip(key: str) -> None:
    pointer = "/" + escape_token(key)
    assert parse_pointer(pointer) == (key,)
    assert resolve({key: "v"}, pointer) == "v"


def test_escape_round_trip_for_every_rfc_key() -> None:
    for key, value in RFC_DOC.items():
        if key == "foo":
            continue
        assert resolve(RFC_DOC, "/" + escape_token(key)) == value
