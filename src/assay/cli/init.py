"""``assay init [DIR]``: scaffold a small project that scores at once."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Final

import click

from assay._version import __version__
from assay.config import DEFAULT_ATTESTATIONS
from assay.errors import ConfigError
from assay.io import atomic_create_text, dump_json

# Relative path -> content. Order is the order files are written and listed.
FILES: Final[dict[str, str]] = {
    "assay.toml": """\
# assay settings: every key has a default and a matching CLI flag.
goldens = "goldens"                 # where the golden cases live
baseline = "assay-baseline.json"    # commit this file: --check compares against it
# Tier 2 backend for goldens without asserts: none | difflib | rapidfuzz (lexical, offline).
similarity = "rapidfuzz"
""",
    "goldens/smoke/refund-window.md": """\
---
id: refund-window
title: Answer the refund question from the policy
input:
  question: "How long do I have to ask for a refund?"
  policy: "Refunds are accepted within 30 days of purchase."
expected: "You can ask for a refund within 30 days of purchase."
asserts:
  - 'icontains:30 days'
  - 'regex:(?i)\\brefund'
  - 'not-contains:60 days'
---
String asserts: the number of days must come from the policy, not from the model's memory.

## Origin
Scaffolded by `assay init`: replace it with a question your support assistant really gets.
""",
    "goldens/smoke/extract-invoice.md": """\
---
id: extract-invoice
title: Extract invoice fields as JSON
input: |
  Extract the invoice number, total and currency from this email as JSON.
  "Hi, please find attached invoice INV-1042 for a total of 129.50 EUR."
expected: {"invoice": "INV-1042", "total": 129.5, "currency": "EUR"}
asserts:
  - is-json
  - op: json-schema
    value:
      type: object
      required: [invoice, total, currency]
      additionalProperties: false
      properties:
        invoice: {type: string, pattern: "^INV-[0-9]+$"}
        total: {type: number, minimum: 0}
        currency: {type: string, enum: [EUR, USD, GBP]}
  - {op: equals, path: /invoice, value: INV-1042}
  - {op: equals, path: /currency, value: EUR}
---
Mapping asserts: a JSON Schema for the shape, JSON Pointers (RFC 6901) for single fields.

## Origin
Scaffolded by `assay init` after the common "extract fields from an email" task.
""",
    "goldens/smoke/git-last-commits.md": """\
---
id: git-last-commits
title: Shell command for recent commits
input: "Give the git command that shows the last 5 commits, one line each. Command only."
expected: "git log --oneline -5"
asserts:
  - 'starts-with:git log'
  - 'contains:--oneline'
  - {op: levenshtein, value: "git log --oneline -5", threshold: 6}
---
A short answer that must stay close to the canonical command (edit distance at most 6).

## Origin
Scaffolded by `assay init` (command-line assistants).
""",
    "goldens/standard/sql-active-users.md": """\
---
id: sql-active-users
title: Query active users
input: "List the email of every active user (table users, boolean column active)."
expected: "SELECT email FROM users WHERE active = TRUE;"
asserts:
  - is-sql
  - 'contains:FROM users'
  - 'regex:(?i)\\bwhere\\b'
  - 'not-contains:DELETE'
---
A read-only query, parsed by a real SQL parser (`is-sql`).

## Origin
Scaffolded by `assay init`: the simplest text-to-SQL request a data assistant sees.
""",
    "goldens/standard/explain-cache.md": """\
---
id: explain-cache
title: Explain a cache in one sentence
input: "In one sentence, what does a cache do?"
expected: "A cache keeps copies of recently used data close by so later requests are served faster."
threshold: 0.6
---
No asserts: tier 2 decides it, by the lexical similarity of the output to `expected`
(`similarity = "rapidfuzz"` in assay.toml). With `similarity = "none"` it would need a judge.

## Origin
Scaffolded by `assay init` (free-text answers scored by similarity).
""",
    "goldens/standard/deploy-friday.md": """\
---
id: deploy-friday
title: Policy question that needs judgement
input: {question: "Can I deploy on Friday afternoon?"}
rubric: |
  The answer must say that deploying on Friday afternoon is not allowed because of the change
  freeze, and give the freeze window (Friday 12:00 to Monday 08:00). Penalise invented exceptions.
---
Only a rubric: no assert and no expected value decide it, so it is reported `needs-judge` (neither
pass nor fail) until a judge is configured.

## Origin
Scaffolded by `assay init` after a change-freeze policy question.
""",
    # Outputs that pass every decided golden; built with json so the escaping is always right.
    "outputs.json": dump_json(
        {
            "refund-window": "You can request a refund within 30 days of purchase.",
            "extract-invoice": json.dumps(
                {"invoice": "INV-1042", "total": 129.5, "currency": "EUR"}
            ),
            "git-last-commits": "git log --oneline -n 5",
            "sql-active-users": "SELECT email FROM users WHERE active = TRUE;",
            "explain-cache": "A cache stores copies of recently used data nearby so later requests "
            "are served faster.",
            "deploy-friday": "No. A change freeze applies from Friday 12:00 until Monday 08:00.",
        }
    ),
    ".github/workflows/assay.yml": """\
# Score the candidate outputs against the goldens on every pull request.
# `assay gate --check` exits 2 when a golden regressed against the committed baseline
# (create it once with `assay gate --outputs outputs.json --write-baseline` and commit it).
name: assay

