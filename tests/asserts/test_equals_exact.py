"""``{op: equals, value: X, exact: true}``: promptfoo's equals (its src/assertions/equals.ts):
an object value (or null) is deep-equal to the output parsed as JSON; any other is compared as
``String(value)`` with the output text, nothing stripped."""

from __future__ import annotations

from typing import Any

import pytest

from assay.asserts import OutputView, parse_assert, run_assert
from assay.errors import GoldenError
from assay.goldens import build_goldens


def equals(value: Any, output: Any, exact: bool = True, op: str = "equals") -> bool:
    spec = parse_assert({"op": op, "value": value, "exact": exact})
    return run_assert(spec, OutputView(output)).passed


@pytest.mark.parametrize(
    ("value", "output", "promptfoo"),
    [
        ("Paris", "Paris", True),
        ("Paris", "Paris\n", False),  # assay's default strips; promptfoo does not
        ("Paris", " Paris", False),
        ("Paris", "paris", False),
        (10, "10", True),
        (10, "10.0", False),  # String(10) === "10"
        (1.5, "1.5", True),
        (10.0, "10", True),  # YAML's 10.0 is JavaScript's 10
        (1e-7, "1e-7", True),
        (True, "true", True),
        ({"a": 1}, '{"a": 1.0}', True),  # util.isDeepStrictEqual after JSON.parse
        ({"a": 1}, '{"a": "1"}', False),
        ([1, 2], "[1,2]", True),
        ([1, 2], "[2,1]", False),
        ({"a": 1}, "not json", False),
        (None, "null", True),
    ],
)
def test_promptfoos_equals(value: Any, output: str, promptfoo: bool) -> None:
    assert equals(value, output) is promptfoo
    # not-equals passes exactly when equals fails (promptfoo: pass = ... !== inverse)
    assert equals(value, output, op="not-equals") is (not promptfoo)


def test_without_exact_the_documented_stripping_stays() -> None:
    assert equals("Paris", "Paris\n", exact=False) is True


def test_a_json_value_output_is_compared_as_its_text() -> None:
    assert equals("5", OutputView(5, text=False).raw) is True  # a transform's number: "5"


def test_exact_must_be_a_boolean_when_loaded() -> None:
    with pytest.raises(GoldenError) as error:
        build_goldens(
            {"id": "g", "asserts": [{"op": "equals", "value": "a", "exact": "yes"}]},
            source="g.yaml",
            default_id=None,
            folder_tier=None,
        )
    assert error.value.field == "asserts[0].exact"
