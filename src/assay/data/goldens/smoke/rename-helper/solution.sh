#!/usr/bin/env bash
# Reference solution: rename _fmt to _format_row in its module and in its one other caller.
set -euo pipefail
python3 - <<'PY'
import re
from pathlib import Path

for name in ("src/report.py", "src/cli/main.py"):
    path = Path(name)
    text = path.read_text(encoding="utf-8")
    renamed = re.sub(r"\b_fmt\b", "_format_row", text)
    assert renamed != text, f"{name} is not the fixture's"
    path.write_text(renamed, encoding="utf-8")
PY
echo "Renamed _fmt() to _format_row() in src/report.py and its caller src/cli/main.py."
