"""``--shard I/N``: a stable hash of the id splits a suite into N disjoint, balanced parts whose
union is the whole; each shard's ``--check`` gates its own goldens only (the others are not
"removed"), and a regression fails exactly the shard that holds it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from assay.gate._shards import Shard, parse_shard
from tests.helpers.cli import run_cli
from tests.helpers.goldens import ORIGIN, write_golden, write_json

IDS = [f"g{i:03d}" for i in range(30)]


def test_parse_shard_reads_i_of_n_and_refuses_the_rest() -> None:
    assert parse_shard("2/3") == Shard(2, 3)
    assert parse_shard(" 1 / 1 ") == Shard(1, 1)
    for bad in ("0/3", "4/3", "1/0", "3", "a/b", "-1/3", "1/3/4", ""):
        with pytest.raises(ValueError):
            parse_shard(bad)


def test_shards_are_disjoint_cover_everything_and_are_balanced() -> None:
    ids = [f"golden-{i}" for i in range(3000)]
    shards = [set(Shard(i, 3).select(_Item(x) for x in ids)) for i in (1, 2, 3)]
    held = [{item.id for item in s} for s in shards]
    assert set().union(*held) == set(ids)
    assert sum(len(h) for h in held) == len(ids)  # disjoint
    assert all(abs(len(h) - 1000) < 100 for h in held), [len(h) for h in held]


def test_a_goldens_shard_depends_on_its_id_and_n_only() -> None:
    # Fixed values: the same on every machine and Python (no salted hash()).
    assert [i for i in (1, 2, 3) if Shard(i, 3).holds("g000")] == [_known_shard("g000")]
    assert Shard(1, 1).holds("anything")


def _known_shard(item_id: str) -> int:
    import hashlib

    return int.from_bytes(hashlib.sha256(item_id.encode()).digest()[:8], "big") % 3 + 1


class _Item:
    def __init__(self, item_id: str) -> None:
        self.id = item_id

    def __hash__(self) -> int:
        return hash(self.id)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Item) and other.id == self.id


def _project(root: Path) -> None:
    for golden_id in IDS:
        write_golden(
            root / "goldens",
            f"{golden_id}.md",
            f"id: {golden_id}\ninput: q\nasserts: ['contains:ok']\n",
            ORIGIN,
        )
    write_json(root / "good.json", {g: "ok" for g in IDS})


def _run(root: Path, *args: str) -> tuple[int, dict[str, Any]]:
    code, out, err = run_cli(["gate", "goldens", "--json", *args], root)
    assert "Traceback" not in err
    return code, json.loads(out) if out else {}


def test_three_shards_check_what_the_whole_run_checks(tmp_path: Path) -> None:
    _project(tmp_path)
    code, _ = _run(tmp_path, "--outputs", "good.json", "--write-baseline")
    assert code == 0
    bad = {g: "ok" for g in IDS}
    bad["g007"] = "nope"
    write_json(tmp_path / "bad.json", bad)
    whole_code, whole = _run(tmp_path, "--outputs", "bad.json", "--check")
    assert whole_code == 2
    parts = [
        _run(tmp_path, "--outputs", "bad.json", "--check", "--shard", f"{i}/3") for i in (1, 2, 3)
    ]
    results = sorted((r["id"], r["status"], r["score"]) for _, doc in parts for r in doc["results"])
    assert results == sorted((r["id"], r["status"], r["score"]) for r in whole["results"])
    # The regression fails the one shard that holds it; no shard calls the others "removed".
    codes = [code for code, _ in parts]
    holder = next(i for i in (1, 2, 3) if Shard(i, 3).holds("g007"))
    assert codes == [2 if i == holder else 0 for i in (1, 2, 3)]
    regressed = [r["id"] for _, doc in parts for r in doc.get("regressions", [])]
    assert regressed == [r["id"] for r in whole["regressions"]] == ["g007"]
    for i, (_, doc) in enumerate(parts, start=1):
        assert "notes" not in doc["summary"]  # the other shards' outputs are expected
        assert doc["summary"]["shard"] == f"{i}/3"
    assert "shard" not in whole["summary"]


def test_a_shard_cannot_write_the_baseline_and_a_bad_spec_is_a_usage_error(
    tmp_path: Path,
) -> None:
    _project(tmp_path)
    code, _, err = run_cli(
        ["gate", "goldens", "--outputs", "good.json", "--write-baseline", "--shard", "1/2"],
        tmp_path,
    )
    assert code == 1 and "a baseline is written from the whole suite" in err
    code, _, err = run_cli(
        ["gate", "goldens", "--outputs", "good.json", "--shard", "3/2"], tmp_path
    )
    assert code == 1 and "--shard" in err


def test_an_empty_shard_is_a_valid_empty_part_and_the_merge_is_the_whole_run(
    tmp_path: Path,
) -> None:
    # A small suite in the README's three-job CI recipe leaves a shard empty: that job must
    # pass (exit 0, no min_pass_rate over nothing) and its part must merge.
    ids = ["a", "b"]
    for golden_id in ids:
        write_golden(
            tmp_path / "goldens",
            f"{golden_id}.md",
            f"id: {golden_id}\ninput: q\nasserts: ['contains:ok']\n",
            ORIGIN,
        )
    write_json(tmp_path / "o.json", {"a": "ok", "b": "ok"})
    (tmp_path / "assay.toml").write_text("[gate]\nmin_pass_rate = 0.9\n", encoding="utf-8")

    def holds_none(i: int, n: int) -> bool:
        return not any(Shard(i, n).holds(g) for g in ids)

    n = next(n for n in range(2, 20) if any(holds_none(i, n) for i in range(1, n + 1)))
    assert run_cli(["gate", "--outputs", "o.json", "-w", "--no-save"], tmp_path)[0] == 0
    check = ["gate", "--outputs", "o.json", "--check", "--json"]
    names = []
    for i in range(1, n + 1):
        code, out, err = run_cli([*check, "--shard", f"{i}/{n}"], tmp_path)
        assert code == 0, err
        part = json.loads(out)
        names.append(f"part-{i}.json")
        (tmp_path / names[-1]).write_text(out, encoding="utf-8")
        if holds_none(i, n):
            empty = part
    assert empty["results"] == [] and empty["summary"]["total"] == 0
    assert empty["partial"]["suite_goldens"] == 2 and empty["summary"]["gate"] == "passed"
    code, merged, err = run_cli(["merge", *names, "--json"], tmp_path)
    assert code == 0, err
    code, whole, err = run_cli([*check, "--no-save"], tmp_path)
    assert code == 0, err
    drop = ("created_at", "run_id")
    assert {k: v for k, v in json.loads(merged).items() if k not in drop} == {
        k: v for k, v in json.loads(whole).items() if k not in drop
    }


def test_a_suite_of_nothing_is_still_one_clear_error(tmp_path: Path) -> None:
    (tmp_path / "goldens").mkdir()
    write_golden(tmp_path / "goldens", "a.md", "id: a\ninput: q\ntier: smoke\n", ORIGIN)
    write_json(tmp_path / "o.json", {"a": "ok"})
    args = ["gate", "goldens", "--outputs", "o.json", "-t", "stretch", "--shard", "1/2"]
    code, out, err = run_cli(args, tmp_path)
    assert code == 1 and out == ""
    assert "holds no goldens of tier stretch" in err and "field '--shard'" in err


def test_agent_telemetry_is_scored_per_shard(tmp_path: Path) -> None:
    tasks = [f"t{i}" for i in range(6)]
    for task in tasks:
        write_golden(
            tmp_path / "goldens" / "smoke", f"{task}.md", f"id: {task}\ninput: q\n", ORIGIN
        )
    runs = tmp_path / "tel"
    runs.mkdir()
    for task in tasks:
        write_json(runs / f"{task}.json", {"task_id": task, "duration_s": 1})
    seen = []
    for i in (1, 2):
        code, out, err = run_cli(
            ["bench", "goldens", "--telemetry", "tel", "--no-save", "--json", "--shard", f"{i}/2"],
            tmp_path,
        )
        assert code == 0, err
        seen += [r["id"] for r in json.loads(out)["results"]]
    assert sorted(seen) == tasks
