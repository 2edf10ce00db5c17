"""``assay merge``: a run cut into shards and merged back is the unsharded run, exactly.

For a gate on given outputs, a live suite (python provider, repeats, adaptive repeats) and an
agent run: the same results, aggregates, regressions and exit code, and a baseline written from
the merged shards is byte-identical to the whole run's. Shards that are not one run's are
refused with one line naming the file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from assay.gate._shards import Shard
from tests.helpers.cli import run_cli
from tests.helpers.goldens import ORIGIN, write_golden, write_json

IDS = [f"g{i:03d}" for i in range(30)]
SHARDS = ("1/3", "2/3", "3/3")


def _suite(root: Path, ids: list[str] = IDS) -> None:
    for golden_id in ids:
        strict = "gate: strict\n" if golden_id == "g004" else ""
        write_golden(
            root / "goldens",
            f"{golden_id}.md",
            f"id: {golden_id}\ninput: {golden_id}\nasserts: ['contains:ok']\n{strict}",
            ORIGIN,
        )


def _cli(root: Path, *args: str) -> tuple[int, str, str]:
    code, out, err = run_cli(list(args), root)
    assert "Traceback" not in err, err
    return code, out, err


def _json(root: Path, *args: str) -> tuple[int, dict[str, Any]]:
    code, out, err = _cli(root, *args, "--json")
    assert out, err
    return code, json.loads(out)


def _shards(root: Path, *args: str) -> list[str]:
    """Run each shard with ``args``; their documents are written to shard-I.json."""
    names = []
    for spec in SHARDS:
        code, out, err = _cli(root, *args, "--shard", spec, "--json")
        assert code in (0, 1, 2), err  # 1: a shard whose errors exceed max_error_rate
        name = f"shard-{spec[0]}.json"
        (root / name).write_text(out, encoding="utf-8")
        names.append(name)
    return names


def _merge(root: Path, names: list[str], *args: str) -> tuple[int, dict[str, Any]]:
    return _json(root, "merge", *names, *args)


def test_a_checked_gate_merged_from_three_shards_is_the_whole_run(tmp_path: Path) -> None:
    _suite(tmp_path)
    write_json(tmp_path / "good.json", {g: "ok" for g in IDS})
    assert _cli(tmp_path, "gate", "goldens", "--outputs", "good.json", "--write-baseline")[0] == 0
    bad: dict[str, Any] = {g: "ok" for g in IDS if g not in ("g011", "g020")}
    bad["g007"] = "nope"  # a regression
    bad["g004"] = "no"  # a strict golden's regression
    bad["stray-1"] = "ok"  # outputs naming no golden: a note
    bad["stray-2"] = "ok"
    write_json(tmp_path / "bad.json", bad)
    whole_code, whole = _json(tmp_path, "gate", "goldens", "--outputs", "bad.json", "--check")
    assert whole_code == 2
    assert {r["id"] for r in whole["regressions"]} >= {"g004", "g007"}
    names = _shards(tmp_path, "gate", "goldens", "--outputs", "bad.json", "--check")
    code, merged = _merge(tmp_path, names)
    assert code == whole_code
    assert merged == whole  # results, order, aggregates, regressions, notes: all of it
    assert "partial" not in merged and "shard" not in merged["summary"]
    # The shards' order on the command line does not matter.
    assert _merge(tmp_path, list(reversed(names)))[1] == whole


def test_a_passing_check_merges_to_exit_0(tmp_path: Path) -> None:
    _suite(tmp_path)
    write_json(tmp_path / "good.json", {g: "ok" for g in IDS})
    assert _cli(tmp_path, "gate", "goldens", "--outputs", "good.json", "--write-baseline")[0] == 0
    whole_code, whole = _json(tmp_path, "gate", "goldens", "--outputs", "good.json", "--check")
    names = _shards(tmp_path, "gate", "goldens", "--outputs", "good.json", "--check")
    code, merged = _merge(tmp_path, names)
    assert (code, whole_code) == (0, 0)
    assert merged == whole


def test_a_baseline_written_from_merged_shards_is_byte_identical(tmp_path: Path) -> None:
    _suite(tmp_path)
    outputs = {g: ("ok" if i % 4 else "nope") for i, g in enumerate(IDS)}
    write_json(tmp_path / "o.json", outputs)
    code, _, err = _cli(
        tmp_path,
        "gate",
        "goldens",
        "--outputs",
        "o.json",
        "--write-baseline",
        "--baseline",
        "w.json",
    )
    assert code == 0, err
    names = _shards(tmp_path, "gate", "goldens", "--outputs", "o.json")
    code, _, err = _cli(
        tmp_path, "merge", *names, "--write-baseline", "--baseline", "m.json", "--format", "text"
    )
    assert code == 0, err
    assert (tmp_path / "m.json").read_bytes() == (tmp_path / "w.json").read_bytes()


def test_every_format_renders_a_merged_run(tmp_path: Path) -> None:
    _suite(tmp_path)
    write_json(tmp_path / "o.json", {g: "ok" for g in IDS})
    names = _shards(tmp_path, "gate", "goldens", "--outputs", "o.json")
    for fmt, marker in (("text", "30 goldens"), ("markdown", "|"), ("junit", "<testsuites")):
        code, out, err = _cli(tmp_path, "merge", *names, "--format", fmt)
        assert code == 0, err
        assert marker in out
    code, _, err = _cli(tmp_path, "merge", *names, "--format", "html", "--output", "r.html")
    assert code == 0, err
    assert "<html" in (tmp_path / "r.html").read_text(encoding="utf-8").lower()


# --------------------------------------------------------------------------- a live suite

PROVIDER = """
def answer(prompt):
    # Deterministic, so the whole run and its shards see the same outputs.
    return "{good}" if int(prompt[1:]) % {every} else "{bad}"
