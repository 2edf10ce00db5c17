"""Dependency policy: every runtime requirement has a lower bound."""

import re
from pathlib import Path

REQUIREMENTS = Path(__file__).resolve().parents[1] / "requirements.txt"
LINE = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)\s*(?P<spec>.*)$")


def requirements():
    for raw in REQUIREMENTS.read_text(encoding="utf-8").splitlines():
        line = raw.split("#", 1)[0].strip()
        if line:
            match = LINE.match(line)
            assert match, f"cannot read requirement {raw!r}"
            yield match["name"], match["spec"]


def test_every_requirement_has_a_lower_bound():
    unbounded = [name for name, spec in requirements() if ">=" not in spec and "==" not in spec]
    assert unbounded == []
