"""promptfoo's CSV test files, read as promptfoo reads them (its ``src/csv.ts``:
``testCaseFromCsvRow`` and ``assertionFromString``), and its CSV prompt files
(``src/prompts/processors/csv.ts``).

What promptfoo does with a row, and so what this does:

- header names are trimmed; ``__expected`` / ``__expectedN`` cells are trimmed, and a blank one
  is no assert; each becomes an assert by ``assertionFromString``;
- ``__description``, ``__threshold`` (kept only when a non-zero number, as promptfoo's
  ``...(threshold ? {threshold} : {})``), ``__metric`` (set on every assert of the row),
  ``__metadata:KEY`` / ``__metadata:KEY[]`` (a list split on unescaped commas),
  ``__config:__expectedN:threshold``; ``__prefix``, ``__suffix`` and ``__providerOutput`` are
  kept as test options, which the converter lists;
- every other column, ``__``-prefixed or not, is a var.
"""

from __future__ import annotations

import csv
import io
import re
from typing import Any, Final

from assay.errors import ConfigError

# promptfoo's BaseAssertionTypesSchema (src/types/index.ts): the only types its CSV regex reads.
ASSERTION_TYPES: Final = frozenset(
    "answer-relevance bleu classifier contains contains-all contains-any contains-html"
    " contains-json contains-sql contains-xml context-faithfulness context-recall"
    " context-relevance conversation-relevance cost equals factuality finish-reason g-eval gleu"
    " guardrails icontains icontains-all icontains-any is-html is-json is-refusal is-sql"
    " is-valid-function-call is-valid-openai-function-call is-valid-openai-tools-call is-xml"
    " javascript latency levenshtein llm-rubric pi meteor model-graded-closedqa"
    " model-graded-factuality moderation perplexity perplexity-score python regex rouge-n ruby"
    " similar similar:cosine similar:dot similar:euclidean starts-with tool-call-f1 skill-used"
    " trajectory:goal-success trajectory:tool-args-match trajectory:step-count"
    " trajectory:tool-sequence trajectory:tool-used trace-error-spans trace-span-count"
    " trace-span-duration search-rubric webhook word-count".split()
)
# Longest first, as a regex alternation must be to read `contains-any` as itself.
_TYPES_PATTERN: Final = "|".join(
    re.escape(t) for t in sorted(ASSERTION_TYPES, key=lambda t: (-len(t), t))
)
_ASSERT: Final = re.compile(rf"^(not-)?({_TYPES_PATTERN})(?:\((\d+(?:\.\d+)?)\))?(?::([\s\S]*))?$")
_ARRAY_TYPES: Final = frozenset({"contains-all", "contains-any", "icontains-all", "icontains-any"})
_RAW_TYPES: Final = frozenset({"contains-json", "is-json"})
_THRESHOLD_TYPES: Final = frozenset(
    "answer-relevance classifier context-faithfulness context-recall context-relevance cost"
    " latency levenshtein perplexity-score perplexity rouge-n similar starts-with".split()
)
_JS_PREFIXES: Final = ("javascript:", "fn:", "eval:")
_JS_SUFFIXES: Final = (".js", ".cjs", ".mjs", ".ts", ".cts", ".mts")


def _is_js_file(ref: str) -> bool:
    path = ref.split(":", 1)[0] if re.search(r"\.[cm]?[jt]s:", ref) else ref
    return path.lower().endswith(_JS_SUFFIXES)


def assertion_from_string(expected: str) -> dict[str, Any]:
    """promptfoo's ``assertionFromString`` of an already trimmed cell.

    A ``file://`` script keeps its ``file://`` prefix here: it is the reference assay's
    javascript / python ops take (promptfoo strips it and loads the file all the same)."""
    for prefix in _JS_PREFIXES:
        if expected.startswith(prefix):
            return {"type": "javascript", "value": expected[len(prefix) :].strip()}
    if expected.startswith("file://") and _is_js_file(expected[len("file://") :]):
        return {"type": "javascript", "value": expected.strip()}
    for prefix in ("grade:", "llm-rubric:"):
        if expected.startswith(prefix):
            return {"type": "llm-rubric", "value": expected[len(prefix) :]}
    if expected.startswith("python:"):
        return {"type": "python", "value": expected[len("python:") :].strip()}
    if expected.startswith("file://") and (expected.endswith(".py") or ".py:" in expected):
        return {"type": "python", "value": expected.strip()}
    match = _ASSERT.match(expected)
    if match is None:
        return {"type": "equals", "value": expected}  # promptfoo's fallback
    negated, kind, threshold_text, value = match.groups()
    out: dict[str, Any] = {"type": (negated or "") + kind}
    if kind in _ARRAY_TYPES:
        if value is not None:
            out["value"] = [item.strip() for item in value.split(",")] if value else value
    elif kind in _RAW_TYPES:
        if value is not None:
            out["value"] = value
    else:
        if value is not None:
            out["value"] = value.strip()
        # starts-with gets one too in promptfoo, which its check never reads: left out.
        if kind in _THRESHOLD_TYPES and kind != "starts-with":
            threshold = float(threshold_text) if threshold_text else None
            out["threshold"] = threshold or (0.8 if kind == "similar" else 0.75)
    return out


