#!/usr/bin/env bash
# Reference solution: give requests its security lower bound; the other lines stay as they are.
set -euo pipefail
python3 - <<'PY'
from pathlib import Path

path = Path("requirements.txt")
lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
assert lines.count("requests\n") == 1, "requirements.txt is not the fixture's"
path.write_text("".join("requests>=2.31\n" if l == "requests\n" else l for l in lines), encoding="utf-8")
PY
echo "Pinned requests>=2.31 in requirements.txt."
