"""A suite loaded and scored by several processes gives exactly what one process gives.

Each comparison runs the same suite twice: with ``ASSAY_WORKERS=1`` (one process) and with
``ASSAY_WORKERS=2 ASSAY_PARALLEL_MIN_MS=0`` (split whatever its size), and compares documents,
baseline bytes, exit codes and error messages. No test depends on how long anything takes.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from assay.cascade._schemas import check_context
from assay.config import load_config
from assay.errors import ConfigError, GoldenError
from assay.gate import _load as parallel
from assay.gate import _run as gate
from assay.gate._run import GateOptions, load_selected, run_gate
from assay.gate._score import Scorer
from assay.gate._suite import LoadedSuite
from assay.goldens import iter_goldens, read_defaults
from assay.goldens._loader import discover_paths
from tests.helpers.cli import process_env

ONE = {"ASSAY_WORKERS": "1"}
SPLIT = {"ASSAY_WORKERS": "2", "ASSAY_PARALLEL_MIN_MS": "0"}

needs_fork = pytest.mark.skipif(not parallel.fork_is_safe(), reason="no safe fork here")


def _md(i: int) -> str:
    asserts = ["'contains:FROM'", '\'regex:"id":\\s*"m\\d+"\'', "is-json"]
    if i % 7 == 0:  # a mapping assert (PyYAML reads this frontmatter)
        asserts.append("{op: regex, value: 'select', flags: i}")
    if i % 11 == 0:
        asserts.append("'not-contains:DROP'")
    lines = [f"id: m{i:04d}", f"input: 'question {i}: café'"]
    if i % 13 == 0:
        lines.append("created: 2024-01-01")  # a date among the fields: pickled, not marshalled
    if i % 34 == 0:  # no asserts, no expected: needs-judge
        pass
    elif i % 17 == 0:  # no asserts: tier 2 (difflib), else needs-judge
        lines.append(f"expected: 'SELECT {i}'")
    else:
        lines.append("asserts:")
        lines.extend(f"  - {a}" for a in asserts)
    return "---\n" + "\n".join(lines) + "\n---\nA golden.\n\n## Origin\ntests/test_parallel.py\n"


def _row(i: int) -> str:
    row: dict[str, Any] = {
        "id": f"j{i:05d}",
        "input": f"question {i} " + "x" * 60,
        "asserts": ["contains:FROM", 'regex:"id":\\s*"j\\d+"', "is-json"],
        "origin": "tests",
    }
    if i % 19 == 0:
        row["asserts"] = [{"op": "equals", "path": "/n", "value": i}]
    return json.dumps(row)


def _output(golden_id: str, i: int, *, broken: bool = False) -> Any:
    answer = "SELECT name FROM t" if not broken else "SELECT name t"
    return json.dumps({"id": golden_id, "answer": f"{answer}{i % 5}", "n": i})


def make_suite(root: Path, *, md: int = 240, rows: int = 2400) -> tuple[Path, dict[str, Any]]:
    """A suite of markdown goldens in two tier folders, a JSONL file large enough to be cut
    between processes (over 256 KiB), and a YAML list; and outputs for all but a few."""
    goldens = root / "goldens"
    for i in range(md):
        folder = goldens / ("smoke" if i % 2 else "standard")
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"m{i:04d}.md").write_text(_md(i), encoding="utf-8")
    records = goldens / "stretch"
    records.mkdir(parents=True)
    (records / "rows.jsonl").write_text(
        "\n".join(_row(i) for i in range(rows)) + "\n\n", encoding="utf-8"
    )
    (records / "zlist.yaml").write_text(
        "- {id: y1, input: q, asserts: ['contains:FROM']}\n- {id: y2, input: q, expected: a}\n",
        encoding="utf-8",
    )
    assert (records / "rows.jsonl").stat().st_size > 256 * 1024
    outputs: dict[str, Any] = {}
    for i in range(md):
        if i % 23:  # every 23rd golden has no output
            outputs[f"m{i:04d}"] = _output(f"m{i:04d}", i)
    for i in range(rows):
        if i % 29:
            outputs[f"j{i:05d}"] = _output(f"j{i:05d}", i)
    outputs["y1"] = "SELECT 1 FROM t"
    outputs["stray"] = "an output no golden asks for"
    return goldens, outputs


def write_outputs(path: Path, outputs: dict[str, Any]) -> Path:
    path.write_text(json.dumps(outputs), encoding="utf-8")
    return path


def assay(cwd: Path, env: dict[str, str], *args: str | Path) -> tuple[int, str, str]:
    done = subprocess.run(
        [sys.executable, "-m", "assay", "gate", *map(str, args)],
        cwd=cwd,
        env=process_env(env),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return done.returncode, done.stdout, done.stderr


def both(cwd: Path, *args: str | Path) -> tuple[tuple[int, str, str], tuple[int, str, str]]:
    return assay(cwd, ONE, *args), assay(cwd, SPLIT, *args)


@pytest.fixture
def suite(tmp_path: Path) -> tuple[Path, Path]:
    goldens, outputs = make_suite(tmp_path)
    return goldens, write_outputs(tmp_path / "outputs.json", outputs)


@needs_fork
def test_the_split_run_is_really_split(suite: tuple[Path, Path], monkeypatch: Any) -> None:
    goldens, outputs = suite
    monkeypatch.setenv("ASSAY_WORKERS", "2")
    monkeypatch.setenv("ASSAY_PARALLEL_MIN_MS", "0")
    loaded = load_selected(GateOptions(path=goldens, outputs=outputs), load_config())
    assert isinstance(loaded, LoadedSuite)
    assert loaded.workers == 2
    assert loaded.prescored is not None
    # The same goldens, in the same order, as one process loads them.
    assert [(g.id, g.source, g.tier) for g in loaded.goldens] == [
        (g.id, g.source, g.tier) for g in iter_goldens(goldens)
    ]
    monkeypatch.setenv("ASSAY_WORKERS", "1")
    alone = load_selected(GateOptions(path=goldens, outputs=outputs), load_config())
    assert alone.workers == 1 and alone.prescored is None and alone.fingerprints is None


@needs_fork
def test_in_process_run_gate_is_the_same(suite: tuple[Path, Path], monkeypatch: Any) -> None:
    goldens, outputs = suite
    config = load_config()
    for mode in ("report", "check"):
        runs = []
        for env in (ONE, SPLIT):
            for key, value in env.items():
                monkeypatch.setenv(key, value)
            if mode == "check":
                baseline = goldens.parent / "in-process-baseline.json"
                options = GateOptions(
                    path=goldens,
                    outputs=outputs,
                    mode="write-baseline",
                    baseline=baseline,
                    force=True,
                )
                run_gate(options, config)
                options = GateOptions(
                    path=goldens, outputs=outputs, mode="check", baseline=baseline
                )
            else:
                options = GateOptions(path=goldens, outputs=outputs, similarity="difflib")
            run = run_gate(options, config)
            runs.append((run.exit_code, run.to_dict(), run.outputs))
            monkeypatch.delenv("ASSAY_PARALLEL_MIN_MS", raising=False)
        assert runs[0] == runs[1]


@needs_fork
def test_results_no_worker_gave_are_scored_in_place(
    suite: tuple[Path, Path], tmp_path: Path, monkeypatch: Any
) -> None:
    """A golden whose result no worker gave (here: one dropped in the middle) is scored where
    it stands, for every candidate, between results the workers gave."""
    goldens, outputs = suite
    flat = json.loads(outputs.read_text(encoding="utf-8"))
    worse = {k: _output(k, 3, broken=True) for k in flat}
    two = write_outputs(tmp_path / "two.json", {"good": flat, "worse": worse})
    config = load_config()
    options = GateOptions(path=goldens, outputs=two)

    def score(loaded: LoadedSuite) -> list[dict[str, Any]]:
        by_id = {g.id: g for g in loaded.goldens}
        produced = gate._outputs(options, config, loaded, by_id).outputs
        scorer = Scorer(None, "none", check_context(config), False, config, True)
        pairs = scorer.score(produced, loaded.goldens, prescored=loaded.prescored)
        return [r.to_dict() for rs in pairs.repeats for r in rs]

    monkeypatch.setenv("ASSAY_WORKERS", "1")
    alone = score(load_selected(options, config))
    monkeypatch.setenv("ASSAY_WORKERS", "2")
    monkeypatch.setenv("ASSAY_PARALLEL_MIN_MS", "0")
    loaded = load_selected(options, config)
    assert loaded.prescored is not None
    for golden in loaded.goldens[100:2000:97]:
        del loaded.prescored._results[golden.id]
    assert score(loaded) == alone


def test_documents_baselines_and_regressions_are_the_same(
    suite: tuple[Path, Path], tmp_path: Path
) -> None:
    goldens, outputs = suite
    one, split = both(tmp_path, goldens, "--outputs", outputs, "--json", "--similarity", "difflib")
    assert one[0] == split[0] == 0
    assert json.loads(one[1]) == json.loads(split[1])
    assert one[1] == split[1]
    counts = json.loads(one[1])["summary"]["counts"]
    assert counts["pass"] and counts["fail"] and counts["no-output"] and counts["needs-judge"]

    written = []
    for env, name in ((ONE, "one.json"), (SPLIT, "split.json")):
        code, _, err = assay(
            tmp_path, env, goldens, "--outputs", outputs, "--write-baseline", "--baseline", name
        )
        assert code == 0, err
        written.append((tmp_path / name).read_bytes())
    assert written[0] == written[1]

    # A regression: some outputs lose their FROM. The check fails (exit 2) the same way.
    regressed = json.loads(outputs.read_text(encoding="utf-8"))
    for key in list(regressed)[::40]:
        regressed[key] = _output(key, 1, broken=True)
    worse = write_outputs(tmp_path / "worse.json", regressed)
    one, split = both(
        tmp_path, goldens, "--outputs", worse, "--check", "--baseline", "one.json", "--json"
    )
    assert one[0] == split[0] == 2
    assert one[1] == split[1]
    assert json.loads(one[1])["regressions"]
    assert one[2] == split[2]


def test_tiers_the_project_suite_and_text_output_are_the_same(
    suite: tuple[Path, Path], tmp_path: Path
) -> None:
    goldens, outputs = suite
    one, split = both(
        tmp_path, goldens, "--outputs", outputs, "--tier", "smoke", "--tier", "stretch"
    )
    assert one == split
    assert one[0] == 0
    # No PATH: the project's goldens folder (goldens/ here).
    one, split = both(tmp_path, "--outputs", outputs, "--json")
    assert one == split
    assert one[0] == 0


@pytest.mark.parametrize("where", ["markdown", "jsonl"])
def test_a_bad_golden_in_the_middle_is_the_same_one_line_error(
    suite: tuple[Path, Path], tmp_path: Path, where: str
) -> None:
    goldens, outputs = suite
    if where == "markdown":
        bad = goldens / "standard" / "m0120.md"
        bad.write_text(_md(120).replace("asserts:", "asserts: 3\nx:"), encoding="utf-8")
    else:  # a line in the second half of the JSONL file, which a worker reads
        rows = goldens / "stretch" / "rows.jsonl"
        lines = rows.read_text(encoding="utf-8").split("\n")
        lines[2000] = json.dumps({"id": "j02000", "threshold": 7})
        rows.write_text("\n".join(lines), encoding="utf-8")
    one, split = both(tmp_path, goldens, "--outputs", outputs)
    assert one == split
    code, out, err = one
    assert code == 1
    assert out == ""
    [line] = err.strip().splitlines()
    if where == "markdown":
        assert str(bad) in line and "field 'asserts'" in line
    else:
        assert f"{rows}:2001" in line and "field 'threshold'" in line


def test_undecodable_jsonl_line_and_duplicate_ids_are_the_same_errors(
    suite: tuple[Path, Path], tmp_path: Path
) -> None:
    goldens, outputs = suite
    rows = goldens / "stretch" / "rows.jsonl"
    data = rows.read_bytes().split(b"\n")
    data[2100] = b'{"id": "j02100", "input": "\xff"}'
    rows.write_bytes(b"\n".join(data))
    one, split = both(tmp_path, goldens, "--outputs", outputs)
    assert one == split
    assert one[0] == 1 and "not valid UTF-8" in one[2]

    data[2100] = json.dumps({"id": "m0003", "input": "again"}).encode()  # a markdown golden's id
    rows.write_bytes(b"\n".join(data))
    one, split = both(tmp_path, goldens, "--outputs", outputs)
    assert one == split
    assert one[0] == 1 and "duplicate golden id 'm0003'" in one[2]


def test_outputs_per_candidate_and_object_outputs_are_the_same(
    suite: tuple[Path, Path], tmp_path: Path
) -> None:
    goldens, outputs = suite
    flat = json.loads(outputs.read_text(encoding="utf-8"))
    # Two candidates: an object of objects whose keys are no golden ids.
    worse = {
        k: (_output(k, 2, broken=True) if i % 3 == 0 else v)
        for i, (k, v) in enumerate(flat.items())
    }
    per_candidate = write_outputs(tmp_path / "two.json", {"good": flat, "worse": worse})
    one, split = both(tmp_path, goldens, "--outputs", per_candidate, "--json")
    assert one == split
    assert [c["candidate"] for c in json.loads(one[1])["summary"]["candidates"]] == [
        "good",
        "worse",
    ]
    # Every output an object: golden ids as keys make it one candidate's map, even though only
    # the last share of the suite holds the ids that decide it.
    objects = write_outputs(
        tmp_path / "objects.json", {k: {"answer": v} for k, v in flat.items() if k.startswith("y")}
    )
    one, split = both(tmp_path, goldens, "--outputs", objects, "--json")
    assert one == split
    assert json.loads(one[1])["summary"]["candidates"][0]["candidate"] == "default"
    # Two candidates and goldens no worker scored (--packaged adds them to the project suite).
    one, split = both(tmp_path, "--outputs", per_candidate, "--json", "--packaged")
    assert one == split
    assert json.loads(one[1])["summary"]["goldens"] > len(flat)
    # JSONL outputs.
    rows = tmp_path / "outputs.jsonl"
    rows.write_text(
        "".join(json.dumps({"id": k, "output": v}) + "\n" for k, v in flat.items()),
        encoding="utf-8",
    )
    one, split = both(tmp_path, goldens, "--outputs", rows, "--json")
    assert one == split
    assert one[0] == 0


def test_the_plan_cuts_every_line_once_in_order(suite: tuple[Path, Path]) -> None:
    goldens, _ = suite
    paths = discover_paths(goldens)
    costs = [parallel._cost(p) for p in paths]
    for shares in (2, 3, 5):
        groups = parallel.plan(paths, costs, shares)
        assert 2 <= len(groups) <= shares
        loaded = [g for units in groups for g in parallel.load_units(units, False, None)]
        assert [(g.id, g.source) for g in loaded] == [
            (g.id, g.source) for g in iter_goldens(goldens)
        ]
        cut = [u for units in groups for u in units if isinstance(u, tuple)]
        assert len(cut) >= 2  # the JSONL file is cut between processes


def test_a_workers_chunks_are_read_here_however_the_pipe_cuts_them(
    suite: tuple[Path, Path],
) -> None:
    # A worker's chunks arrive down its pipe in pieces of any size; this process unpickles each
    # once it is whole (on its main thread: a thread doing it would hold the GIL while a regex's
    # time budget, a wall clock, runs here).
    import os

    goldens, _ = suite
    paths = discover_paths(goldens)
    job = parallel._Job(
        parallel.plan(paths, [parallel._cost(p) for p in paths], 4), False, None, None, True
    )
    sent = parallel.frame(1, job.run(1)) + parallel.frame(3, job.run(3))
    readable, writable = os.pipe()
    inbox = parallel._Inbox(job)
    inbox.pending[readable] = bytearray()
    for start in range(0, len(sent), 1000):  # cut where no frame ends
        os.write(writable, sent[start : start + 1000])
        inbox.read(wait=False)
    os.close(writable)
    inbox.read(wait=True)
    assert sorted(inbox.chunks) == [1, 3] and not inbox.pending
    for index in (1, 3):
        loaded, _, prints = inbox.chunks[index]
        assert [g.id for g in loaded] == [g.id for g in job.run(index)[0]]
        assert prints == job.run(index)[2]


def test_a_worker_that_stops_in_the_middle_of_a_chunk_is_a_failure(
    suite: tuple[Path, Path],
) -> None:
    import os

    goldens, _ = suite
    paths = discover_paths(goldens)
    job = parallel._Job(
        parallel.plan(paths, [parallel._cost(p) for p in paths], 4), False, None, None, False
    )
    readable, writable = os.pipe()
    inbox = parallel._Inbox(job)
    inbox.pending[readable] = bytearray()
    os.write(writable, parallel.frame(0, job.run(0))[:1000])  # less than a pipe holds
    os.close(writable)
    with pytest.raises(RuntimeError, match="middle of a chunk"):
        inbox.read(wait=True)


def test_bad_settings_are_errors(monkeypatch: Any) -> None:
    for name, value in (
        ("ASSAY_WORKERS", "0"),
        ("ASSAY_WORKERS", "two"),
        ("ASSAY_PARALLEL_MIN_MS", "-1"),
    ):
        monkeypatch.setenv(name, value)
        with pytest.raises(ConfigError, match=name):
            parallel.workers_wanted(1000.0, workers=2)
        monkeypatch.delenv(name)
    assert parallel.workers_wanted(1000.0, workers=2) == 2
    assert parallel.workers_wanted(1.0, workers=2) == 1  # below the measured break-even
    monkeypatch.setenv("ASSAY_PARALLEL_MIN_MS", "0")
    assert parallel.workers_wanted(1.0, workers=2) == 2
    monkeypatch.setenv("ASSAY_WORKERS", "1")
    assert parallel.workers_wanted(1000.0, workers=2) == 1


def test_a_missing_folder_is_the_usual_error(tmp_path: Path) -> None:
    with pytest.raises(GoldenError, match="goldens folder not found"):
        parallel.load(tmp_path / "nowhere")


# ------------------------------------------------------------- vars lists and folder defaults


def _with_defaults_and_vars(goldens: Path, outputs: dict[str, Any]) -> None:
    """Add to a suite a ``_defaults.yaml`` (vars, asserts, threshold), markdown goldens with a
    vars list (some opting out of the defaults), and a JSONL file of vars lists large enough to
    be cut between processes."""
    (goldens / "_defaults.yaml").write_text(
        "vars: {lang: en, city: Nowhere}\n"
        "asserts: ['not-contains:DROP', {op: icontains, value: select}]\n"
        "threshold: 0.7\n",
        encoding="utf-8",
    )
    for i in range(60):
        opt = "defaults: false\n" if i % 5 == 0 else ""
        threshold = "threshold: 0.9\n" if i % 3 == 0 else ""
        (goldens / "smoke" / f"v{i:03d}.md").write_text(
            f"---\nid: v{i:03d}\n{opt}{threshold}vars:\n  - {{city: Rome, n: {i}}}\n"
            "  - {lang: fr}\nasserts: ['contains:FROM']\n---\nA golden.\n\n## Origin\nt\n",
            encoding="utf-8",
        )
        outputs[f"v{i:03d}#1"] = "SELECT a FROM t"
    rows = [
        json.dumps(
            {
                "id": f"w{i:05d}",
                "input": "q" * 40,
                "vars": [{"k": i}, {"k": i + 1, "city": "Oslo"}],
                "asserts": ["contains:FROM"],
                **({"defaults": False} if i % 7 == 0 else {}),
            }
        )
        for i in range(2500)
    ]
    path = goldens / "stretch" / "vrows.jsonl"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    assert path.stat().st_size > 256 * 1024
    for i in range(0, 2500, 3):
        outputs[f"w{i:05d}#2"] = "select x FROM t"


def _shape(golden: Any) -> tuple[Any, ...]:
    return (
        golden.id,
        golden.source,
        golden.tier,
        golden.input,
        [s.text for s in golden.asserts],
        golden.threshold,
        golden.threshold_given,
        dict(golden.fields),
        # Specs compare by identity: two reads of one defaults file compare by what they say.
        None if golden.defaults is None else golden.defaults.to_dict(),
    )


@needs_fork
def test_defaults_and_vars_lists_load_the_same_in_every_share(
    tmp_path: Path, monkeypatch: Any
) -> None:
    goldens, outputs = make_suite(tmp_path)
    _with_defaults_and_vars(goldens, outputs)
    outputs_path = write_outputs(tmp_path / "outputs.json", outputs)
    alone = list(iter_goldens(goldens))
    assert {g.defaults is None for g in alone} == {True, False}
    assert sum(1 for g in alone if "#" in g.id) == 2 * (60 + 2500)
    monkeypatch.setenv("ASSAY_WORKERS", "3")
    monkeypatch.setenv("ASSAY_PARALLEL_MIN_MS", "0")
    loaded = load_selected(GateOptions(path=goldens, outputs=outputs_path), load_config())
    assert loaded.workers >= 2
    assert [_shape(g) for g in loaded.goldens] == [_shape(g) for g in alone]
    # Every share got the one defaults object the parent read.
    assert len({id(g.defaults) for g in loaded.goldens if g.defaults is not None}) == 1
    paths = discover_paths(goldens)
    groups = parallel.plan(paths, [parallel._cost(p) for p in paths], 4)
    shares = [
        g for units in groups for g in parallel.load_units(units, False, read_defaults(goldens))
    ]
    assert [_shape(g) for g in shares] == [_shape(g) for g in alone]

    one, split = both(tmp_path, goldens, "--outputs", outputs_path, "--json")
    assert one == split
    assert one[0] == 0
    results = {r["id"]: r for r in json.loads(one[1])["results"]}
    assert [c["text"] for c in results["v001#1"]["checks"]] == [
        "not-contains:DROP",
        "icontains:select",
        "contains:FROM",
    ]
    assert [c["text"] for c in results["v000#1"]["checks"]] == ["contains:FROM"]  # opted out
    one, split = both(tmp_path, goldens, "--self-test", "--json")
    assert one == split
    assert json.loads(one[1])["defaults"]["asserts"] == ["not-contains:DROP", "icontains:select"]


@needs_fork
def test_a_bad_defaults_file_is_the_same_error(tmp_path: Path) -> None:
    goldens, outputs = make_suite(tmp_path)
    outputs_path = write_outputs(tmp_path / "outputs.json", outputs)
    (goldens / "_defaults.yaml").write_text("vars: {a: 1}\ntier: smoke\n", encoding="utf-8")
    one, split = both(tmp_path, goldens, "--outputs", outputs_path)
    assert one == split
    assert one[0] == 1
    assert f"{goldens / '_defaults.yaml'}:2: field 'tier'" in one[2]


@needs_fork
def test_the_processes_fingerprints_are_one_process_fingerprints(
    suite: tuple[Path, Path], monkeypatch: Any
) -> None:
    from assay.gate._baseline import fingerprint

    goldens, _ = suite
    monkeypatch.setenv("ASSAY_PARALLEL_MIN_MS", "0")
    loaded = parallel.load(goldens, workers=3, fingerprints=True)
    assert loaded is not None and loaded.workers == 3
    whole = {g.id: fingerprint(g) for g in iter_goldens(goldens)}
    assert loaded.fingerprints_of() == whole
    # A selection keeps the fingerprints of the goldens it keeps, by id.
    some = loaded.keep(loaded.goldens[::3])
    assert some.fingerprints_of() == {g.id: whole[g.id] for g in loaded.goldens[::3]}
    assert parallel.load(goldens, workers=3).fingerprints is None  # type: ignore[union-attr]


@needs_fork
@pytest.mark.parametrize("how", ["dies", "raises"])
def test_a_worker_that_fails_midway_means_one_process_loads(
    suite: tuple[Path, Path], monkeypatch: Any, how: str
) -> None:
    import os

    goldens, outputs = suite
    parent = os.getpid()
    monkeypatch.setenv("ASSAY_PARALLEL_MIN_MS", "0")
    real_run = parallel._Job.run

    taken: list[int] = []  # the chunks this process (a worker's copy of it) has taken

    def run(job: Any, index: int) -> Any:
        if os.getpid() != parent:
            taken.append(index)
            if len(taken) == 2:  # its second chunk: it has sent one
                if how == "dies":
                    os._exit(1)
                raise RuntimeError("a worker's failure")
        return real_run(job, index)

    forked: list[int] = []
    real_fork = os.fork

    def fork() -> int:
        pid = real_fork()
        if pid:
            forked.append(pid)
        return pid

    def until_the_worker_ends() -> None:  # this process takes no chunk before: it fails
        os.waitid(os.P_PID, forked[-1], os.WEXITED | os.WNOWAIT)

    monkeypatch.setattr(parallel._Job, "run", run)
    monkeypatch.setattr(os, "fork", fork)
    # The caller then loads in one process.
    assert parallel.load(goldens, workers=2, meanwhile=until_the_worker_ends) is None
    # ...and the gate's run is the one process's, workers stopped and reaped.
    monkeypatch.setenv("ASSAY_WORKERS", "2")
    config = load_config()
    split = run_gate(GateOptions(path=goldens, outputs=outputs), config)
    monkeypatch.setenv("ASSAY_WORKERS", "1")
    alone = run_gate(GateOptions(path=goldens, outputs=outputs), config)
    assert split.to_dict() == alone.to_dict()
    assert len(forked) == 2
    for pid in forked:  # no worker left behind
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)


CHECKS = """
LOG = open("checks.log", "a")  # buffered, never flushed: only the interpreter's teardown does


