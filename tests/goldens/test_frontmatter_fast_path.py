"""The frontmatter fast path reads what PyYAML reads, types included, or leaves the text to it.

``load_frontmatter`` must never accept a document PyYAML would read differently or refuse: the
generated documents below mix every construct near the edge of its subset (YAML 1.1 booleans,
numbers, dates, comments, quotes, flow lists, indentation, characters YAML refuses).
"""

from __future__ import annotations

import datetime
import random
from pathlib import Path
from typing import Any

import pytest
import yaml

from assay._yaml import _Loader
from assay.goldens import build_goldens, iter_goldens
from assay.goldens._frontmatter import UNSUPPORTED, load_frontmatter

KEYS = [
    "id",
    "input",
    "asserts",
    "k1",
    "a-b",
    "_x",
    "yes",
    "on",
    "null",
    "True",
    "y",
    "x" * 1100,
    "k.e",
    "k e",
    "-k",
    "'q'",
    "1",
    "~",
    "<<",
]
VALUES = [
    "foo",
    "foo bar",
    "a:b",
    "a: b",
    "a #c",
    "a#b",
    "1",
    "0.8",
    "1_000",
    "0x1F",
    "0o7",
    "012",
    "1:30",
    ".5",
    ".inf",
    "-1",
    "+1",
    "~",
    "null",
    "Null",
    "yes",
    "No",
    "on",
    "OFF",
    "true",
    "y",
    "2024-01-01",
    "2024-01-01 10:00:00",
    "<<",
    "=",
    "é",
    "日本",
    "\u2028x",
    "a\tb",
    "foo:",
    "!t x",
    "&a x",
    "*a",
    "|",
    ">",
    "'q'",
    "'it''s'",
    "'open",
    '"dq"',
    '"esc\\n"',
    "[a, b]",
    "[]",
    "[ ]",
    "['a', \"b\", c]",
    "[a, [b]]",
    "[a,]",
    "[a b, c]",
    "{a: b}",
    "%x",
    "@x",
    "`x",
    "a ` b",
    "a, b",
    "a [b]",
    "--- x",
    "- x",
    "? x",
    "a ? b",
    "a - b",
    "#c",
    "a   b",
    "x  ",
    "'a' #c",
    "'a'#c",
    '"a" x',
    "[a] x",
    "[a] #x",
    "[a,b]",
    "[ a , b ]",
    "[1, 0.5, yes, ~]",
    "[-1]",
    "[a:b]",
    "[a #b]",
    "['a,b']",
    '["a]"]',
    "'a''''b'",
    "''",
    '""',
    "a'b",
    'a"b',
    "\\d+",
    "regex:\\bwhere\\b",
    "contains:FROM",
    "x\x07y",
    "\ufeffx",
    "a\r",
    "C#",
    "+.5",
    "1e3",
    "1.0e+3",
    "0b101",
    "-",
    "--",
    "...",
    "'''",
    "'a' 'b'",
    "[a, 'b''c', d]",
    "[ ]  # c",
    "\U0001f600",
    "x\x85y",
    "NaN",
    ".nan",
    "0",
    "00",
    "1_0.5",
]


def _items(indent: int, rng: random.Random) -> list[str]:
    out = []
    for _ in range(rng.randint(0, 4)):
        r = rng.random()
        if r < 0.75:
            out.append(" " * indent + "- " + rng.choice(VALUES))
        elif r < 0.8:
            out.append(" " * indent + "-")
        elif r < 0.85:
            out.append(" " * rng.choice([0, 1, 2, 3, 4]) + "- " + rng.choice(VALUES))
        elif r < 0.9:
            out.append(" " * indent + "# c")
        elif r < 0.95:
            out.append("")
        else:
            out.append(" " * (indent + 2) + rng.choice(VALUES))
    return out