on:
  pull_request:
  push:
    branches: [main]

permissions:
  contents: read
  checks: write          # lets the JUnit step publish a check run

jobs:
  assay:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-python@v5
        with:
          python-version: "3.12"
      - name: Install assay
        # The assay that wrote this file. If your package index does not serve assay, point
        # this at where you install it from: a wheel
        #   pip install ./assay-{version}-py3-none-any.whl
        # or its repository at the release tag
        #   pip install "git+https://YOUR-GIT-HOST/assay.git@v{version}"
        run: pip install "assay=={version}"
      - name: Check the goldens against the baseline
        # Also appends a Markdown summary to the job page ($GITHUB_STEP_SUMMARY).
        run: assay gate --outputs outputs.json --check --format junit --output assay-junit.xml
      - name: Upload the JUnit report
        if: always()
        uses: actions/upload-artifact@v4
        with:
          name: assay-junit
          path: assay-junit.xml
      - name: Publish the test results
        if: always()
        uses: mikepenz/action-junit-report@v4
        with:
          report_paths: assay-junit.xml
""".replace("{version}", __version__),
}
# What .gitignore needs (one line each); assay init writes it, or adds what an existing one lacks.
GITIGNORE: Final = (".assay/",)
_GITIGNORE_HEADER: Final = (
    "# assay's local cache and saved runs (one working copy's machine state)\n"
)


def _conflicts(root: Path) -> list[Path]:
    """Every target that exists, and every folder on the way that is a file."""
    found: list[Path] = []
    if root.exists() and not root.is_dir():
        return [root]
    for rel in FILES:
        target = root / rel
        for folder in reversed(Path(rel).parents[:-1]):
            where = root / folder
            if where.exists() and not where.is_dir() and where not in found:
                found.append(where)
        if target.exists() or target.is_symlink():
            found.append(target)
    return found


def scaffold(root: Path) -> list[Path]:
    """Write the example project into ``root``; return the files written. A ConfigError when
    any target already exists (nothing is written then) or a write fails."""
    conflicts = _conflicts(root)
    if conflicts:
        shown = ", ".join(str(p) for p in conflicts[:5])
        more = f" and {len(conflicts) - 5} more" if len(conflicts) > 5 else ""
        raise ConfigError(
            f"refusing to overwrite {shown}{more}: assay init never replaces a file "
            "(choose an empty folder or remove them)",
            source=str(conflicts[0]),
        )
    written = []
    for rel, text in FILES.items():
        target = root / rel
        # Exclusive create: a file that appeared since the check above is still never replaced.
        if not atomic_create_text(target, text, ConfigError):
            raise ConfigError(
                "refusing to overwrite it: it appeared while assay init was writing",
                source=str(target),
            )
        written.append(target)
    return written


def _ignored(line: str) -> str:
    """A .gitignore line as the pattern it names: ``/.assay`` and ``.assay/`` alike."""
    return line.strip().strip("/")


def write_gitignore(root: Path) -> str | None:
    """Make ``root/.gitignore`` ignore what :data:`GITIGNORE` names: create it, or append the
    lines an existing one lacks (running it again adds nothing). Return what was done
    (``created`` / ``updated``), or None when nothing was missing."""
    from assay.io import atomic_write_text, read_text

    target = root / ".gitignore"
    if not target.exists():
        atomic_write_text(
            target, _GITIGNORE_HEADER + "".join(f"{x}\n" for x in GITIGNORE), ConfigError
        )
        return "created"
    text = read_text(target, ConfigError)
    present = {_ignored(line) for line in text.splitlines()}
    missing = [line for line in GITIGNORE if _ignored(line) not in present]
    if not missing:
        return None
    gap = "" if not text or text.endswith("\n") else "\n"
    added = _GITIGNORE_HEADER + "".join(f"{x}\n" for x in missing)
    atomic_write_text(target, f"{text}{gap}{added}", ConfigError)
    return "updated"


@click.command("init")
@click.argument("directory", default=".", type=click.Path(path_type=Path))
def init_command(directory: Path) -> int:
    """Scaffold a working example project (goldens, outputs, config, CI workflow) in DIRECTORY."""
    written = scaffold(directory)
    ignore = write_gitignore(directory)
    click.echo(f"assay init: created {len(written)} files in {directory}")
    for path in written:
        click.echo(f"  {path.relative_to(directory).as_posix()}")
    if ignore is not None:
        click.echo(f"  .gitignore ({ignore}: ignores {', '.join(GITIGNORE)})")
    cd = [] if directory == Path(".") else [f"cd {directory}"]
    steps = [
        *cd,
        "assay gate --outputs outputs.json                   # score the example outputs",
        "assay gate --self-test                              # asserts vs each golden's expected",
        "assay gate --outputs outputs.json --write-baseline  # then commit assay-baseline.json",
        "assay gate --outputs outputs.json --check           # CI: exit 2 on a regression",
    ]
    click.echo("next:")
    for step in steps:
        click.echo(f"  {step}")
    # Attestations must be committed (anyone verifies them), so they live outside .assay/.
    click.echo(
        ".gitignore keeps .assay/ (assay's local cache and runs) out of git; "
        f"commit {DEFAULT_ATTESTATIONS}/ (clean-run attestations)"
    )
    return 0
