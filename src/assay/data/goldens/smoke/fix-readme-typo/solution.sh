#!/usr/bin/env bash
# Reference solution: fix the one misspelt word in the Installation section, nothing else.
set -euo pipefail
python3 - <<'PY'
from pathlib import Path

path = Path("README.md")
text = path.read_text(encoding="utf-8")
assert text.count("recieve") == 1, "README.md is not the fixture's"
path.write_text(text.replace("recieve", "receive"), encoding="utf-8")
PY
echo "Fixed the spelling in README.md's Installation section: recieve -> receive."