"""


def _live_project(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _suite(root)
    mods = root / "pymods"
    mods.mkdir()
    (mods / "prov_before.py").write_text(
        PROVIDER.format(good="ok", bad="ok", every=1), encoding="utf-8"
    )
    # After the change, every other golden answers wrong.
    (mods / "prov_after.py").write_text(
        PROVIDER.format(good="ok", bad="wrong", every=2), encoding="utf-8"
    )
    monkeypatch.setenv("PYTHONPATH", str(mods))
    for name in ("before", "after"):
        (root / f"{name}.yaml").write_text(
            f"provider: {{type: python, function: 'prov_{name}:answer'}}\n"
            "repeats: 3\n"
            "candidates:\n  - {id: a, prompt: '{{ input }}'}\n"
            "  - {id: b, prompt: '{{ input }}'}\n",
            encoding="utf-8",
        )


def test_a_live_suite_merged_from_three_shards_is_the_whole_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _live_project(tmp_path, monkeypatch)
    live = ("eval", "goldens", "--no-cache")
    code, _, err = _cli(tmp_path, *live, "--candidates", "before.yaml", "--write-baseline")
    assert code == 0, err
    written = (tmp_path / "assay-baseline.json").read_bytes()
    names = _shards(tmp_path, *live, "--candidates", "before.yaml")
    code, _, err = _cli(
        tmp_path, "merge", *names, "--write-baseline", "--baseline", "m.json", "--format", "text"
    )
    assert code == 0, err
    assert (tmp_path / "m.json").read_bytes() == written

    check = (*live, "--candidates", "after.yaml", "--check", "--max-repeats", "4")
    whole_code, whole = _json(tmp_path, *check)
    assert whole_code == 2 and whole["regressions"]
    assert whole["summary"]["model_calls"]["made"] > 0
    names = _shards(tmp_path, *check)
    code, merged = _merge(tmp_path, names)
    assert code == whole_code
    assert merged == whole  # outputs, repeats, model-call counts, evidence of each regression


# --------------------------------------------------------------------------- an agent run

TASKS = [f"t{i:02d}" for i in range(12)]


def _agent_project(root: Path, failing: set[str]) -> None:
    for task in TASKS:
        write_golden(
            root / "goldens" / "smoke",
            f"{task}.md",
            f"id: {task}\ninput: q\ntitle: Task {task}\n",
            ORIGIN,
        )
    folder = root / "tel"
    folder.mkdir(exist_ok=True)
    for i, task in enumerate(TASKS):
        record: dict[str, Any] = {
            "task_id": task,
            "duration_s": 10.0 + i / 7,
            "cost_usd": 0.01 * (i + 1) / 3,
            "tests_failed": 0,
            "orphans": int(i % 5 == 0),
        }
        if task in failing:
            record["tests_run"] = 3
            record["tests_failed"] = 2
        write_json(folder / f"{task}.json", record)


def _without_run_identity(document: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in document.items() if k not in ("run_id", "created_at")}


def test_an_agent_run_merged_from_three_shards_is_the_whole_run(tmp_path: Path) -> None:
    _agent_project(tmp_path, failing=set())
    agent = ("bench", "goldens", "--telemetry", "tel")
    code, _, err = _cli(tmp_path, *agent, "--write-baseline", "--baseline", "w.json")
    assert code == 0, err
    names = _shards(tmp_path, *agent, "--no-save")
    code, _, err = _cli(
        tmp_path, "merge", *names, "--write-baseline", "--baseline", "m.json", "--format", "text"
    )
    assert code == 0, err
    assert (tmp_path / "m.json").read_bytes() == (tmp_path / "w.json").read_bytes()

    _agent_project(tmp_path, failing={"t03", "t08"})
    check = (*agent, "--check", "--baseline", "w.json")
    whole_code, whole = _json(tmp_path, *check)
    assert whole_code == 2
    names = _shards(tmp_path, *check, "--no-save")
    code, merged = _merge(tmp_path, names)
    assert code == whole_code
    assert _without_run_identity(merged) == _without_run_identity(whole)
    assert merged["run_id"] != whole["run_id"]  # the merged run is saved as a run of its own


def test_an_agent_run_with_an_errored_task_merges_to_the_whole_runs_score(tmp_path: Path) -> None:
    # An errored task (infrastructure) is out of the composite: the unsharded run counted it
    # out, the merge counted it in, so a merged run scored lower than the same run whole.
    _agent_project(tmp_path, failing={"t03"})
    errored = json.loads((tmp_path / "tel" / "t05.json").read_text(encoding="utf-8"))
    write_json(tmp_path / "tel" / "t05.json", {**errored, "error": "the sandbox did not start"})
    agent = ("bench", "goldens", "--telemetry", "tel", "--no-save")
    whole_code, whole = _json(tmp_path, *agent)
    assert [r["status"] for r in whole["results"]].count("error") == 1
    code, merged = _merge(tmp_path, _shards(tmp_path, *agent))
    assert code == whole_code
    assert merged["summary"]["composite"] == whole["summary"]["composite"]


# --------------------------------------------------------------------------- refusals


@pytest.fixture
def sharded(tmp_path: Path) -> Path:
    _suite(tmp_path)
    write_json(tmp_path / "o.json", {g: "ok" for g in IDS})
    assert _cli(tmp_path, "gate", "goldens", "--outputs", "o.json", "--write-baseline")[0] == 0
    _shards(tmp_path, "gate", "goldens", "--outputs", "o.json", "--check")
    return tmp_path


def _refused(root: Path, *args: str) -> str:
    code, out, err = _cli(root, "merge", *args)
    assert code == 1 and out == ""
    assert len(err.strip().splitlines()) == 1, err
    return err


def test_a_missing_or_duplicate_shard_is_refused(sharded: Path) -> None:
    assert "shard(s) 3 of 3 missing" in _refused(sharded, "shard-1.json", "shard-2.json")
    err = _refused(sharded, "shard-1.json", "shard-2.json", "shard-2.json")
    assert "shard-2.json" in err and "again" in err


def test_shards_of_another_suite_setting_or_kind_are_refused(sharded: Path) -> None:
    # Another suite: one more golden.
    other = sharded / "other"
    _suite(other, [*IDS, "g999"])
    write_json(other / "o.json", {g: "ok" for g in [*IDS, "g999"]})
    out = _cli(other, "gate", "goldens", "--outputs", "o.json", "--shard", "3/3", "--json")[1]
    (sharded / "other-3.json").write_text(out, encoding="utf-8")
    err = _refused(sharded, "shard-1.json", "shard-2.json", "other-3.json")
    assert "other-3.json" in err and "suite" in err
    # Another setting: report mode, not --check.
    _, out, _ = _cli(sharded, "gate", "goldens", "--outputs", "o.json", "--shard", "3/3", "--json")
    (sharded / "report-3.json").write_text(out, encoding="utf-8")
    err = _refused(sharded, "shard-1.json", "shard-2.json", "report-3.json")
    assert "report-3.json" in err and "settings.mode" in err
    # Another number of shards.
    out = _cli(
        sharded, "gate", "goldens", "--outputs", "o.json", "--check", "--shard", "1/2", "--json"
    )[1]
    (sharded / "half.json").write_text(out, encoding="utf-8")
    assert "one of 3" in _refused(sharded, "shard-1.json", "half.json")


def test_a_document_that_is_not_a_shard_and_a_changed_baseline_are_refused(sharded: Path) -> None:
    out = _cli(sharded, "gate", "goldens", "--outputs", "o.json", "--json")[1]
    (sharded / "whole.json").write_text(out, encoding="utf-8")
    assert "not the --json document of a shard" in _refused(sharded, "whole.json")
    assert "file not found" in _refused(sharded, "nope.json")
    baseline = sharded / "assay-baseline.json"
    baseline.write_text(baseline.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    err = _refused(sharded, "shard-1.json", "shard-2.json", "shard-3.json")
    assert "assay-baseline.json" in err and "not the baseline the shards compared with" in err


def test_merge_holds_each_golden_once(sharded: Path) -> None:
    # Sanity of the fixture the refusals use: each golden is in exactly one shard document.
    seen = []
    for i in (1, 2, 3):
        document = json.loads((sharded / f"shard-{i}.json").read_text(encoding="utf-8"))
        ids = [r["id"] for r in document["results"]]
        assert all(Shard(i, 3).holds(x) for x in ids)
        seen += ids
    assert sorted(seen) == IDS


@pytest.mark.parametrize(
    ("field", "edit"),
    [
        ("partial.goldens[0][1]", lambda d: d["partial"]["goldens"][0].__setitem__(1, "first")),
        ("partial.settings", lambda d: d["partial"].__setitem__("settings", [])),
        ("results[0].status", lambda d: d["results"][0].__setitem__("status", "great")),
        (
            "partial.trials[0]",
            lambda d: d["partial"]["trials"].append(["x", "y", 1, 1, 0, [], True]),
        ),
        ("results", lambda d: d.pop("results")),
        ("partial.errors", lambda d: d["partial"].pop("errors")),
        # A key no shard writes, with its near miss.
        (
            "partial.trals': unknown field: did you mean 'trials'?",
            lambda d: d["partial"].__setitem__("trals", []),
        ),
        ("partial.shard': must be I/N", lambda d: d["partial"].__setitem__("shard", "1-3")),
    ],
)
def test_a_hand_edited_shard_is_one_line_naming_the_field(
    sharded: Path, field: str, edit: Any
) -> None:
    path = sharded / "shard-1.json"
    document = json.loads(path.read_text(encoding="utf-8"))
    edit(document)
    path.write_text(json.dumps(document), encoding="utf-8")
    err = _refused(sharded, "shard-1.json", "shard-2.json", "shard-3.json")
    assert "shard-1.json" in err and (field in err or f"field '{field}'" in err), err


def test_judge_calls_saved_add_up_across_shards(tmp_path: Path) -> None:
    # Each golden's judge assert is skipped (its contains fails first): a judge call saved.
    for golden_id in IDS:
        write_golden(
            tmp_path / "goldens",
            f"{golden_id}.md",
            f"id: {golden_id}\ninput: q\nasserts:\n  - 'contains:ok'\n"
            "  - {op: judge, rubric: 'Is it right?'}\n",
            ORIGIN,
        )
    write_json(tmp_path / "o.json", {g: ("ok" if i % 3 else "no") for i, g in enumerate(IDS)})
    whole_code, whole = _json(tmp_path, "gate", "goldens", "--outputs", "o.json")
    assert whole["summary"]["judge_calls_saved"] == 10
    names = _shards(tmp_path, "gate", "goldens", "--outputs", "o.json")
    code, merged = _merge(tmp_path, names)
    assert (code, merged) == (whole_code, whole)
