"""assay.validate: the spec per kind of value a user writes (config, candidates files, goldens,
judge verdicts). Each accepts exactly what it should and raises the caller's error class naming
the file and the field, with one message per rule."""

from __future__ import annotations

import math
from typing import Any

import pytest

from assay import validate
from assay.errors import AssayError, ConfigError, TelemetryError, ValidationError

SRC = "assay.toml"
NON_NUMBERS: list[Any] = [
    True,
    False,
    None,
    "1",
    "",
    [1],
    {"n": 1},
    float("nan"),
    float("inf"),
    float("-inf"),
    complex(1, 0),
]


def check(
    kind: type[validate.Spec],
    value: Any,
    *,
    source: str | None = SRC,
    field: str = "f.x",
    error: type[AssayError] = ConfigError,
    **rule: Any,
) -> Any:
    """``value`` checked by a ``kind(**rule)`` spec at ``field`` of ``source``."""
    return kind(**rule).check(value, validate.At(source, field, error))


def raised(kind: type[validate.Spec], value: Any, **rule: Any) -> AssayError:
    with pytest.raises(AssayError) as info:
        check(kind, value, **rule)
    return info.value


# ------------------------------------------------------------------------------ is_number


@pytest.mark.parametrize("value", [0, 1, -3, 0.5, -0.0, 1e300, 10**30, 5e-324])
def test_is_number_accepts_finite_reals(value: Any) -> None:
    assert validate.is_number(value) is True


@pytest.mark.parametrize("value", NON_NUMBERS)
def test_is_number_rejects_everything_else(value: Any) -> None:
    assert validate.is_number(value) is False


def test_a_bool_is_not_a_number_whatever_python_says() -> None:
    assert isinstance(True, int)
    assert validate.is_number(True) is False
    assert validate.is_number(1) is True


# --------------------------------------------------------------------------------- number


@pytest.mark.parametrize("value", [0, 2, -1.5, 1e9])
def test_number_returns_a_float(value: Any) -> None:
    out = check(validate.Num, value, source=SRC, field="f.x")
    assert out == value and type(out) is float


@pytest.mark.parametrize("value", NON_NUMBERS)
def test_number_rejects_non_numbers_naming_the_file_and_field(value: Any) -> None:
    error = raised(validate.Num, value)
    assert isinstance(error, ConfigError)
    assert (error.source, error.field, error.message) == (SRC, "f.x", "must be a number")
    assert str(error) == f"{SRC}: field 'f.x': must be a number"


@pytest.mark.parametrize(("value", "ok"), [(0, False), (-1, False), (1e-9, True), (3, True)])
def test_number_above_is_strict(value: Any, ok: bool) -> None:
    if ok:
        assert check(validate.Num, value, source=SRC, field="f.x", above=0) == value
    else:
        assert raised(validate.Num, value, above=0).message == "must be a number > 0"


@pytest.mark.parametrize(
    ("value", "ok"), [(0, True), (0.0, True), (1, True), (0.5, True), (-0.01, False), (1.01, False)]
)
def test_number_between_includes_both_bounds(value: Any, ok: bool) -> None:
    if ok:
        assert check(validate.Num, value, source=SRC, field="f.x", at_least=0, at_most=1) == value
    else:
        error = raised(validate.Num, value, at_least=0, at_most=1)
        assert error.message == "must be a number between 0 and 1"


@pytest.mark.parametrize("value", [True, float("nan"), float("inf"), "0.5"])
def test_number_bounds_do_not_let_non_numbers_through(value: Any) -> None:
    assert raised(validate.Num, value, at_least=0, at_most=1).message == (
        "must be a number between 0 and 1"
    )
    assert raised(validate.Num, value, above=0).message == "must be a number > 0"


def test_number_one_sided_messages() -> None:
    assert raised(validate.Num, -1, at_least=0).message == "must be a number >= 0"
    assert raised(validate.Num, 6, at_most=5).message == "must be a number <= 5"
    assert raised(validate.Num, 0.1, above=0.25).message == "must be a number > 0.25"
    assert check(validate.Num, 0, source=SRC, field="f", at_least=0) == 0.0
    assert check(validate.Num, 5, source=SRC, field="f", at_most=5) == 5.0


def test_infinity_is_not_within_an_unbounded_side() -> None:
    assert raised(validate.Num, math.inf, at_least=0).message == "must be a number >= 0"
    assert raised(validate.Num, -math.inf, at_most=0).message == "must be a number <= 0"