def _document(rng: random.Random) -> str:
    lines: list[str] = []
    for _ in range(rng.randint(0, 6)):
        r = rng.random()
        key = rng.choice(KEYS)
        if r < 0.55:
            lines.append(f"{key}: {rng.choice(VALUES)}")
        elif r < 0.75:
            lines.append(f"{key}:" + rng.choice(["", "", " ", " # c"]))
            lines += _items(rng.choice([0, 1, 2, 2, 2, 4]), rng)
        elif r < 0.8:
            lines.append("# comment")
        elif r < 0.85:
            lines.append("")
        elif r < 0.9:
            lines.append("  " + rng.choice(VALUES))
        elif r < 0.93:
            lines.append(f"  {key}: {rng.choice(VALUES)}")
        elif r < 0.96:
            lines.append(f"{key}:{rng.choice(VALUES)}")
        else:
            lines.append(f"{key}:  {rng.choice(VALUES)}   ")
    return "\n".join(lines) + rng.choice(["\n", "", "\n\n"])


def same(a: Any, b: Any) -> bool:
    """Equal and of the same types all the way down (True is not 1, 1.0 is not 1)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and a != a:
        return bool(b != b)
    return bool(a == b)


@pytest.mark.parametrize("seed", range(4))
def test_generated_documents_read_as_pyyaml_reads_them(seed: int) -> None:
    rng = random.Random(seed)
    accepted = 0
    for _ in range(20_000):
        text = _document(rng)
        fast = load_frontmatter(text)
        if fast is UNSUPPORTED:
            continue
        accepted += 1
        # PyYAML must read it (the fast path never accepts what PyYAML refuses), to the same.
        assert same(fast, yaml.load(text, Loader=_Loader)), text
    assert accepted > 300  # the generator reaches the subset often enough to mean something


def test_plain_values_keep_yaml_1_1_types() -> None:
    text = "id: g1\nthreshold: 0.9\nn: 1_000\nok: yes\nnone: ~\nhex: 0x1F\nlist: [1, on, 'x']\n"
    value = load_frontmatter(text)
    assert same(
        value,
        {
            "id": "g1",
            "threshold": 0.9,
            "n": 1000,
            "ok": True,
            "none": None,
            "hex": 31,
            "list": [1, True, "x"],
        },
    )


@pytest.mark.parametrize(
    "text",
    [
        "created: 2024-01-01\n",  # a date: PyYAML builds it
        "input: |\n  two\n  lines\n",  # a block scalar
        "input: {question: hi}\n",  # a flow mapping
        "a: &x 1\nb: *x\n",  # an anchor and an alias
        "input: first\n  continued\n",  # a multi-line plain scalar
        "yes: 1\n",  # a key YAML reads as a boolean
        "input:\ttab\n",
        "",  # an empty document is None, PyYAML's to say
    ],
)
def test_what_the_fast_path_leaves_to_pyyaml(text: str) -> None:
    assert load_frontmatter(text) is UNSUPPORTED


def test_loaded_goldens_are_those_pyyaml_gives(tmp_path: Path) -> None:
    fronts = {
        "fast": "id: g1\ninput: 'What is 2 + 2?'  # the question\nexpected: \"4\"\n"
        "threshold: 0.5\nasserts:\n  - 'contains:4'\n  - is-json\n",
        "dated": "id: g2\ninput: q\ncreated: 2024-01-01\nasserts: [is-json]\n",
    }
    for name, front in fronts.items():
        (tmp_path / f"{name}.md").write_text(f"---\n{front}---\nBody.\n", encoding="utf-8")
    assert load_frontmatter(fronts["fast"]) is not UNSUPPORTED
    assert load_frontmatter(fronts["dated"]) is UNSUPPORTED
    loaded = {g.source: g for g in iter_goldens(tmp_path)}
    for name, front in fronts.items():
        source = str(tmp_path / f"{name}.md")
        [expected] = build_goldens(
            yaml.load(front, Loader=_Loader), source=source, default_id=name, folder_tier=None
        )
        assert loaded[source] == expected  # string asserts are shared specs: equal by identity
    assert loaded[str(tmp_path / "dated.md")].fields["created"] == datetime.date(2024, 1, 1)
