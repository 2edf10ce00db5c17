"""One validator per kind of value a user writes in a config or candidates file.

Each returns the value (normalised: numbers as float) or raises the caller's error class naming
the file and the field, so every setting in assay is checked the same way and says the same thing.
"""

from __future__ import annotations

import math
from typing import Any, TypeGuard

from assay.errors import AssayError, ConfigError


def is_number(value: Any) -> TypeGuard[int | float]:
    """A finite real number (a bool is not a number here, whatever Python says)."""
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def number(
    value: Any,
    *,
    source: str | None,
    field: str,
    above: float | None = None,
    at_least: float | None = None,
    at_most: float | None = None,
    error: type[AssayError] = ConfigError,
) -> float:
    """A finite number, optionally ``> above``, ``>= at_least`` and ``<= at_most``; the one
    message says the whole rule (``must be a number between 0 and 1``)."""
    if at_least is not None and at_most is not None:
        rule = f"a number between {at_least:g} and {at_most:g}"
    elif above is not None and at_most is not None:
        rule = f"a number > {above:g} and <= {at_most:g}"
    elif above is not None:
        rule = f"a number > {above:g}"
    elif at_least is not None:
        rule = f"a number >= {at_least:g}"
    elif at_most is not None:
        rule = f"a number <= {at_most:g}"
    else:
        rule = "a number"
    ok = is_number(value) and (
        (above is None or value > above)
        and (at_least is None or value >= at_least)
        and (at_most is None or value <= at_most)
    )
    if not ok:
        raise error(f"must be {rule}", source=source, field=field)
    return float(value)


def integer(
    value: Any,
    *,
    source: str | None,
    field: str,
    at_least: int | None = None,
    error: type[AssayError] = ConfigError,
) -> int:
    """A whole number (not a bool, not 1.0), optionally ``>= at_least``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise error("must be an integer", source=source, field=field)
    if at_least is not None and value < at_least:
        raise error(f"must be an integer >= {at_least}", source=source, field=field)
    return value


def boolean(
    value: Any, *, source: str | None, field: str, error: type[AssayError] = ConfigError
) -> bool:
    if not isinstance(value, bool):
        raise error("must be true or false", source=source, field=field)
    return value


def string(
    value: Any,
    *,
    source: str | None,
    field: str,
    choices: tuple[str, ...] | None = None,
    error: type[AssayError] = ConfigError,
) -> str:
    """A string, optionally one of ``choices`` (the message lists them)."""
    if not isinstance(value, str):
        raise error("must be a string", source=source, field=field)
    if choices is not None and value not in choices:
        raise error(f"{value!r} is not one of {', '.join(choices)}", source=source, field=field)
    return value


def table(
    value: Any, *, source: str | None, field: str, error: type[AssayError] = ConfigError
) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise error("must be a table", source=source, field=field)
    return value


def known_keys(
    block: dict[str, Any],
    known: tuple[str, ...],
    *,
    source: str | None,
    prefix: str = "",
    error: type[AssayError] = ConfigError,
) -> None:
    """Unknown keys are errors: a typo must never silently change a gate."""
    for key in block:
        if key not in known:
            raise error(
                f"unknown setting (known: {', '.join(sorted(known))})",
                source=source,
                field=prefix + key,
            )
