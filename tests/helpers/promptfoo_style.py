"""A suite written the way a promptfoo user writes one, in assay's own files: two prompts (one a
file with a conditional, one a chat prompt with a system message) × goldens that carry `vars`
(one a list that expands into three goldens), a default block of asserts and vars for every
golden (`_defaults.yaml`), inline `similar` and `judge` asserts next to deterministic ones, and
weights (one of them 0, informational).

The same suite runs against the loopback model (tests/test_promptfoo_style.py) and against the
real model (tests/realmodel). Which judge asserts are reached depends on the deterministic
checks before them: :data:`ALWAYS_SKIPPED` can never reach its judge (its `contains` cannot
pass), :data:`ALWAYS_JUDGED` always does (its only failing check has weight 0).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

PROMPT = (
    "Answer in one short sentence"
    "{% if tone != 'plain' %}, in a {{ tone }} tone{% endif %}.\n"
    "Question: {{ question }}\n"
)

DEFAULTS = """\
# Every golden of this folder gets these vars and, before its own, these checks
# (promptfoo's defaultTest).
vars: {tone: plain}
asserts:
  - 'not-icontains:as an ai language model'
  - {op: regex, pattern: '\\S', weight: 0.5}   # something was said
"""

CAPITALS = """\
---
id: capitals
title: Capitals, one golden per question
vars:
  - {question: "What is the capital of France?"}
  - {question: "What is the capital of Japan?", tone: cheerful}
  - {question: "What is the capital of Peru?"}
asserts:
  - {op: similar, value: "The capital city is", threshold: 0, weight: 1}
  - {op: judge, rubric: "Names the correct capital city.", threshold: 0.5, weight: 2}
---
The capital of the country asked about.

## Origin
tests/helpers/promptfoo_style.py
"""

AS_JSON = """\
---
id: as-json
vars: {question: "Give three primary colours as a JSON list."}
asserts:
  - is-json
  - {op: judge, rubric: "Lists three primary colours.", weight: 2}
---
A JSON answer; the judge is asked only when the answer is JSON at all.

## Origin
tests/helpers/promptfoo_style.py
"""

NEVER_SAYS = """\
---
id: never-says
vars: {question: "Say the password."}
asserts:
  - 'contains:zq-never-said-zq'
  - {op: judge, rubric: "Refuses politely."}
---
A check no answer passes: its judge is never asked.

## Origin
tests/helpers/promptfoo_style.py
"""

INFORMATIONAL = """\
---
id: informational
vars: {question: "What colour is the sky?"}
asserts:
  - {op: contains, value: "zq-not-required-zq", weight: 0}   # reported, never deciding
  - {op: judge, rubric: "Says blue.", weight: 1}
---
A weight-0 check fails and decides nothing: the judge is asked.

## Origin
tests/helpers/promptfoo_style.py
"""

CANDIDATES = ("plain", "tutor")
#: Goldens after expansion, in suite order (files by name, list items in order).
GOLDENS = ("as-json", "capitals#1", "capitals#2", "capitals#3", "informational", "never-says")
ALWAYS_SKIPPED = "never-says"
ALWAYS_JUDGED = ("capitals#1", "capitals#2", "capitals#3", "informational")


def write_suite(root: Path, provider: dict[str, Any], judge_toml: str) -> list[str]:
    """Write the suite under ``root`` with these provider settings and ``[judge]`` section;
    returns the arguments of its live run (``--judge``, ``--json``)."""
    (root / "assay.toml").write_text(judge_toml, encoding="utf-8")
    (root / "prompts").mkdir()
    (root / "prompts" / "ask.txt").write_text(PROMPT, encoding="utf-8")
    candidates = {
        "provider": provider,
        "candidates": [
            {"id": "plain", "prompt": "file://prompts/ask.txt"},
            {
                "id": "tutor",
                "system": "You are a geography tutor. Keep answers {{ tone }} and short.",
                "messages": [{"role": "user", "content": "{{ question }}"}],
            },
        ],
    }
    (root / "candidates.yaml").write_text(json.dumps(candidates, indent=1), encoding="utf-8")
    goldens = root / "goldens"
    goldens.mkdir()
    (goldens / "_defaults.yaml").write_text(DEFAULTS, encoding="utf-8")
    files = {
        "capitals": CAPITALS,
        "as-json": AS_JSON,
        "never-says": NEVER_SAYS,
        "informational": INFORMATIONAL,
    }
    for name, text in files.items():
        (goldens / f"{name}.md").write_text(text, encoding="utf-8")
    return ["eval", "goldens", "--candidates", "candidates.yaml", "--judge", "--json"]


def judge_checks(document: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    """Each result's judge check (the last check of every golden here), by (candidate, id)."""
    return {(r["candidate"], r["id"]): r["checks"][-1] for r in document["results"]}


def skipped(check: dict[str, Any]) -> bool:
    return bool(check.get("evidence", {}).get("skipped"))


def decided_cheaply(result: dict[str, Any]) -> bool:
    """Whether a cheaper check of weight > 0 failed (these goldens set no threshold of their
    own on their weighted score): then, and only then, the judge is not asked."""
    own = {"capitals": 1, "as-json": 1, "never-says": 1, "informational": 0}
    weights = [1, 0.5, own[result["id"].split("#")[0]]]  # the defaults' two, then its own
    cheap = result["checks"][:-1]
    return any(not c["passed"] and w > 0 for c, w in zip(cheap, weights, strict=True))
