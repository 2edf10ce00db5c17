"""``assay import promptfoo`` over a corpus of promptfoo's own example configs
(``tests/data/promptfoo_corpus``, see its SOURCES.md), run as the command line runs it.

For every config of the corpus:

- the import does not crash: exit 0 (everything converted) or 1 with a one-line reason (a
  refusal naming the file and field, or the count of constructs listed as not converted);
- what it does not convert (its ``skipped:`` lines, or its refusal) equals the committed
  expectation ``tests/data/promptfoo_corpus/expected-skipped.json``: nothing is lost silently,
  and a change in what converts shows here as a diff;
- every suite it writes loads with assay's own loaders (the goldens with their defaults, and
  the candidates file).

For 12 of the configs, hand-written outputs go through ``assay gate`` and must get the verdict
promptfoo gives each test; the reason is cited next to each case, from promptfoo's
``src/assertions/*.ts`` (and ``src/util/transform.ts`` / ``src/evaluator.ts`` for transforms).

Regenerate the expectation (after a deliberate change to the importer) with one command:

    ASSAY_UPDATE_CORPUS=1 .venv/bin/python -m pytest tests/test_promptfoo_corpus.py -q

Every example folder is copied to a temporary folder first: nothing is written into tests/data
except, on regeneration, the expectation file.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from assay.goldens._loader import iter_goldens
from assay.models._candidates_file import load_candidates_file
from tests.helpers.cli import run_cli

CORPUS = Path(__file__).parent / "data" / "promptfoo_corpus"
EXPECTED = CORPUS / "expected-skipped.json"
UPDATE = os.environ.get("ASSAY_UPDATE_CORPUS") == "1"
TIMEOUT_S = 60.0
SKIPPED = "skipped: "
ERROR = "assay: error: "


def is_config(path: Path) -> bool:
    """A promptfoo config: a YAML mapping with prompts, providers or targets at its top (a
    tests file is a list, a defaultTest file has none of these keys)."""
    try:
        data = yaml.safe_load(path.read_text("utf-8"))
    except yaml.YAMLError:
        return False
    return isinstance(data, dict) and bool({"prompts", "providers", "targets"} & set(data))


def corpus_configs() -> list[str]:
    """Every config of the corpus, as its path inside the corpus folder."""
    found = (p for p in CORPUS.rglob("*") if p.suffix in (".yaml", ".yml") and is_config(p))
    return sorted(p.relative_to(CORPUS).as_posix() for p in found)


CONFIGS = corpus_configs()


@dataclass
class Imported:
    """What ``assay import promptfoo CONFIG -o OUT`` did, run in a copy of the example."""

    code: int
    stdout: str
    stderr: str
    out: Path
    skipped: list[str] = field(default_factory=list)
    refused: str | None = None

    def record(self) -> dict[str, Any]:
        """What the expectation file holds for the config."""
        if self.refused is not None:
            return {"exit": self.code, "refused": self.refused}
        return {"exit": self.code, "skipped": self.skipped}


def copy_example(config: str, into: Path) -> Path:
    """A copy of the config's folder; returns the copied config's path."""
    source = CORPUS / config
    target = into / "example"
    shutil.copytree(source.parent, target)
    return target / source.name


def import_config(config: str, into: Path, *extra: str) -> Imported:
    copied = copy_example(config, into)
    out = into / "out"
    args: list[str | os.PathLike[str]] = [
        "import",
        "promptfoo",
        copied.name,
        "--output",
        out,
        *extra,
    ]
    code, stdout, stderr = run_cli(args, copied.parent, TIMEOUT_S)
    # Paths of this run's folders never reach the expectation: it must hold on any machine.
    stdout, stderr = (t.replace(f"{into}{os.sep}", "") for t in (stdout, stderr))
    imported = Imported(code, stdout, stderr, out)
    imported.skipped = [x[len(SKIPPED) :] for x in stdout.splitlines() if x.startswith(SKIPPED)]
    if stderr.startswith(ERROR):
        imported.refused = stderr[len(ERROR) :].rstrip("\n")
    return imported


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Imported]:
    """Every config imported once (a few seconds in all); written as the expectation when
    ASSAY_UPDATE_CORPUS=1."""
    done = {c: import_config(c, tmp_path_factory.mktemp("corpus")) for c in CONFIGS}
    if UPDATE:
        text = json.dumps({c: i.record() for c, i in done.items()}, indent=2, ensure_ascii=False)
        partial = EXPECTED.with_suffix(".json.tmp")
        partial.write_text(text + "\n", encoding="utf-8")
        partial.replace(EXPECTED)
    return done


def expected_records() -> dict[str, Any]:
    return dict(json.loads(EXPECTED.read_text("utf-8")))


def test_the_corpus_is_large_and_the_expectation_covers_every_config(
    imported: dict[str, Imported],
) -> None:
    assert len(CONFIGS) >= 45
    # A config added without regenerating (or an expectation for one removed) fails here.
    assert sorted(expected_records()) == CONFIGS


@pytest.mark.parametrize("config", CONFIGS)
def test_the_import_exits_0_or_1_with_a_one_line_reason(
    config: str, imported: dict[str, Imported]
) -> None:
    run = imported[config]
    assert "Traceback" not in run.stderr, run.stderr
    assert run.code in (0, 1), run.stderr
    if run.code == 0:
        assert (run.stderr, run.skipped) == ("", [])
        return
    assert run.stderr.count("\n") == 1, run.stderr  # one line, whatever the reason
    if run.refused is None:
        count = len(run.skipped)
        assert count
        assert run.stderr == (
            f"{count} construct(s) not converted, listed above (--allow-partial to accept)\n"
        )


@pytest.mark.parametrize("config", CONFIGS)
def test_what_is_not_converted_is_the_committed_expectation(
    config: str, imported: dict[str, Imported]
) -> None:
    want = expected_records().get(config)
    got = imported[config].record()
    if got != want:
        diff = difflib.unified_diff(
            json.dumps(want, indent=2, ensure_ascii=False).splitlines(),
            json.dumps(got, indent=2, ensure_ascii=False).splitlines(),
            "expected-skipped.json",
            "this import",
            lineterm="",
        )
        regenerate = (
            "ASSAY_UPDATE_CORPUS=1 .venv/bin/python -m pytest tests/test_promptfoo_corpus.py"
        )
        pytest.fail(
            f"{config}: not what the expectation says\n"
            + "\n".join(diff)
            + (f"\n(if the change is deliberate: {regenerate})")
        )


@pytest.mark.parametrize("config", CONFIGS)
def test_every_suite_the_import_writes_loads(config: str, imported: dict[str, Imported]) -> None:
    run = imported[config]
    if run.refused is not None:
        # A refusal is checked before anything is written.
        assert not run.out.exists()
        return
    goldens = list(iter_goldens(run.out / "goldens"))
    assert goldens
    written = re.search(r"^goldens written: (\d+) in ", run.stdout, re.MULTILINE)
    assert written and int(written.group(1)) == len(goldens)
    candidates = load_candidates_file(run.out / "candidates.yaml")
    assert candidates.candidates


# -- promptfoo's verdicts on hand-written outputs ---------------------------------------------
#
# Each case: a corpus config, an output per test (by the golden id the import gives it: the
# config's stem and the test's number), and promptfoo's verdict on that test. The promptfoo
# files cited are those of github.com/promptfoo/promptfoo as stored at these commits:
# src/assertions/contains.ts e5c8e01, equals.ts 6a59dfe, json.ts f34dd6a, javascript.ts and
# python.ts e5c8e01, regex.ts 23b3665, index.ts (runAssertion) 600e37a, assertionsResult.ts
# 45aee37; src/util/transform.ts 454f14a, src/util/json.ts 76525ca; src/evaluator.ts applies
# provider.transform, then test.options.transform, to the output before runAssertions.
# A test passes in promptfoo when every assert passes (assertionsResult.ts
# AssertionsResult.testResult: pass = !failedReason; none of these tests sets a threshold).


@dataclass(frozen=True)
class Verdicts:
    config: str
    outputs: dict[str, Any]  # golden id -> the output (text, or a JSON value)
    passes: dict[str, bool]  # golden id -> promptfoo's verdict


VERDICTS = [
    # contains.ts handleContains: outputString.includes(String(value)), case-sensitive, so
    # "bonjour le monde" misses "Bonjour le monde"; handleIContains lower-cases both sides
    # (JavaScript's toLowerCase folds "Ó" to "ó", as Python's lower does).
    Verdicts(
        "getting-started/promptfooconfig.yaml",
        {
            "promptfooconfig-1": "bonjour le monde",
            "promptfooconfig-2": "¿DÓNDE ESTÁ LA BIBLIOTECA?",
        },
        {"promptfooconfig-1": False, "promptfooconfig-2": True},
    ),
    # contains.ts handleContainsAny: value.some((v) => outputString.includes(String(v))), case
    # sensitive: "Self-Attention" is not "self-attention", and no other listed word is there.
    Verdicts(
        "cerebras/promptfooconfig.yaml",
        {
            "promptfooconfig-1": "Entangled particles stay linked at any distance.",
            "promptfooconfig-2": "Transformers rely on Self-Attention layers.",
            "promptfooconfig-3": "Hawking radiation slowly carries it away.",
        },
        {"promptfooconfig-1": True, "promptfooconfig-2": False, "promptfooconfig-3": True},
    ),
    # json.ts handleContainsJson: every JSON object found in the text (util/json.ts
    # extractJsonObjects: from each '{', the shortest prefix JSON.parse accepts) is
    # tried against the schema and the assert passes at the first that validates; test 1's text
    # holds one object for each of its two schemas, test 2's only the get_weather one.
    Verdicts(
        "google-vertex/promptfooconfig.gemini.yaml",
        {
            "promptfooconfig.gemini-1": (
                'Calling {"functionCall": {"name": "get_weather", "args": {"location": "San '
                'Francisco"}}} then {"functionCall": {"name": "search_places", "args": '
                '{"query": "Italian food", "type": "restaurant"}}}'
            ),
            "promptfooconfig.gemini-2": (
                '{"functionCall": {"name": "get_weather", "args": {"location": "Boulder"}}}'
            ),
        },
        {"promptfooconfig.gemini-1": True, "promptfooconfig.gemini-2": False},
    ),
    # index.ts runAssertion: an assert's own `transform` runs on the output before its handler
    # (util/transform.ts getInlineTransformFunction: one line is `return <code>`); then
    # equals.ts handleEquals compares String(value) === outputString, and handleContains is
    # case-sensitive ("ai" is not "AI"); json.ts handleIsJson: JSON.parse succeeds.
    Verdicts(
        "google-vertex/promptfooconfig.response-schema.yaml",
        {
            "promptfooconfig.response-schema-1": '{"tweet": "Bananas are great"}',
            "promptfooconfig.response-schema-2": '{"tweet": "ai will change everything"}',
            "promptfooconfig.response-schema-3": '{"tweet": "Act now"}',
        },
        {
            "promptfooconfig.response-schema-1": True,
            "promptfooconfig.response-schema-2": False,
            "promptfooconfig.response-schema-3": True,
        },
    ),
    # javascript.ts handleJavascript: several lines are a function body; the result must be a
    # boolean, a number or a GradingResult (validateResult), else it throws and the assert
    # fails. Test 2's age is the string "28" (=== 28 is false); test 3's code returns
    # parsed.location, the string "London": no boolean, so promptfoo fails it however right
    # the JSON is.
    Verdicts(
        "mistral/promptfooconfig.json-mode.yaml",
        {
            "promptfooconfig.json-mode-1": json.dumps(
                {
                    "name": "John Smith",
                    "age": 35,
                    "occupation": "software engineer",
                    "location": "San Francisco",
                }
            ),
            "promptfooconfig.json-mode-2": json.dumps(
                {
                    "name": "Maria Garcia",
                    "age": "28",
                    "occupation": "data scientist",
                    "location": "New York City",
                }
            ),
            "promptfooconfig.json-mode-3": json.dumps(
                {
                    "name": "Ahmed Hassan",
                    "age": 42,
                    "occupation": "cardiologist",
                    "location": "London",
                }
            ),
        },
        {
            "promptfooconfig.json-mode-1": True,
            "promptfooconfig.json-mode-2": False,
            "promptfooconfig.json-mode-3": False,
        },
    ),
    # index.ts runAssertion: a file://x.py value runs runPython(file, functionName ||
    # 'get_assert', [output, context]); python.ts handlePython returns an object result as it
    # is (no threshold set). assert.py always returns {"pass": True, "score": 0.75, ...}, its
    # componentResults notwithstanding: every test passes, bananas or not.
    Verdicts(
        "python-assert-external/promptfooconfig.yaml",
        {
            "promptfooconfig-1": "Lemons, bananas, corn.",
            "promptfooconfig-2": "Avocado, kiwi, spinach.",
            "promptfooconfig-4": "Durian, noni, ginkgo.",
        },
        {"promptfooconfig-1": True, "promptfooconfig-2": True, "promptfooconfig-4": True},
    ),
    # equals.ts handleEquals: String(value) === outputString, so a trailing newline fails;
    # contains.ts handleIContains; json.ts handleIsJson. (Tests 4 and 5 hold a model-graded
    # assert, not compared.)
    Verdicts(
        "simple-test/promptfooconfig.yaml",
        {
            "promptfooconfig-1": "Yarr\n",
            "promptfooconfig-2": "Where be the GRUB, matey?",
            "promptfooconfig-3": '{"life": "short"}',
        },
        {"promptfooconfig-1": False, "promptfooconfig-2": True, "promptfooconfig-3": True},
    ),
    # A CSV __expected cell "icontains:faim" is contains.ts handleIContains.
    Verdicts(
        "simple-csv/promptfooconfig.yaml",
        {
            "promptfooconfig-1": "BONJOUR le monde",
            "promptfooconfig-2": "J'ai soif",
            "promptfooconfig-3": "Ahoy, world!",
            "promptfooconfig-4": "I be wantin' me Grub",
        },
        {
            "promptfooconfig-1": True,
            "promptfooconfig-2": False,
            "promptfooconfig-3": True,
            "promptfooconfig-4": True,
        },
    ),
    # equals.ts handleEquals: exact, so the trailing space of test 2 fails it.
    Verdicts(
        "jsonl-test-cases/promptfooconfig.yaml",
        {
            "promptfooconfig-1": "Translate the following text to French: Hello, world!",
            "promptfooconfig-2": "Translate the following text to Spanish: Hello, world! ",
        },
        {"promptfooconfig-1": True, "promptfooconfig-2": False},
    ),
    # equals.ts handleEquals; contains.ts handleContains (case-sensitive: "Quick" is not
    # "quick"); handleIContains; regex.ts handleRegex: new RegExp(value).test(output), the TLD
    # is required; javascript.ts: a one-line value is `return <expr>`, boolean result;
    # python.ts handlePython: one line is `return <expr>`, True passes; json.ts handleIsJson.
    # Test 8: "Test 1" is 6 characters, so `output.length > 10` fails it.
    Verdicts(
        "echo-1000-tests/simple-example.yaml",
        {
            "simple-example-1": "Hello, World!",
            "simple-example-2": "The Quick brown fox",
            "simple-example-3": "HELLO WORLD",
            "simple-example-4": "user@example",
            "simple-example-5": "testing123",
            "simple-example-6": "UPPERCASE",
            "simple-example-7": '{"key": "value"}',
            "simple-example-8": "Test 1",
        },
        {
            "simple-example-1": True,
            "simple-example-2": False,
            "simple-example-3": True,
            "simple-example-4": False,
            "simple-example-5": True,
            "simple-example-6": True,
            "simple-example-7": True,
            "simple-example-8": False,
        },
    ),
    # src/evaluator.ts: the test's options.transform (JSON.parse(output)) runs before
    # runAssertions, so test 2's asserts see an object: json.ts handleIsJson parses
    # coerceString(object) and validates the schema; javascript.ts reads output.color; and the
    # contains-any's own transform (index.ts runAssertion) takes output.countries of that
    # object, whose text ["Brazil","Paraguay"] holds none of the four countries: test 2 fails.
    # Test 1 (no transform): JSON.parse in the code, both conditions hold.
    Verdicts(
        "eval-json-output/promptfooconfig.yaml",
        {
            "promptfooconfig-1": '{"color": "yellow", "countries": ["Ecuador", "Costa Rica"]}',
            "promptfooconfig-2": '{"color": "purple", "countries": ["Brazil", "Paraguay"]}',
        },
        {"promptfooconfig-1": True, "promptfooconfig-2": False},
    ),
    # defaultTest's asserts run on every test. A JSON value output (what promptfoo's provider
    # gives for a json_schema response_format): json.ts handleIsJson parses coerceString(output);
    # javascript.ts passes `output` itself, so `typeof output === 'object'` holds;
    # contains.ts handleContainsAny tests String(v) of each value, -3.625 as "-3.625". Test 2's
    # output is text that is no JSON: is-json and the typeof check fail.
    Verdicts(
        "structured-outputs-config/promptfooconfig.yaml",
        {
            "promptfooconfig-1": {"final_answer": "x = -29/8"},
            "promptfooconfig-2": "x = 24.01",
        },
        {"promptfooconfig-1": True, "promptfooconfig-2": False},
    ),
]


@pytest.mark.parametrize("case", VERDICTS, ids=lambda c: c.config)
def test_hand_written_outputs_get_promptfoos_verdicts(case: Verdicts, tmp_path: Path) -> None:
    run = import_config(case.config, tmp_path, "--allow-partial")
    assert run.code == 0, run.stderr
    (run.out / "outputs.json").write_text(json.dumps(case.outputs), encoding="utf-8")
    # Run in the written folder: script files the goldens name were copied there.
    args = ["gate", "goldens", "--outputs", "outputs.json", "--json", "--no-save"]
    code, stdout, stderr = run_cli(args, run.out, TIMEOUT_S)
    assert code == 0, stderr
    try:
        document = json.loads(stdout)
    except ValueError:
        pytest.fail(f"`assay gate --json` printed more than its JSON document: {stdout[:300]!r}")
    results = {r["id"]: r for r in document["results"] if r["id"] in case.outputs}
    assert sorted(results) == sorted(case.outputs)
    verdicts = {gid: r["passed"] for gid, r in results.items()}
    why = {gid: (r["status"], [c["reason"] for c in r["checks"]]) for gid, r in results.items()}
    assert verdicts == case.passes, why
