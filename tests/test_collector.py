"""The cyclic collector is paused only around objects that form no cycles, and always left as
it was found: a library caller's (or a test's) collector keeps working after a run."""

from __future__ import annotations

import gc
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from assay._collector import settled_objects
from tests.helpers.cli import run_cli


@pytest.fixture(autouse=True)
def collector_restored() -> Iterator[None]:
    enabled, threshold = gc.isenabled(), gc.get_threshold()
    yield None
    gc.set_threshold(*threshold)
    if enabled:
        gc.enable()
    else:
        gc.disable()


def test_objects_made_while_settled_are_filed_in_the_oldest_generation() -> None:
    gc.enable()
    with settled_objects():
        assert not gc.isenabled()
        made = [[i] for i in range(1000)]
    assert gc.isenabled()
    oldest = {id(o) for o in gc.get_objects(generation=2)}
    assert all(id(o) in oldest for o in made)


def test_it_leaves_a_paused_collector_paused_and_does_nothing_inactive() -> None:
    gc.disable()
    with settled_objects():
        pass
    assert not gc.isenabled()
    gc.enable()
    with settled_objects(active=False):
        assert gc.isenabled()
    assert gc.isenabled()


def test_it_never_undoes_a_programs_own_freeze() -> None:
    kept = [object() for _ in range(10)]
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with settled_objects():
            pass
        assert gc.get_freeze_count() >= frozen
    finally:
        gc.unfreeze()
    del kept


def test_a_gate_run_in_process_leaves_the_collector_as_it_found_it(tmp_path: Path) -> None:
    gc.enable()
    gc.set_threshold(700, 10, 10)
    (tmp_path / "goldens").mkdir()
    (tmp_path / "goldens" / "g.jsonl").write_text(
        "".join(json.dumps({"id": f"g{i}", "asserts": ["contains:a"]}) + "\n" for i in range(50)),
        encoding="utf-8",
    )
    (tmp_path / "out.json").write_text(json.dumps({f"g{i}": "a" for i in range(50)}), "utf-8")
    code, _, err = run_cli(["gate", "goldens", "--outputs", "out.json"], tmp_path)
    assert code == 0, err
    assert gc.isenabled()
    assert gc.get_threshold() == (700, 10, 10)
