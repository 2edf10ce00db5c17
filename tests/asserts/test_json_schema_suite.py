"""The official JSON-Schema-Test-Suite, draft 2020-12, through the json-schema op.

The suite is vendored in ``tests/data/json-schema-test-suite`` (see its ORIGIN.md). Every case of
every file in ``draft2020-12/`` is one test: the check must pass exactly when the case is valid.
A missing file or case fails :func:`test_suite_is_complete` (and an empty suite fails collection:
``empty_parameter_set_mark = fail_at_collect``); nothing here ever skips. Documents the suite
references at ``http://localhost:1234/`` come from its ``remotes/`` folder through a
``referencing`` registry, so no test touches the network.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from assay.asserts import CheckContext, OutputView, parse_assert, run_assert

SUITE = Path(__file__).resolve().parents[1] / "data" / "json-schema-test-suite"
CASES_DIR = SUITE / "draft2020-12"
REMOTES = SUITE / "remotes"
REMOTE_BASE = "http://localhost:1234/"
EXPECTED_CASES = 1299
EXPECTED_FILES = 46
EXPECTED_REMOTES = 28


def _load_cases() -> list[Any]:
    params = []
    for path in sorted(CASES_DIR.glob("*.json")):
        groups = json.loads(path.read_text(encoding="utf-8"))
        for group_index, group in enumerate(groups):
            for case_index, case in enumerate(group["tests"]):
                params.append(
                    pytest.param(
                        group["schema"],
                        case["data"],
                        case["valid"],
                        f"{group['description']} / {case['description']}",
                        id=f"{path.stem}-{group_index}-{case_index}",
                    )
                )
    return params


CASES = _load_cases()


@cache
def registry() -> Registry:
    reg: Registry = Registry()
    for path in sorted(REMOTES.rglob("*.json")):
        uri = REMOTE_BASE + path.relative_to(REMOTES).as_posix()
        contents = json.loads(path.read_text(encoding="utf-8"))
        resource = Resource.from_contents(contents, default_specification=DRAFT202012)
        reg = reg.with_resource(uri, resource)
    return reg


def test_suite_is_complete() -> None:
    assert CASES_DIR.is_dir(), f"JSON-Schema-Test-Suite not found at {SUITE}"
    assert (SUITE / "LICENSE").is_file(), "the suite's LICENSE must stay beside its data"
    files = sorted(CASES_DIR.glob("*.json"))
    assert len(files) == EXPECTED_FILES, f"{len(files)} case files in {CASES_DIR}"
    assert len(CASES) == EXPECTED_CASES, f"{len(CASES)} cases in {CASES_DIR}"
    assert len({p.id for p in CASES}) == EXPECTED_CASES
    assert (REMOTES / "draft2020-12").is_dir()
    remotes = sorted(REMOTES.rglob("*.json"))
    assert len(remotes) == EXPECTED_REMOTES, f"{len(remotes)} remote documents in {REMOTES}"


@pytest.mark.parametrize(("schema", "data", "valid", "description"), CASES)
def test_json_schema_suite_case(schema: Any, data: Any, valid: bool, description: str) -> None:
    spec = parse_assert({"op": "json-schema", "value": schema})
    ctx = CheckContext(schema_registry=registry())
    result = run_assert(spec, OutputView(data, text=False), ctx)
    assert result.passed is valid, f"{description}: {result.reason}"
    if valid:
        assert result.reason is None
    else:
        assert result.reason
