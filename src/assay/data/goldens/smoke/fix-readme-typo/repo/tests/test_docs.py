"""Documentation checks: the README keeps its sections and its spelling is clean."""

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"

# Misspellings that slipped into our docs before (CONTRIBUTING.md, "Spelling").
MISSPELLINGS = {
    "recieve": "receive",
    "seperate": "separate",
    "occured": "occurred",
    "adress": "address",
    "dependancy": "dependency",
    "wich": "which",
}


def test_readme_has_installation_section():
    assert re.search(r"^## Installation$", README.read_text(encoding="utf-8"), re.MULTILINE)


def test_readme_spelling():
    words = re.findall(r"[a-z]+", README.read_text(encoding="utf-8").lower())
    wrong = sorted({w for w in words if w in MISSPELLINGS})
    assert wrong == [], ", ".join(f"{w} -> {MISSPELLINGS[w]}" for w in wrong)