def csv_tests(text: str, source: str) -> list[dict[str, Any]]:
    """Each row of a promptfoo CSV test file as a promptfoo test record."""
    reader = csv.reader(io.StringIO(text.lstrip("\ufeff")))
    header = next(reader, None)
    if not header:
        raise ConfigError("the CSV file has no header row", source=source)
    names = [name.strip() for name in header]
    tests = []
    for row in reader:
        if not row:
            continue
        if len(row) > len(names):
            raise ConfigError("a row has more cells than the header", source=source)
        cells = dict(zip(names, [*row, *[""] * (len(names) - len(row))], strict=True))
        tests.append(_row_test(cells, source))
    return tests


def _row_test(cells: dict[str, str], source: str) -> dict[str, Any]:
    test: dict[str, Any] = {"vars": {}, "assert": []}
    options: dict[str, str] = {}
    metadata: dict[str, Any] = {}
    configs: dict[int, float] = {}
    metric: str | None = None
    for column, cell in cells.items():
        if column.startswith("__expected"):
            if cell.strip():
                test["assert"].append(assertion_from_string(cell.strip()))
        elif column == "__description":
            test["description"] = cell
        elif column == "__threshold":
            threshold = _number(cell)
            if threshold:
                test["threshold"] = threshold
        elif column == "__metric":
            metric = cell
        elif column in ("__prefix", "__suffix", "__providerOutput"):
            options[column] = cell
        elif column.startswith("__metadata:"):
            _metadata(column[len("__metadata:") :], cell, metadata)
        elif column.startswith("__config:"):
            configs.update(_config_column(column, cell, source))
        elif column != "__metadata":
            test["vars"][column] = cell
    for index, assertion in enumerate(test["assert"]):
        if metric is not None:
            assertion["metric"] = metric
        if index in configs:
            assertion["threshold"] = configs[index]
    if options:
        test["options"] = options
    if metadata:
        test["metadata"] = metadata
    return test


def _number(cell: str) -> float | None:
    """JavaScript's ``Number.parseFloat``: the number a text starts with, None when none."""
    match = re.match(r"\s*([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)", cell)
    return float(match.group(1)) if match else None


def _metadata(key: str, cell: str, metadata: dict[str, Any]) -> None:
    if not cell.strip():
        return
    if key.endswith("[]"):
        items = re.split(r"(?<!\\),", cell)
        metadata[key[:-2]] = [item.strip().replace("\\,", ",", 1) for item in items]
    else:
        metadata[key] = cell


def _config_column(column: str, cell: str, source: str) -> dict[int, float]:
    parts = column[len("__config:") :].split(":")
    if len(parts) != 2:
        return {}  # promptfoo warns and ignores the column
    expected, key = parts
    match = re.fullmatch(r"__expected(\d*)", expected)
    if match is None or (match.group(1) and int(match.group(1)) < 1):
        raise ConfigError(f"{column}: must name __expected or __expectedN", source=source)
    if key != "threshold":
        raise ConfigError(f"{column}: the only __config key is threshold", source=source)
    value = _number(cell)
    if value is None:
        raise ConfigError(f"{column}: {cell!r} is not a number", source=source)
    return {int(match.group(1) or 1) - 1: value}


def csv_prompts(text: str) -> list[str]:
    """promptfoo's ``processCsvPrompts`` (src/prompts/processors/csv.ts): text without a comma
    is one prompt a line (a first line ``prompt`` is its header); else a CSV file whose
    ``prompt`` column (cells trimmed) holds one prompt a row."""
    if "," not in text:
        rows = [line for line in re.split(r"\r?\n", text) if line.strip()]
        return rows[1:] if rows and rows[0].strip().lower() == "prompt" else rows
    reader = csv.DictReader(io.StringIO(text.lstrip("\ufeff")))
    return [
        (row.get("prompt") or "").strip() for row in reader if (row.get("prompt") or "").strip()
    ]
