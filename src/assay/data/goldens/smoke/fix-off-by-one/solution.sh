#!/usr/bin/env bash
# Reference solution: the slice starts at (page - 1) * size and holds size items; a regression
# test pins the first item of page 2 and the short last page.
set -euo pipefail
python3 - <<'PY'
from pathlib import Path

path = Path("src/pages.py")
text = path.read_text(encoding="utf-8")
old = "    start = (page - 1) * size + 1\n    return list(items[start : start + size - 1])\n"
new = "    start = (page - 1) * size\n    return list(items[start : start + size])\n"
assert text.count(old) == 1, "src/pages.py is not the fixture's"
path.write_text(text.replace(old, new), encoding="utf-8")
PY
cat >> tests/test_pages.py <<'PY'


def test_second_page_starts_right_after_the_first():
    # Regression: every page skipped its first item.
    assert paginate(ITEMS, 2, 3) == [4, 5, 6]
    assert paginate(ITEMS, 4, 3) == [10]
PY
echo "Fixed paginate()'s slice in src/pages.py (start at (page - 1) * size, size items) and added a page-2 regression test."
