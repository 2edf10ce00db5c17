"""A goldens folder's defaults: ``_defaults.yaml`` at its root, applied to each of its goldens.

Only the root of the folder being loaded is read (the folder ``assay gate PATH`` or ``assay eval
PATH`` names, or the config's goldens folder), so every golden of one run sees the same
defaults, and packaged default goldens, loaded from their own folder, never get a project's.
Discovery skips the file like every ``_``-prefixed name.

Fail closed: a key other than ``vars``, ``asserts``, ``threshold`` and ``transform`` is an
error, not ignored
(a misspelt ``assert:`` would otherwise drop a check from every golden at once).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Final

from assay._yaml import yaml_load
from assay.errors import GoldenError
from assay.goldens._model import (
    THRESHOLD_RULE,
    Defaults,
    check_var_mapping,
    parse_golden_asserts,
    read_transform,
    refuse_yaml11_words,
    with_line,
)
from assay.io import read_text, require_regular_file
from assay.validate import At, Check, Key, Table

DEFAULTS_FILES: Final = ("_defaults.yaml", "_defaults.yml")


def defaults_path(root: Path | str) -> str | None:
    """The defaults file at the root of the goldens folder ``root``, if there is one (a
    single golden file as ``root`` has none); both names at once is an error, since which one
    wins would be a guess."""
    folder = str(root)
    if not os.path.isdir(folder):
        return None
    paths = [os.path.join(folder, name) for name in DEFAULTS_FILES]
    found = [path for path in paths if os.path.lexists(path)]
    if len(found) > 1:
        raise GoldenError(
            f"both {DEFAULTS_FILES[0]} and {DEFAULTS_FILES[1]} are here: keep one", source=folder
        )
    return found[0] if found else None


def read_defaults(root: Path | str) -> Defaults | None:
    """The defaults of the goldens folder ``root`` (None when it has no defaults file).

    Raises:
        GoldenError: naming the defaults file (and its line, when it can be found) and the key
            at fault: unreadable, not a mapping, an unknown key, bad vars, asserts or threshold.
    """
    path = defaults_path(root)
    if path is None:
        return None
    require_regular_file(path, GoldenError)  # a FIFO would block the run; a loop has nothing
    text = read_text(path, GoldenError)
    data = yaml_load(text, path)
    if data is None:  # an empty file: defaults that add nothing
        return Defaults(path)
    if not isinstance(data, dict):
        raise GoldenError(
            f"a defaults file must hold a YAML mapping ({', '.join(DEFAULTS_KEYS)}), "
            f"not a {type(data).__name__}",
            source=path,
        )
    try:
        at = At(path, "", GoldenError)
        raw_asserts = data.get("asserts")
        refuse_yaml11_words(data, raw_asserts if isinstance(raw_asserts, list) else [], text, at)
        values = _DEFAULTS.check(data, at)
    except GoldenError as exc:
        raise with_line(exc, text) from None
    return Defaults(
        path,
        values.get("asserts", ()),
        values.get("vars"),
        values.get("threshold"),
        values.get("transform"),
    )


def _vars(value: Any, at: At, key: Key) -> dict[str, Any]:
    if isinstance(value, list):
        # A list makes several goldens of one: that is a golden's choice, not the suite's.
        at.fail("the defaults' vars must be one mapping (a list of vars belongs in a golden)", key)
    return check_var_mapping(value, at, key, "the defaults file")


# What a defaults file may set, declared once.
_FIELDS: Final = {
    "vars": Check(_vars),
    "asserts": Check(lambda value, at, _: parse_golden_asserts(value, source=at.source or "")),
    "threshold": THRESHOLD_RULE,
    "transform": Check(lambda value, at, key: read_transform(value, at)),
}
DEFAULTS_KEYS: Final = tuple(_FIELDS)
_DEFAULTS: Final = Table(
    _FIELDS, unknown=f"unknown key {{key}} (a defaults file holds only {', '.join(DEFAULTS_KEYS)})"
)
