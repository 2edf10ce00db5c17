"""An op whose module cannot be imported: its dependency is not installed."""

from __future__ import annotations

import assay_test_plugin_missing_dependency  # noqa: F401 - the failing import is the point


def check(output: str, value: object) -> bool:
    return True