# -------------------------------------------------------------------------------- integer


@pytest.mark.parametrize("value", [0, 7, -2, 10**20])
def test_integer_accepts_whole_numbers(value: int) -> None:
    out = check(validate.Int, value, source=SRC, field="f.x")
    assert out == value and type(out) is int


@pytest.mark.parametrize("value", [True, False, 1.0, 1.5, "1", None, [1], float("nan")])
def test_integer_rejects_bools_floats_and_the_rest(value: Any) -> None:
    error = raised(validate.Int, value)
    assert (error.field, error.message) == ("f.x", "must be an integer")


def test_integer_at_least() -> None:
    assert check(validate.Int, 1, source=SRC, field="f", at_least=1) == 1
    assert raised(validate.Int, 0, at_least=1).message == "must be an integer >= 1"
    # The type is checked before the bound.
    assert raised(validate.Int, 0.0, at_least=1).message == "must be an integer"


# -------------------------------------------------------------------------------- boolean


@pytest.mark.parametrize("value", [True, False])
def test_boolean_accepts_bools(value: bool) -> None:
    assert check(validate.Bool, value, source=SRC, field="f.x") is value


@pytest.mark.parametrize("value", [0, 1, "true", "yes", None, 1.0, [True]])
def test_boolean_rejects_everything_else(value: Any) -> None:
    error = raised(validate.Bool, value)
    assert (error.field, error.message) == ("f.x", "must be true or false")


# ------------------------------------------------------------------------- string, table


@pytest.mark.parametrize("value", ["", "x", "ünïcode"])
def test_string_accepts_strings(value: str) -> None:
    assert check(validate.Str, value, source=SRC, field="f.x") == value


@pytest.mark.parametrize("value", [1, None, b"x", ["x"], True])
def test_string_rejects_non_strings(value: Any) -> None:
    assert raised(validate.Str, value).message == "must be a string"


def test_string_choices_list_them() -> None:
    choices = ("a", "b")
    assert check(validate.Str, "b", source=SRC, field="f", choices=choices) == "b"
    error = raised(validate.Str, "c", choices=choices)
    assert error.message == "'c' is not one of a, b"
    # A non-string is refused as such, not compared with the choices.
    assert raised(validate.Str, 1, choices=choices).message == "must be a string"


def test_table_accepts_only_mappings_of_toml() -> None:
    block = {"k": 1}
    assert check(validate.Dict, block, field="f", message="must be a table") is block
    for value in (["k"], "k", 1, None):
        assert raised(validate.Dict, value, message="must be a table").message == "must be a table"


# ------------------------------------------------------------------------- unknown keys


def table(*known: str) -> validate.Table:
    return validate.Table(dict.fromkeys(known, validate.Spec()))


def test_a_table_accepts_a_subset_of_its_keys() -> None:
    assert table("a", "b").check({"a": 1}, validate.At(SRC)) == {"a": 1}
    assert table("a").check({}, validate.At(SRC)) == {}


def test_a_table_names_the_unknown_key_and_lists_the_known_sorted() -> None:
    with pytest.raises(ConfigError) as info:
        table("b", "a").check({"a": 1, "zz": 2}, validate.At(SRC, "judge"))
    error = info.value
    assert (error.source, error.field) == (SRC, "judge.zz")
    assert error.message == "unknown setting (known: a, b)"


# --------------------------------------------------------------------- the caller's class


@pytest.mark.parametrize("error_class", [ConfigError, TelemetryError, ValidationError])
def test_each_validator_raises_the_callers_error_class(error_class: type[AssayError]) -> None:
    calls = [
        lambda: check(validate.Num, "x", source=SRC, field="f", error=error_class),
        lambda: check(validate.Int, "x", source=SRC, field="f", error=error_class),
        lambda: check(validate.Bool, "x", source=SRC, field="f", error=error_class),
        lambda: check(validate.Str, 1, source=SRC, field="f", error=error_class),
        lambda: check(validate.Dict, 1, source=SRC, field="f", error=error_class),
        lambda: table().check({"x": 1}, validate.At(SRC, "", error_class)),
    ]
    for call in calls:
        with pytest.raises(error_class) as info:
            call()
        assert type(info.value) is error_class
        assert info.value.source == SRC


def test_no_source_still_names_the_field() -> None:
    with pytest.raises(ConfigError) as info:
        check(validate.Num, "x", source=None, field="threshold")
    assert info.value.source is None
    assert "field 'threshold'" in str(info.value)