def logged(output, context):
    LOG.write(context["id"] + "\\n")
    return "FROM" in output
"""


@needs_fork
def test_a_projects_checks_run_here_and_lose_nothing(tmp_path: Path) -> None:
    # A worker ends without the interpreter's teardown (os._exit, as multiprocessing's do): a
    # project's check that buffers a log would lose it there. Its goldens are scored by the
    # calling process, as one process does.
    goldens, outputs = make_suite(tmp_path)
    rows = goldens / "stretch" / "checked.jsonl"
    rows.write_text(
        "".join(
            json.dumps(
                {
                    "id": f"p{i:05d}",
                    "input": "q" * 80,
                    "asserts": [{"op": "python", "value": "checks.py:logged"}, "is-json"],
                }
            )
            + "\n"
            for i in range(3000)
        ),
        encoding="utf-8",
    )
    assert rows.stat().st_size > 256 * 1024  # cut between the processes too
    outputs.update({f"p{i:05d}": _output(f"p{i:05d}", i, broken=i % 5 == 0) for i in range(3000)})
    outputs_path = write_outputs(tmp_path / "outputs.json", outputs)
    (tmp_path / "checks.py").write_text(CHECKS, encoding="utf-8")
    one, split = both(tmp_path, goldens, "--outputs", outputs_path, "--json")
    assert one[0] == split[0] == 0, one[2] + split[2]
    assert one[1] == split[1]
    logged = (tmp_path / "checks.log").read_text(encoding="utf-8").splitlines()
    assert len(logged) == 2 * 3000 and len(set(logged)) == 3000  # each golden, in both runs


def test_which_checks_run_a_projects_code() -> None:
    from assay.asserts import parse_assert
    from assay.asserts._registry import runs_project_code

    assert not runs_project_code(parse_assert("contains:x"))
    assert not runs_project_code(parse_assert("not-contains:x"))
    assert runs_project_code(parse_assert({"op": "python", "value": "checks.py:f"}))
    group = {"op": "any-of", "asserts": ["is-json", {"op": "python", "value": "c.py:f"}]}
    assert runs_project_code(parse_assert(group))
    assert not runs_project_code(parse_assert({"op": "any-of", "asserts": ["is-json"]}))
    # What a worker leaves to the calling process: those, and a similarity of its own that is
    # not a pure function of two texts.
    from assay.goldens import Golden

    def left(*asserts: Any) -> bool:
        specs = tuple(parse_assert(a) for a in asserts)
        return parallel._project_code([Golden("g", "smoke", "s", asserts=specs)])

    assert not left("contains:x", {"op": "similar", "value": "a", "backend": "rapidfuzz"})
    assert left({"op": "similar", "value": "a", "backend": "embedding"})
    assert left({"op": "any-of", "asserts": [{"op": "similar", "value": "a", "backend": "x/y"}]})
    assert left("is-json", {"op": "python", "value": "checks.py:f"})


def test_goldens_and_results_pickle_as_every_field() -> None:
    # They travel from the workers pickled as their fields (a tuple: twice as fast to load as
    # a slotted dataclass's state); a field added to the class and not to __reduce__ would be
    # lost on the way.
    import dataclasses
    import pickle

    from assay.asserts import CheckResult
    from assay.goldens import Golden
    from assay.results import Result

    for cls in (Golden, Result, CheckResult):
        fields = dataclasses.fields(cls)
        values = {f.name: f"value of {f.name}" for f in fields}
        made = cls(**values)  # type: ignore[arg-type]
        rebuilt = pickle.loads(pickle.dumps(made))
        assert {f.name: getattr(rebuilt, f.name) for f in fields} == values, cls
