"""What a seal flags: ground-truth shingles and short answers, boundary paths and endpoints.

Every case seals through the Python API (``assay.attest.seal``) against small markdown goldens
in ``tmp_path``, reads the stored record back, and checks that ``verify`` with the journal
re-derives the same verdict from digests alone.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from assay.attest import Journal, _scan, build_record, seal, verify, words_of
from assay.attest._scan import build_truth, match_plain
from assay.errors import GoldenError
from assay.goldens import iter_goldens
from tests.helpers.goldens import write_golden

KEY = bytes(range(32))


@pytest.fixture(autouse=True)
def _isolated_keys(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test may touch the real home folder's key."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("ASSAY_KEY_FILE", str(tmp_path / "keys" / "attest.key"))


# The fix-parser task: its ground truth is EXPECTED; INPUT, TITLE and BODY are what the agent
# is given and must not count.
EXPECTED = "The parser now rejects trailing commas in arrays and objects with a clear ParseError."
INPUT = "Update src/parser.py so that malformed documents with dangling separators raise an error."
TITLE = "Make the JSON reader strict about dangling separators everywhere"
BODY = (
    "\nThe task exercises the reader's error path on dangling separators in nested containers"
    " and deep documents.\n\n## Origin\nWritten for the attestation tests.\n"
)
PARSER_GOLDEN = f"""\
id: fix-parser
title: "{TITLE}"
input: "{INPUT}"
expected: "{EXPECTED}"
"""

UNRELATED = [
    {"kind": "read", "path": "src/parser.py", "content": "def parse(text):\n    return []\n"},
    {"kind": "exec", "command": "pytest -q tests/test_parser.py"},
    {"kind": "write", "path": "src/parser.py", "content": "def parse(text):\n    raise X\n"},
    {"kind": "message", "content": "I changed the tokenizer loop and ran the unit tests."},
    {"kind": "tool", "command": "grep -rn tokenizer src/"},
]


@dataclass
class Outcome:
    id: str
    verdict: str
    matches: list[dict[str, Any]]
    record: dict[str, Any]
    record_bytes: bytes
    journal: Path
    root: Path

    def verify(self) -> Any:
        return verify(self.root, self.id, KEY, self.journal)


def layout(tmp_path: Path) -> tuple[Path, Path]:
    goldens, worktree = tmp_path / "goldens", tmp_path / "wt"
    goldens.mkdir(exist_ok=True)
    worktree.mkdir(exist_ok=True)
    (worktree / "src").mkdir(exist_ok=True)
    return goldens, worktree


def journal_of(path: Path, events: Sequence[dict[str, Any]]) -> Path:
    journal = Journal(path)
    for event in events:
        journal.append(**event)
    return path


_COUNTER = {"n": 0}


def seal_events(
    tmp_path: Path,
    task_id: str,
    events: Sequence[dict[str, Any]],
    *,
    allow: Sequence[str] = (),
) -> Outcome:
    goldens, worktree = layout(tmp_path)
    _COUNTER["n"] += 1
    journal = journal_of(tmp_path / f"run{_COUNTER['n']}.journal.jsonl", events)
    tasks = list(iter_goldens(goldens))
    sealed = seal(tmp_path, tasks, goldens, task_id, journal, worktree, list(allow), "r1", KEY)
    path = tmp_path / "assay-attestations" / (sealed.id.removeprefix("sha256:") + ".json")
    data = path.read_bytes()
    record = json.loads(data)
    assert record["verdict"] == sealed.verdict
    assert record["matches"] == sealed.matches
    assert sealed.events == len(events)
    return Outcome(sealed.id, sealed.verdict, sealed.matches, record, data, journal, tmp_path)


def assert_verifies(outcome: Outcome) -> None:
    result = outcome.verify()
    assert result.reason is None
    assert result.ok is True
    assert result.verdict == outcome.verdict


@pytest.fixture
def parser_task(tmp_path: Path) -> Path:
    goldens, _ = layout(tmp_path)
    return write_golden(goldens, "fix-parser.md", PARSER_GOLDEN, BODY)


# ------------------------------------------------------------------------- normalisation


def test_words_of_normalises_nfkc_casefold_and_punctuation() -> None:
    assert words_of("The  Parser-NOW rejects…") == ["the", "parser", "now", "rejects"]
    assert words_of("ｔｈｅ ＰＡＲＳＥＲ") == ["the", "parser"]  # fullwidth forms (NFKC)
    assert words_of("ﬁle") == ["file"]  # ligature (NFKC)
    assert words_of("Straße STRASSE") == ["strasse", "strasse"]  # casefold, not lower
    assert words_of("snake_case--name;;  x") == ["snake", "case", "name", "x"]
    assert words_of("") == []
    assert words_of(" ...!!! ") == []


# ------------------------------------------------------------------ ground-truth passages


def test_six_word_passage_mid_paragraph_is_dirty_shingle(tmp_path: Path, parser_task: Path) -> None:
    content = (
        "Review notes, second round.\nWe agreed that the parser now rejects trailing commas"
        " starting next quarter, pending sign-off from the platform group.\nOther items follow."
    )
    outcome = seal_events(
        tmp_path,
        "fix-parser",
        [UNRELATED[0], {"kind": "read", "path": "docs/notes.md", "content": content}],
    )
    assert outcome.verdict == "DIRTY"
    assert outcome.matches == [{"event": 1, "class": "ground_truth_shingle"}]
    assert outcome.record["activity"][0]["digests"] == []
    assert len(outcome.record["activity"][1]["digests"]) == 1
    assert outcome.record["activity"][1]["digests"][0] in outcome.record["commitment"]["shingles"]
    assert_verifies(outcome)


def test_five_words_of_the_answer_are_clean(tmp_path: Path, parser_task: Path) -> None:
    content = "Note: a parser now rejects trailing commas during linting, which is unrelated."
    outcome = seal_events(
        tmp_path, "fix-parser", [{"kind": "read", "path": "n.md", "content": content}]
    )
    assert outcome.verdict == "CLEAN"
    assert outcome.matches == []
    assert_verifies(outcome)


def test_commitment_counts_every_shingle_of_the_answer(tmp_path: Path, parser_task: Path) -> None:
    outcome = seal_events(tmp_path, "fix-parser", UNRELATED)
    commitment = outcome.record["commitment"]
    n_words = len(words_of(EXPECTED))
    assert n_words == 14
    assert commitment["k"] == 6
    assert commitment["min_short_chars"] == 12
    assert len(commitment["shingles"]) == n_words - 6 + 1
    assert commitment["short"] == []
    assert commitment["coverage"] == {"sources": 1, "shingles": 9, "short_texts": 0}


def test_unrelated_activity_is_clean(tmp_path: Path, parser_task: Path) -> None:
    events = [
        *UNRELATED,
        {"kind": "net", "endpoint": "pypi.org:443", "content": "GET /simple/regex/"},
    ]
    outcome = seal_events(tmp_path, "fix-parser", events, allow=["pypi.org:443"])
    assert outcome.verdict == "CLEAN"
    assert outcome.matches == []
    assert [a["index"] for a in outcome.record["activity"]] == list(range(6))
    assert all(a["digests"] == [] and a["flags"] == [] for a in outcome.record["activity"])
    assert outcome.record["journal"]["events"] == 6
    assert_verifies(outcome)


@pytest.mark.parametrize(
    "content",
    [
        'Changelog headline: "The  Parser-NOW rejects…  TRAILING—commas" (draft).',
        "ｔｈｅ ｐａｒｓｅｒ ｎｏｗ ｒｅｊｅｃｔｓ trailing commas, per the fullwidth memo",
        "the_parser_now_rejects_trailing_commas = True",
        "THE PARSER NOW REJECTS TRAILING COMMAS!!!",
    ],
    ids=["spacing-hyphen-case-ellipsis", "nfkc-fullwidth", "underscores", "upper-case"],
)
def test_normalisation_finds_the_passage(tmp_path: Path, parser_task: Path, content: str) -> None:
    outcome = seal_events(
        tmp_path, "fix-parser", [{"kind": "read", "path": "x.md", "content": content}]
    )
    assert outcome.verdict == "DIRTY"
    assert outcome.matches == [{"event": 0, "class": "ground_truth_shingle"}]
    assert_verifies(outcome)


def test_casefold_matches_sharp_s(tmp_path: Path) -> None:
    goldens, _ = layout(tmp_path)
    write_golden(
        goldens,
        "street.md",
        'id: street\ninput: "Where is the office?"\n'
        'expected: "The office moved to the Hauptstraße tower in spring."',
    )
    outcome = seal_events(
        tmp_path,
        "street",
        [
            {
                "kind": "read",
                "path": "a.md",
                "content": "memo: OFFICE MOVED TO THE HAUPTSTRASSE TOWER",
            }
        ],
    )
    assert outcome.verdict == "DIRTY"
    assert outcome.matches == [{"event": 0, "class": "ground_truth_shingle"}]
    assert_verifies(outcome)


@pytest.mark.parametrize(
    ("event", "where"),
    [
        (
            {
                "kind": "read",
                "path": "logs/deploy.log",
                "content": "12:00 promoted ZEPHYR_7734 kappa to production, all green",
            },
            "content",
        ),
        ({"kind": "exec", "command": "git tag zephyr-7734-kappa && git push --tags"}, "command"),
        ({"kind": "read", "path": "releases/Zephyr-7734.Kappa.txt"}, "path"),
    ],
    ids=["in-content", "in-command", "in-path"],
)
def test_short_answer_anywhere_is_dirty_short(
    tmp_path: Path, event: dict[str, Any], where: str
) -> None:
    goldens, _ = layout(tmp_path)
    write_golden(
        goldens,
        "build-tag.md",
        'id: build-tag\ninput: "What is the build tag of the release?"\n'
        'expected: "Zephyr-7734 Kappa"',
    )
    assert len(" ".join(words_of("Zephyr-7734 Kappa"))) >= 12
    outcome = seal_events(tmp_path, "build-tag", [UNRELATED[1], event])
    assert outcome.verdict == "DIRTY", where
    assert outcome.matches == [{"event": 1, "class": "ground_truth_short"}]
    assert outcome.record["commitment"]["coverage"] == {
        "sources": 1,
        "shingles": 0,
        "short_texts": 1,
    }
    assert outcome.record["commitment"]["short_lengths"] == [3]
    assert_verifies(outcome)


def test_part_of_a_short_answer_is_clean(tmp_path: Path) -> None:
    goldens, _ = layout(tmp_path)
    write_golden(
        goldens,
        "build-tag.md",
        'id: build-tag\ninput: "What is the build tag?"\nexpected: "Zephyr-7734 Kappa"',
    )
    events = [
        {"kind": "read", "path": "a.txt", "content": "zephyr 7734 was the old tag; kappa is new"},
        {"kind": "read", "path": "b.txt", "content": "xzephyr 7734 kappa"},
    ]
    outcome = seal_events(tmp_path, "build-tag", events)
    assert outcome.verdict == "CLEAN"
    assert_verifies(outcome)


@pytest.mark.parametrize(
    ("answer", "verdict"),
    [
        ("abcdef ghijk", "DIRTY"),  # 12 characters: committed
        ("abcde ghijk", "CLEAN"),  # 11 characters: too short to commit
        ("one two three four fivefive", "DIRTY"),  # five words: a short answer
    ],
)
def test_short_answer_length_boundary(tmp_path: Path, answer: str, verdict: str) -> None:
    goldens, _ = layout(tmp_path)
    write_golden(goldens, "t.md", f'id: t\ninput: "Say it."\nexpected: "{answer}"')
    events = [{"kind": "read", "path": "a.txt", "content": f"before {answer.upper()} after"}]
    outcome = seal_events(tmp_path, "t", events)
    assert outcome.verdict == verdict
    expected_matches = [{"event": 0, "class": "ground_truth_short"}] if verdict == "DIRTY" else []
    assert outcome.matches == expected_matches
    assert_verifies(outcome)


# ----------------------------------------------------------------- what is ground truth

PASSAGES = {
    "expected": "the migration script renames every legacy column to snake case",
    "assert-string": "the response mentions the quarterly revenue figure for Europe",
    "assert-mapping": "retry the upload three times before giving up on the bucket",
    "rubric": "a good answer explains why the lock is taken before the read",
    "completion-signal": "all forty integration checks report green on the nightly run",
    "reference-file": "the reference solution caches the tenant lookup in a bounded dict",
    "expected-json-leaf": "the cache key now includes the tenant id and region",
    "input": "please make the importer tolerate blank lines between every record",
    "title": "importer chokes on blank lines in uploaded spreadsheets today",
    "body": "this golden was written after a customer reported a crash with blanks",
}


@pytest.fixture
def sources_task(tmp_path: Path) -> Path:
    goldens, _ = layout(tmp_path)
    (goldens / "ref").mkdir()
    (goldens / "ref" / "solution.txt").write_text(
        f"# Reference\n\n{PASSAGES['reference-file']}.\n", encoding="utf-8"
    )
    frontmatter = f"""\
