#!/usr/bin/env bash
# Reference solution: add the empty-string case to tests/test_text.py (the code is unchanged).
set -euo pipefail
cat >> tests/test_text.py <<'PY'


def test_slugify_empty_string_is_empty():
    assert slugify('') == ''
PY
echo "Added test_slugify_empty_string_is_empty to tests/test_text.py: slugify('') == ''."