id: sources
title: "{PASSAGES["title"]}"
input: "{PASSAGES["input"]}"
expected: "{PASSAGES["expected"]}"
asserts:
  - "contains:{PASSAGES["assert-string"]}"
  - op: contains
    value: "{PASSAGES["assert-mapping"]}"
    case_insensitive: true
rubric: "{PASSAGES["rubric"]}"
completion_signals:
  - "{PASSAGES["completion-signal"]}"
reference_files:
  - ref/solution.txt
"""
    write_golden(goldens, "sources.md", frontmatter, f"\n{PASSAGES['body']}.\n")
    write_golden(
        goldens,
        "json-task.md",
        f'id: json-task\ninput: "Describe the change."\n'
        f'expected:\n  summary: "{PASSAGES["expected-json-leaf"]}"\n  code: 7\n',
    )
    return goldens


@pytest.mark.parametrize(
    ("source", "verdict"),
    [
        ("expected", "DIRTY"),
        ("assert-string", "DIRTY"),
        ("assert-mapping", "DIRTY"),
        ("rubric", "DIRTY"),
        ("completion-signal", "DIRTY"),
        ("reference-file", "DIRTY"),
        ("input", "CLEAN"),
        ("title", "CLEAN"),
        ("body", "CLEAN"),
    ],
)
def test_ground_truth_sources(
    tmp_path: Path, sources_task: Path, source: str, verdict: str
) -> None:
    content = f"Some preamble here.\n{PASSAGES[source].capitalize()}, said the doc.\nThe end."
    outcome = seal_events(
        tmp_path, "sources", [{"kind": "read", "path": "notes.md", "content": content}]
    )
    assert outcome.verdict == verdict, source
    if verdict == "DIRTY":
        assert outcome.matches == [{"event": 0, "class": "ground_truth_shingle"}]
    else:
        assert outcome.matches == []
    assert_verifies(outcome)


def test_the_whole_input_title_and_body_stay_clean(tmp_path: Path, sources_task: Path) -> None:
    golden_text = (sources_task / "sources.md").read_text(encoding="utf-8")
    body = golden_text.split("---\n", 2)[2]
    events = [
        {"kind": "message", "content": PASSAGES["input"]},
        {"kind": "message", "content": PASSAGES["title"]},
        {"kind": "read", "path": "TASK.md", "content": body},
    ]
    outcome = seal_events(tmp_path, "sources", events)
    assert outcome.verdict == "CLEAN"
    assert outcome.matches == []
    assert_verifies(outcome)


def test_commitment_covers_each_ground_truth_source(tmp_path: Path, sources_task: Path) -> None:
    outcome = seal_events(tmp_path, "sources", [{"kind": "message", "content": "hello"}])
    # expected, two assert values, rubric, one completion signal, one reference file.
    assert outcome.record["commitment"]["coverage"]["sources"] == 6
    assert outcome.verdict == "CLEAN"


def test_expected_json_leaf_is_ground_truth(tmp_path: Path, sources_task: Path) -> None:
    content = f"From the design doc: {PASSAGES['expected-json-leaf']} (see ticket)."
    outcome = seal_events(
        tmp_path, "json-task", [{"kind": "read", "path": "d.md", "content": content}]
    )
    assert outcome.verdict == "DIRTY"
    assert outcome.matches == [{"event": 0, "class": "ground_truth_shingle"}]
    assert_verifies(outcome)


def test_an_unreadable_reference_file_refuses_the_seal(tmp_path: Path) -> None:
    goldens, worktree = layout(tmp_path)
    write_golden(
        goldens,
        "refs.md",
        'id: refs\ninput: "Do it."\nexpected: "fine"\nreference_files:\n  - ref/missing-answer.txt',
    )
    journal = journal_of(tmp_path / "j.jsonl", [{"kind": "message", "content": "hi"}])
    tasks = list(iter_goldens(goldens))
    with pytest.raises(GoldenError) as info:
        seal(tmp_path, tasks, goldens, "refs", journal, worktree, [], None, KEY)
    assert "ref/missing-answer.txt" in str(info.value)
    assert "refusing to seal" in str(info.value)
    assert info.value.field == "reference_files"
    assert not (tmp_path / ".assay").exists()


def test_reference_files_resolve_next_to_a_golden_in_a_folder_with_a_colon(
    tmp_path: Path,
) -> None:
    goldens = tmp_path / "suite:v2"
    worktree = tmp_path / "wt"
    worktree.mkdir()
    write_golden(
        goldens,
        "refs.md",
        'id: refs\ninput: "Do it."\nexpected: "fine"\nreference_files:\n  - solution.txt',
    )
    (goldens / "solution.txt").write_text(
        "the solution batches the writes and flushes once per second\n", encoding="utf-8"
    )
    content = "hint: it batches the writes and flushes once per second"
    journal = journal_of(tmp_path / "j.jsonl", [{"kind": "read", "path": "a", "content": content}])
    tasks = list(iter_goldens(goldens))
    sealed = seal(tmp_path, tasks, goldens, "refs", journal, worktree, [], None, KEY)
    assert sealed.verdict == "DIRTY"
    assert sealed.matches == [{"event": 0, "class": "ground_truth_shingle"}]


# ------------------------------------------------------------------------------- paths


@pytest.mark.parametrize(
    ("path", "matches"),
    [
        ("../secret.txt", [{"event": 0, "class": "out_of_scope_path"}]),
        ("src/../../outside/notes.txt", [{"event": 0, "class": "out_of_scope_path"}]),
        ("/etc/hostname", [{"event": 0, "class": "out_of_scope_path"}]),
        ("../wt2/file.txt", [{"event": 0, "class": "out_of_scope_path"}]),
        ("../goldens-old/fix-parser.md", [{"event": 0, "class": "out_of_scope_path"}]),
        ("../goldens/fix-parser.md", [{"event": 0, "class": "ground_truth_path"}]),
        ("../goldens", [{"event": 0, "class": "ground_truth_path"}]),
        ("src/parser.py", []),
        ("./src/../README.md", []),
        ("../wt/src/parser.py", []),
    ],
)
def test_path_boundaries(
    tmp_path: Path, parser_task: Path, path: str, matches: list[dict[str, Any]]
) -> None:
    outcome = seal_events(tmp_path, "fix-parser", [{"kind": "read", "path": path}])
    assert outcome.matches == matches
    assert outcome.verdict == ("DIRTY" if matches else "CLEAN")
    assert_verifies(outcome)


def test_absolute_path_into_the_goldens_folder_is_ground_truth_path(
    tmp_path: Path, parser_task: Path
) -> None:
    outcome = seal_events(tmp_path, "fix-parser", [{"kind": "read", "path": str(parser_task)}])
    assert outcome.verdict == "DIRTY"
    assert outcome.matches == [{"event": 0, "class": "ground_truth_path"}]
    assert_verifies(outcome)


def test_symlink_inside_the_worktree_pointing_outside_is_out_of_scope(
    tmp_path: Path, parser_task: Path
) -> None:
    _, worktree = layout(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "lib.py").write_text("secret = 1\n", encoding="utf-8")
    os.symlink(outside, worktree / "vendor")
    events = [
        {"kind": "read", "path": "src/parser.py", "content": "x"},
        {"kind": "read", "path": "vendor/lib.py", "content": "secret = 1\n"},
    ]
    outcome = seal_events(tmp_path, "fix-parser", events)
    assert outcome.verdict == "DIRTY"
    assert outcome.matches == [{"event": 1, "class": "out_of_scope_path"}]
    assert outcome.record["activity"][1]["flags"] == ["out_of_scope_path"]
    assert_verifies(outcome)


def test_symlinked_file_inside_the_worktree_into_the_goldens_is_ground_truth_path(
    tmp_path: Path, parser_task: Path
) -> None:
    _, worktree = layout(tmp_path)
    os.symlink(parser_task, worktree / "TASK.md")
    outcome = seal_events(tmp_path, "fix-parser", [{"kind": "read", "path": "TASK.md"}])
    assert outcome.verdict == "DIRTY"
    assert outcome.matches == [{"event": 0, "class": "ground_truth_path"}]
    assert_verifies(outcome)


def test_a_path_and_its_content_give_one_match_per_class(tmp_path: Path, parser_task: Path) -> None:
    events = [{"kind": "read", "path": "../goldens/fix-parser.md", "content": EXPECTED}]
    outcome = seal_events(tmp_path, "fix-parser", events)
    assert outcome.matches == [
        {"event": 0, "class": "ground_truth_path"},
        {"event": 0, "class": "ground_truth_shingle"},
    ]
    assert len(outcome.record["activity"][0]["digests"]) == 9
    assert_verifies(outcome)


@pytest.mark.parametrize(
    ("path", "verdict", "matches"),
    [
        ("../wt_alias/src/parser.py", "CLEAN", []),
        ("../goldens_alias/fix-parser.md", "DIRTY", [{"event": 0, "class": "ground_truth_path"}]),
    ],
)
def test_a_sealed_record_verifies_against_its_own_journal_through_symlink_aliases(
    tmp_path: Path, parser_task: Path, path: str, verdict: str, matches: list[dict[str, Any]]
) -> None:
    goldens, worktree = layout(tmp_path)
    (worktree / "src" / "parser.py").write_text("x = 1\n", encoding="utf-8")
    os.symlink(worktree, tmp_path / "wt_alias")
    os.symlink(goldens, tmp_path / "goldens_alias")
    outcome = seal_events(tmp_path, "fix-parser", [{"kind": "read", "path": path}])
    # Symlinks are followed at seal time: the first resolves into the worktree, the second
    # into the goldens folder.
    assert outcome.verdict == verdict
    assert outcome.matches == matches
    assert_verifies(outcome)


# --------------------------------------------------------------------------- endpoints


@pytest.mark.parametrize(
    ("endpoint", "allow", "verdict"),
    [
        ("api.example.com:443", ["api.example.com:443"], "CLEAN"),
        ("API.Example.COM:443", ["api.example.com:443"], "CLEAN"),
        ("api.example.com:443", ["pypi.org:443", " API.EXAMPLE.COM:443 "], "CLEAN"),
        ("evil.example.net:443", ["api.example.com:443"], "DIRTY"),
        ("api.example.com:80", ["api.example.com:443"], "DIRTY"),
        ("api.example.com:443", [], "DIRTY"),
    ],
)
def test_endpoint_allow_list(
    tmp_path: Path, parser_task: Path, endpoint: str, allow: list[str], verdict: str
) -> None:
    events = [UNRELATED[1], {"kind": "net", "endpoint": endpoint}]
    outcome = seal_events(tmp_path, "fix-parser", events, allow=allow)
    assert outcome.verdict == verdict
    expected = [{"event": 1, "class": "out_of_scope_endpoint"}] if verdict == "DIRTY" else []
    assert outcome.matches == expected
    assert outcome.record["scope"]["allow_endpoints"] == sorted({a.strip().lower() for a in allow})
    assert_verifies(outcome)


# ----------------------------------------------------------------- record holds no text


def test_the_record_holds_no_ground_truth_text(tmp_path: Path, parser_task: Path) -> None:
    events = [{"kind": "read", "path": "n.md", "content": f"copied: {EXPECTED}"}]
    outcome = seal_events(tmp_path, "fix-parser", events)
    assert outcome.verdict == "DIRTY"
    text = outcome.record_bytes.decode("utf-8").casefold()
    words = words_of(EXPECTED)
    assert EXPECTED.casefold() not in text
    for i in range(len(words) - 5):
        assert " ".join(words[i : i + 6]) not in text
    # ("parser" is part of the task id, which the record names on purpose.)
    for word in ("rejects", "trailing", "commas", "parseerror"):
        assert word not in text


# ----------------------------------------------------- many seals in one process agree
#
# Python documents that two objects with non-overlapping lifetimes may have the same id(), and
# CPython reuses a freed Truth's address for the next one often (but not always: it depends on
# the allocator's state). These tests make that reuse certain by giving every object one id.


def _same_id_for_everything(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_scan, "id", lambda obj: 4242, raising=False)


def test_sealing_tasks_one_after_another_detects_each_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    goldens, worktree = layout(tmp_path)
    answers = {
        "a": "alpha bravo charlie delta echo foxtrot golf hotel",
        "b": "zulu yankee xray whiskey victor uniform tango sierra",
        "c": "one two three four five six seven eight",
    }
    for task_id, answer in answers.items():
        write_golden(goldens, f"{task_id}.md", f'id: {task_id}\ninput: "go"\nexpected: "{answer}"')
    tasks = {t.id: t for t in iter_goldens(goldens)}
    journals = {
        task_id: journal_of(
            tmp_path / f"{task_id}.jsonl",
            [{"kind": "read", "path": "x.txt", "content": f"leak: {answer} end"}],
        )
        for task_id, answer in answers.items()
    }
    _same_id_for_everything(monkeypatch)
    verdicts = []
    for task_id in "abcab":
        record = build_record(tasks[task_id], goldens, journals[task_id], worktree, [], "r", KEY)
        verdicts.append((task_id, record["verdict"], len(record["matches"])))
    assert verdicts == [(t, "DIRTY", 1) for t in "abcab"]


def test_plaintext_matching_does_not_depend_on_earlier_truths(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    answers = [
        "alpha bravo charlie delta echo foxtrot golf hotel",
        "zulu yankee xray whiskey victor uniform tango sierra",
        "one two three four five six seven eight",
    ]
    _same_id_for_everything(monkeypatch)
    found = []
    for answer in answers:
        truth = build_truth(KEY, [answer])
        found.append(len(match_plain(truth, f"leak: {answer} end")))
        del truth
    # Each answer has 8 words: 3 shingles, all present in the text.
    assert found == [3, 3, 3]
