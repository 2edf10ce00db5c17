"""`assay view`'s JSON API over real saved runs (issue 29): real `assay eval` / `assay gate` runs
make the records, a real server on loopback port 0 answers real HTTP requests.

Covers the runs list (newest first, a damaged record one line in ``problems``), a run's rows with
the outputs kept, a golden's expected answer from the project's goldens only, comparisons (two
runs, a run and the baseline), paths from the URL that try to leave the runs folder, 10,000
results, 200 runs, one document alone, the static front end, and the command itself.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import re
import shutil
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.cli import run_cli, spawn

GOLDENS = [
    {"id": "capital-fr", "tier": "smoke", "input": "Paris", "expected": "Paris"},
    # The echo model answers its prompt: "Rome" never contains the expected answer.
    {"id": "capital-it", "tier": "smoke", "input": "Rome", "expected": "Roma-SECRET-EXPECTED"},
    {"id": "capital-es", "tier": "standard", "input": "Madrid", "expected": "Madrid"},
]
# Six answers per golden: a live answer is random to the gate, and six failed where six passed is
# a significant regression.
CANDIDATES = (
    "provider: {{type: echo}}\nrepeats: 6\ncandidates:\n  - {{id: a, prompt: '{prompt}'}}\n"
)


def _write_goldens(root: Path) -> None:
    lines = [json.dumps({**g, "asserts": [f"contains:{g['expected']}"]}) for g in GOLDENS]
    (root / "goldens").mkdir(exist_ok=True)
    (root / "goldens" / "capitals.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


def _eval(root: Path, prompt: str, *flags: str) -> int:
    (root / "cands.yaml").write_text(CANDIDATES.format(prompt=prompt), encoding="utf-8")
    code, _, err = run_cli(["eval", "--candidates", "cands.yaml", "--no-cache", *flags], root)
    assert code in (0, 2), err
    return code


def _ids(root: Path) -> list[str]:
    return sorted(p.stem for p in (root / ".assay" / "runs").glob("*.json"))


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project keeping outputs, with three saved eval runs: one writing the baseline, one
    checking it with capital-fr regressed, one report."""
    (tmp_path / "assay.toml").write_text("keep_outputs = true\n", encoding="utf-8")
    _write_goldens(tmp_path)
    assert _eval(tmp_path, "{{ input }}", "-w") == 0
    assert _eval(tmp_path, "no idea", "-c") == 2  # capital-fr and capital-es regress
    _eval(tmp_path, "{{ input }}")
    assert len(_ids(tmp_path)) == 3
    return tmp_path


@contextlib.contextmanager
def serving(root: Path, document: Path | None = None) -> Iterator[tuple[str, int]]:
    from assay.viewer import make_server

    server = make_server(root, document=document, port=0)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield server.server_address[0], server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def get(address: tuple[str, int], path: str) -> tuple[int, dict[str, str], Any]:
    """GET ``path`` exactly as written (no client-side normalising): status, headers, body
    (JSON decoded when the response is JSON)."""
    connection = http.client.HTTPConnection(*address, timeout=10)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        body = response.read()
        headers = {k.lower(): v for k, v in response.getheaders()}
    finally:
        connection.close()
    if headers.get("content-type", "").startswith("application/json"):
        return response.status, headers, json.loads(body)
    return response.status, headers, body


# --------------------------------------------------------------------------- the runs


def test_a_project_without_runs_has_an_empty_list(tmp_path: Path) -> None:
    with serving(tmp_path) as address:
        assert get(address, "/api/runs")[2] == {"runs": [], "problems": []}
        assert get(address, "/api/live")[2] == {"runs": []}
        assert get(address, "/api/runs/eval_run_20260101T000000_000000Z")[0] == 404


def test_runs_are_listed_newest_first_with_their_summaries(project: Path) -> None:
    first, second, third = _ids(project)
    with serving(project) as address:
        status, headers, body = get(address, "/api/runs")
    assert status == 200
    assert headers["content-type"] == "application/json; charset=utf-8"
    assert body["problems"] == []
    assert [r["run_id"] for r in body["runs"]] == [third, second, first]
    check = body["runs"][1]
    assert check["kind"] == "eval" and check["mode"] == "check"
    assert check["totals"] == {
        "results": 3,
        "pass": 0,
        "fail": 3,
        "error": 0,
        "needs_judge": 0,
        "no_output": 0,
    }
    assert check["exit_code"] == 2 and check["gate"] == "failed"
    assert check["candidates"] == ["a"]
    assert check["started_at"] == re.sub(
        r"eval_run_(....)(..)(..)T(..)(..)(..)_(......)Z", r"\1-\2-\3T\4:\5:\6.\7Z", second
    )
    assert body["runs"][2]["mode"] == "write-baseline"
    assert body["runs"][0]["pass_rate"] == pytest.approx(2 / 3)


def test_a_run_has_every_result_with_its_kept_output(project: Path) -> None:
    check = _ids(project)[1]
    with serving(project) as address:
        status, _, body = get(address, f"/api/runs/{check}")
    assert status == 200
    assert body["run"]["run_id"] == check
    rows = {r["id"]: r for r in body["results"]}
    assert set(rows) == {"capital-fr", "capital-it", "capital-es"}
    row = rows["capital-fr"]
    assert row["status"] == "fail" and row["candidate"] == "a" and row["tier"] == "smoke"
    assert row["output"] == "no idea"  # kept: keep_outputs = true
    assert row["checks"] == [{"op": "contains", "passed": False, "reason": None}]
    assert {r["id"] for r in body["regressions"]} == {"capital-fr", "capital-es"}
    # The regression's statistics in words, as the gate said them.
    assert body["regressions"][0]["why"].startswith("passes 6/6 → 0/6: Fisher's exact test")


def test_the_expected_answer_comes_from_the_goldens_never_from_a_record(project: Path) -> None:
    report = _ids(project)[2]
    record_text = (project / ".assay" / "runs" / f"{report}.json").read_text(encoding="utf-8")
    assert "Roma-SECRET-EXPECTED" not in record_text  # the record never holds it
    # A hand-edited record that claims an expected answer: never shown.
    tampered = json.loads(record_text)
    tampered["expected"] = {"capital-it": "FROM-THE-RECORD"}
    record_path = project / ".assay" / "runs" / f"{report}.json"
    record_path.write_text(json.dumps(tampered), encoding="utf-8")
    with serving(project) as address:
        _, _, body = get(address, f"/api/runs/{report}/goldens/capital-it?candidate=a")
        assert body["expected"] == "Roma-SECRET-EXPECTED"
        assert body["input"] == "Rome" and body["output"] == "Rome"
        assert body["expected_from"].endswith("capitals.jsonl:2")
        # The golden gone from the project: no expected answer, whatever a record says.
        _write_goldens_without(project, "capital-it")
        fake = project / ".assay" / "runs" / "eval_run_20200101T000000_000000Z.json"
        fake.write_text(json.dumps(_agentlike_record_claiming_expected()), encoding="utf-8")
        status, _, body = get(address, f"/api/runs/{report}/goldens/capital-it")
        assert status == 200 and body["expected"] is None and body["output"] == "Rome"
        status, _, body = get(address, f"/api/runs/{fake.stem}/goldens/capital-it")
        assert status == 200, body
        assert body["expected"] is None and "FROM-THE-RECORD" not in json.dumps(body)
        status, _, body = get(address, f"/api/runs/{report}/goldens/no-such-golden")
        assert status == 404 and body == {"error": "not found"}


def test_a_golden_id_may_hold_any_character_encoded(tmp_path: Path) -> None:
    from urllib.parse import quote

    odd = "sql/top users#1 ?&%"
    (tmp_path / "goldens").mkdir()
    golden = {"id": odd, "input": "q", "expected": "SELECT 1", "asserts": ["contains:SELECT"]}
    (tmp_path / "goldens" / "g.jsonl").write_text(json.dumps(golden) + "\n", encoding="utf-8")
    (tmp_path / "outputs.json").write_text(json.dumps({odd: "SELECT 2"}), encoding="utf-8")
    code, _, err = run_cli(["gate", "--outputs", "outputs.json"], tmp_path)
    assert code == 0, err
    [run_id] = _ids(tmp_path)
    with serving(tmp_path) as address:
        status, _, body = get(address, f"/api/runs/{run_id}/goldens/{quote(odd, safe='')}")
        assert status == 200 and body["id"] == odd and body["expected"] == "SELECT 1"
        assert get(address, f"/api/runs/{run_id}/goldens/{quote('sql', safe='')}")[0] == 404


def _write_goldens_without(root: Path, golden_id: str) -> None:
    path = root / "goldens" / "capitals.jsonl"
    lines = [ln for ln in path.read_text(encoding="utf-8").splitlines() if golden_id not in ln]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _agentlike_record_claiming_expected() -> dict[str, Any]:
    result = {
        "id": "capital-it",
        "tier": "smoke",
        "candidate": "agent",
        "status": "fail",
        "passed": False,
        "score": 0.0,
        "decided_by": "agent-telemetry",
        "checks": [],
        "expected": "FROM-THE-RECORD",
        "expected_output": "FROM-THE-RECORD",
    }
    summary = {"total": 1, "counts": {"fail": 1}, "pass_rate": 0.0, "candidates": []}
    return {
        "schema_version": 2,
        "run_id": "eval_run_20200101T000000_000000Z",
        "kind": "agent",
        "results": [result],
        "summary": summary,
    }


def test_an_agent_task_has_its_telemetry_and_its_journal_as_a_timeline(tmp_path: Path) -> None:
    from assay.attest import Journal
    from tests.helpers.telemetry import smoke_telemetry

    telemetry = Path(smoke_telemetry(tmp_path / "telemetry"))
    journal = Journal(telemetry / "smoke-fix-readme-typo.journal.jsonl")
    journal.append("read", path="README.md", content="SECRET-FILE-TEXT")
    journal.append("exec", command="pytest -q")
    journal.append("net", endpoint="127.0.0.1:9")
    code, _, err = run_cli(["bench", "--telemetry", telemetry, "-k", "smoke-*"], tmp_path)
    assert code == 0, err
    [run_id] = _ids(tmp_path)
    with serving(tmp_path) as address:
        [summary] = get(address, "/api/runs")[2]["runs"]
        assert summary["kind"] == "bench" and summary["score"] is not None
        path = f"/api/runs/{run_id}/goldens/smoke-fix-readme-typo"
        status, _, body = get(address, path)
        assert status == 200
        assert body["title"] and body["telemetry"]["files_modified"] == ["README.md"]
        assert body["journal"]["total"] == 3
        assert [(e["index"], e["kind"]) for e in body["journal"]["events"]] == [
            (0, "read"),
            (1, "exec"),
            (2, "net"),
        ]
        assert body["journal"]["events"][1]["command"] == "pytest -q"
        assert "SECRET-FILE-TEXT" not in json.dumps(body)  # the timeline, never the content
        _, _, other = get(address, f"/api/runs/{run_id}/goldens/smoke-rename-helper")
        assert other["journal"] is None and other["failure_category"] is None


def _fake_checkout(root: Path, sha: str) -> None:
    (root / ".git" / "refs" / "heads").mkdir(parents=True)
    (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n", encoding="utf-8")
    (root / ".git" / "refs" / "heads" / "main").write_text(sha + "\n", encoding="utf-8")


@pytest.mark.parametrize("keep", [True, False])
def test_an_agent_run_keeps_its_git_state_and_when_asked_its_outputs(
    tmp_path: Path, keep: bool
) -> None:
    from tests.helpers.telemetry import smoke_telemetry

    sha = "89abcdef0123456789abcdef0123456789abcdef"
    _fake_checkout(tmp_path, sha)
    (tmp_path / "assay.toml").write_text(f"keep_outputs = {str(keep).lower()}\n")
    telemetry = Path(smoke_telemetry(tmp_path / "telemetry", output="the agent's last words"))
    argv = ["bench", "--telemetry", telemetry, "-k", "smoke-*"]
    code, _, err = run_cli(argv, tmp_path, env={"GITHUB_SHA": None})
    assert code == 0, err
    [run_id] = _ids(tmp_path)
    with serving(tmp_path) as address:
        [summary] = get(address, "/api/runs")[2]["runs"]
        assert summary["git"] == {"branch": "main", "commit": sha}
        _, _, run = get(address, f"/api/runs/{run_id}")
        outputs = {r["output"] for r in run["results"]}
        assert outputs == ({"the agent's last words"} if keep else {None})
        _, _, task = get(address, f"/api/runs/{run_id}/goldens/smoke-fix-readme-typo")
        assert task["output"] == ("the agent's last words" if keep else None)


def test_an_agent_runs_attestation_verdict_and_why_are_on_its_page(tmp_path: Path) -> None:
    from assay.gate import save_run

    dirty = "attestation sha256:0123456789ab… is DIRTY: hidden_read: tests/test_x.py, event 4"
    record = {
        "schema_version": 2,
        "kind": "agent",
        "results": [
            {"id": "t1", "candidate": "agent", "status": "pass", "score": 1.0},
            {"id": "t2", "candidate": "agent", "status": "pass", "score": 1.0, "safety": dirty},
        ],
        "summary": {
            "total": 2,
            "counts": {"pass": 2},
            "pass_rate": 1.0,
            "attestation": {"verdict": "DIRTY", "sealed": 2, "clean": 1},
        },
    }
    dirty_id = save_run(tmp_path, record)
    clean = {**record, "results": record["results"][:1]}
    clean["summary"] = {**record["summary"], "attestation": {"verdict": "CLEAN", "sealed": 1}}
    clean_id = save_run(tmp_path, clean)
    unsealed_id = save_run(tmp_path, {**clean, "summary": {"total": 1, "counts": {}}})
    with serving(tmp_path) as address:
        assert get(address, f"/api/runs/{dirty_id}")[2]["attestation"] == {
            "verdict": "DIRTY",
            "sealed": 2,
            "clean": 1,
            "reasons": [f"t2: {dirty}"],
        }
        assert get(address, f"/api/runs/{clean_id}")[2]["attestation"] == {
            "verdict": "CLEAN",
            "sealed": 1,
            "clean": None,  # not in the record: not made up
            "reasons": [],
        }
        assert get(address, f"/api/runs/{unsealed_id}")[2]["attestation"] is None


# --------------------------------------------------------------------------- compare


def test_two_runs_compared_put_the_regressions_first(project: Path) -> None:
    baseline_run, check, _ = _ids(project)
    with serving(project) as address:
        status, _, body = get(address, f"/api/compare?a={baseline_run}&b={check}")
    assert status == 200
    assert body["a"]["run_id"] == baseline_run and body["b"]["run_id"] == check
    assert (body["before"], body["after"]) == (baseline_run, check)
    changes = [(r["id"], r["change"], r["delta"]) for r in body["rows"]]
    assert changes[2] == ("capital-it", "same", 0.0)
    assert sorted(changes[:2]) == [
        ("capital-es", "regressed", -1.0),
        ("capital-fr", "regressed", -1.0),
    ]
    top = body["rows"][0]
    assert top["before"]["status"] == "pass" and top["after"]["status"] == "fail"
    assert top["after"]["output"] == "no idea"
    assert body["conclusion"]["gate"] == "failed"
    assert {r["id"] for r in body["conclusion"]["regressions"]} == {"capital-fr", "capital-es"}


def test_a_run_compared_with_the_baseline(project: Path) -> None:
    check = _ids(project)[1]
    with serving(project) as address:
        status, _, body = get(address, f"/api/compare?a={check}&b=baseline")
        assert status == 200
        assert body["b"]["run_id"] == "baseline" and body["before"] == "baseline"
        assert body["rows"][0]["change"] == "regressed"
        assert body["rows"][0]["before"] == {"status": "pass", "score": 1.0, "output": None}
        (project / "assay-baseline.json").unlink()
        status, _, body = get(address, f"/api/compare?a={check}&b=baseline")
        assert status == 404 and body == {"error": "not found"}
        status, _, _ = get(address, "/api/compare?a=" + check)
        assert status == 404


# --------------------------------------------------------------------------- paths


def test_paths_that_try_to_leave_the_runs_folder_are_404_and_read_nothing(
    project: Path, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    import assay.io

    outside = tmp_path_factory.mktemp("outside")
    secret = json.loads((project / ".assay" / "runs" / f"{_ids(project)[0]}.json").read_text())
    secret["summary"]["mode"] = "OUTSIDE-SECRET"
    (outside / "secret.json").write_text(json.dumps(secret), encoding="utf-8")
    # A record in the runs folder that is a symlink out of it, named like a saved run.
    link = project / ".assay" / "runs" / "eval_run_20990101T000000_000000Z.json"
    link.symlink_to(outside / "secret.json")
    runs = (project / ".assay" / "runs").resolve()
    read: list[Path] = []
    real_read_json = assay.io.read_json

    def recording(path: Any, *args: Any, **kwargs: Any) -> Any:
        read.append(Path(path).resolve())
        return real_read_json(path, *args, **kwargs)

    monkeypatch.setattr(assay.io, "read_json", recording)
    escapes = [
        "/api/runs/..",
        "/api/runs/%2e%2e",
        "/api/runs/%2E%2E%2F%2E%2E%2Fassay.toml",
        "/api/runs/..%2f..%2fassay.toml",
        "/api/runs/%2Fetc%2Fpasswd",
        "/api/runs//etc/passwd",
        "/api/runs/../../assay.toml",
        f"/api/runs/{outside}/secret",
        "/api/runs/eval_run_20990101T000000_000000Z",
        "/api/runs/eval_run_20990101T000000_000000Z%00",
        "/api/runs/eval_run_x/goldens/capital-fr",
        f"/api/runs/{_ids(project)[0]}/goldens/..%2f..%2fassay.toml",
        f"/api/runs/{_ids(project)[0]}/goldens/%2e%2e",
        "/api/compare?a=..%2f..%2fsecret&b=baseline",
        f"/api/compare?a={_ids(project)[0]}&b=..%2Foutside",
        "/api/nothing",
        "/api/runs/%ff%fe",
        "/..%2fassay.toml",
        "/%2e%2e/assay.toml",
        "/static/../../assay.toml",
        "/../pyproject.toml",
    ]
    with serving(project) as address:
        for path in escapes:
            status, headers, body = get(address, path)
            assert status == 404, path
            assert headers["content-type"] == "application/json; charset=utf-8", path
            assert body == {"error": "not found"}, path
        _, _, listed = get(address, "/api/runs")
    assert "OUTSIDE-SECRET" not in json.dumps(listed)
    assert len(listed["runs"]) == 3 and listed["problems"] == []
    assert read and all(p.parent == runs for p in read), read


# --------------------------------------------------------------------------- damaged records


def test_a_damaged_record_is_one_problem_and_the_rest_are_served(project: Path) -> None:
    folder = project / ".assay" / "runs"
    broken, cut, retyped = (f"eval_run_20990101T000000_00000{i}Z" for i in range(3))
    (folder / f"{broken}.json").write_text("{not json", encoding="utf-8")
    good = _ids(project)[2]
    record = json.loads((folder / f"{good}.json").read_text(encoding="utf-8"))
    record["rows"][0] = ["capital-fr", "a"]  # a row cut short
    (folder / f"{cut}.json").write_text(json.dumps(record))
    record = json.loads((folder / f"{good}.json").read_text(encoding="utf-8"))
    record["summary"]["candidates"] = ["a"]  # hand-edited: a list of names, not of summaries
    (folder / f"{retyped}.json").write_text(json.dumps(record))
    with serving(project) as address:
        status, _, body = get(address, "/api/runs")
        assert status == 200
        assert len(body["runs"]) == 3
        problems = {p["run_id"]: p["error"] for p in body["problems"]}
        assert set(problems) == {broken, cut, retyped}
        for error in problems.values():
            assert "\n" not in error and "Traceback" not in error
        assert problems[broken].endswith(
            f"{broken}.json: invalid JSON: Expecting property name "
            "enclosed in double quotes: line 1 column 2 (char 1)"
        )
        assert "a damaged gate run record" in problems[cut] and "rows" in problems[cut]
        assert problems[retyped].endswith(
            f"{retyped}.json: a damaged run record: a field of the wrong type"
        )
        status, _, body = get(address, f"/api/runs/{cut}")
        assert status == 422 and "a damaged gate run record" in body["error"]
        status, _, body = get(address, f"/api/runs/{retyped}")
        assert status == 422 and body == {
            "error": "a damaged run record: a field of the wrong type"
        }
        status, _, body = get(address, f"/api/runs/{good}")
        assert status == 200 and len(body["results"]) == 3


# --------------------------------------------------------------------------- scale


def test_ten_thousand_results_are_served(tmp_path: Path) -> None:
    n = 10_000
    lines = [json.dumps({"id": f"g{i:05d}", "asserts": ["contains:ok"]}) for i in range(n)]
    (tmp_path / "goldens").mkdir()
    (tmp_path / "goldens" / "many.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    outputs = {f"g{i:05d}": "ok" if i % 10 else "no" for i in range(n)}
    (tmp_path / "outputs.json").write_text(json.dumps(outputs), encoding="utf-8")
    code, _, err = run_cli(["gate", "--outputs", "outputs.json"], tmp_path, timeout=60)
    assert code == 0, err
    [run_id] = _ids(tmp_path)
    with serving(tmp_path) as address:
        started = time.perf_counter()
        status, _, body = get(address, f"/api/runs/{run_id}")
        took = time.perf_counter() - started
    assert status == 200
    assert len(body["results"]) == n
    assert body["run"]["kind"] == "gate" and body["run"]["totals"]["fail"] == n // 10
    assert sum(r["status"] == "fail" for r in body["results"]) == n // 10
    print(f"/api/runs/ID with {n} results: {took * 1000:.0f} ms")
    assert took < 5.0  # generous for a loaded machine; the figure above is the one to read


def test_two_hundred_runs_are_listed_fast_and_none_read_at_start(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import assay.io

    folder = project / ".assay" / "runs"
    template = json.loads((folder / f"{_ids(project)[1]}.json").read_text(encoding="utf-8"))
    for i in range(197):
        run_id = f"eval_run_20260101T000000_{i:06d}Z"
        (folder / f"{run_id}.json").write_text(json.dumps({**template, "run_id": run_id}))
    reads: list[str] = []
    real_read_json = assay.io.read_json
    monkeypatch.setattr(
        assay.io, "read_json", lambda p, *a, **k: reads.append(str(p)) or real_read_json(p, *a, **k)
    )
    with serving(project) as address:
        assert get(address, "/")[0] == 200
        assert reads == []  # start-up and the page itself read no record
        started = time.perf_counter()
        _, _, body = get(address, "/api/runs")
        first = time.perf_counter() - started
        started = time.perf_counter()
        _, _, again = get(address, "/api/runs")
        second = time.perf_counter() - started
        assert len(reads) == 200
        get(address, f"/api/runs/{_ids(project)[0]}")
        assert len(reads) == 201  # one run opened: one record read
    assert len(body["runs"]) == 200 and again == body
    print(f"/api/runs with 200 runs: {first * 1000:.0f} ms, then {second * 1000:.0f} ms")
    assert first < 2.0 and second < 2.0  # generous bounds; the cache is proven by the reads


# --------------------------------------------------------------------------- one document


def test_one_run_document_is_served_alone(
    project: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    elsewhere = tmp_path_factory.mktemp("doc")
    saved = project / ".assay" / "runs" / f"{_ids(project)[1]}.json"
    shutil.copy(saved, elsewhere / "run.json")
    with serving(project, document=elsewhere / "run.json") as address:
        _, _, body = get(address, "/api/runs")
        assert [r["run_id"] for r in body["runs"]] == [saved.stem]
        status, _, body = get(address, f"/api/runs/{saved.stem}")
        assert status == 200 and len(body["results"]) == 3
        assert get(address, f"/api/runs/{_ids(project)[0]}")[0] == 404  # only that one
    # A --json report (no run id of its own) is the run "document".
    code, out, err = run_cli(["gate", "--example", "--json", "--no-save"], project)
    assert code == 0, err
    (elsewhere / "report.json").write_text(out, encoding="utf-8")
    with serving(project, document=elsewhere / "report.json") as address:
        _, _, body = get(address, "/api/runs")
        assert [r["run_id"] for r in body["runs"]] == ["document"]
        _, _, body = get(address, "/api/runs/document")
        rows = {r["id"]: r for r in body["results"]}
        assert len(rows) == 11 and rows["standard-summary-no-pii"]["status"] == "fail"
        # A --json report holds the reasons and a failed output: shown as the report has them.
        assert rows["standard-summary-no-pii"]["output"]


# --------------------------------------------------------------------------- the front end


def test_the_front_end_is_served_from_the_package(project: Path) -> None:
    with serving(project) as address:
        status, headers, body = get(address, "/")
        assert status == 200 and headers["content-type"] == "text/html; charset=utf-8"
        assert body.startswith(b"<!DOCTYPE html>")
        from importlib import resources

        for entry in (resources.files("assay.viewer") / "static").iterdir():
            status, headers, served = get(address, f"/{entry.name}")
            assert status == 200 and served == entry.read_bytes(), entry.name
        assert get(address, "/nothing.js")[0] == 404


def _recheck_project(root: Path, keep: bool) -> str:
    """A gate run over five goldens (outputs kept when ``keep``): its run id."""
    judge = {"op": "judge", "rubric": "a careful query"}
    goldens = [
        {"id": "sql", "input": "q", "asserts": ["contains:SELECT", "regex:\\bWHERE\\b"]},
        {"id": "rated", "input": "q", "asserts": ["contains:SELECT", judge]},
        {"id": "rushed", "input": "q", "asserts": ["contains:SELECT", judge]},
        {"id": "near", "input": "q", "asserts": ["contains:FROM", {"op": "similar", "value": "Q"}]},
        {"id": "ok", "input": "q", "asserts": ["contains:SELECT"]},
    ]
    (root / "goldens").mkdir(exist_ok=True)
    lines = "".join(json.dumps(g) + "\n" for g in goldens)
    (root / "goldens" / "g.jsonl").write_text(lines, encoding="utf-8")
    (root / "assay.toml").write_text(f"keep_outputs = {str(keep).lower()}\n", encoding="utf-8")
    outputs = {"sql": "SELECT name FROM users", "rated": "SELECT 1", "rushed": "DELETE"}
    outputs |= {"ok": "SELECT 1", "near": "SELECT 1"}
    (root / "outputs.json").write_text(json.dumps(outputs), encoding="utf-8")
    before = set(_ids(root))
    code, _, err = run_cli(["gate", "--outputs", "outputs.json"], root)
    assert code == 0, err
    [run_id] = set(_ids(root)) - before
    return run_id


def test_a_goldens_checks_are_recomputed_with_their_reasons(tmp_path: Path) -> None:
    run_id = _recheck_project(tmp_path, keep=True)
    record_text = (tmp_path / ".assay" / "runs" / f"{run_id}.json").read_text(encoding="utf-8")
    assert "WHERE" not in record_text  # the record keeps the failed op, never its reason
    with serving(tmp_path) as address:
        _, _, sql = get(address, f"/api/runs/{run_id}/goldens/sql")
        _, _, rated = get(address, f"/api/runs/{run_id}/goldens/rated")
        _, _, rushed = get(address, f"/api/runs/{run_id}/goldens/rushed")
        _, _, near = get(address, f"/api/runs/{run_id}/goldens/near")
        # The golden edited since the run: the recomputed verdict says it is not the run's.
        (tmp_path / "outputs.json").unlink()
        text = (tmp_path / "goldens" / "g.jsonl").read_text(encoding="utf-8")
        edited = text.replace("\\\\bWHERE\\\\b", "FROM")
        assert edited != text
        (tmp_path / "goldens" / "g.jsonl").write_text(edited, encoding="utf-8")
        _, _, changed = get(address, f"/api/runs/{run_id}/goldens/sql")
    assert sql["status"] == "fail" and sql["checks_source"] == "recomputed from the kept output"
    assert [(c["op"], c["passed"]) for c in sql["checks"]] == [
        ("contains", True),
        ("regex", False),
    ]
    assert "WHERE" in sql["checks"][1]["reason"] and sql["checks"][1]["evidence"]
    assert sql["recomputed"] == {"status": "fail", "score": 0.5, "note": None}
    # A judge assert left for the judge is as the run decided it (no model is called now).
    contains, judge = rated["checks"]
    assert contains == {"op": "contains", "passed": True, "reason": None, "recomputed": True}
    assert judge["op"] == "judge" and judge["recomputed"] is False and judge["passed"] is None
    assert judge["note"] == "decided by the judge when the run happened"
    assert rated["recomputed"] == {"status": "needs-judge", "score": None, "note": None}
    # One the cheap assert decided: the judge was skipped, then as now.
    contains, judge = rushed["checks"]
    assert contains["passed"] is False and "SELECT" in contains["reason"]
    assert judge["skipped"] is True and judge["recomputed"] is True
    assert rushed["recomputed"]["status"] == "fail" == rushed["status"]
    # A similarity is not worked out again either; the cheap assert beside it is.
    contains, similar = near["checks"]
    assert contains["passed"] is False and "FROM" in contains["reason"]
    assert similar["recomputed"] is False and "similarity" in similar["note"]
    assert near["recomputed"]["status"] is None and "similarity" in near["recomputed"]["note"]
    assert changed["recomputed"]["status"] == "pass" and changed["status"] == "fail"
    assert "the golden changed since" in changed["recomputed"]["note"]
    assert all(c["passed"] for c in changed["checks"])


def test_checks_are_the_records_when_no_output_was_kept(tmp_path: Path) -> None:
    run_id = _recheck_project(tmp_path, keep=False)
    with serving(tmp_path) as address:
        _, _, sql = get(address, f"/api/runs/{run_id}/goldens/sql")
    assert sql["checks_source"] == "the run record" and sql["recomputed"] is None
    assert sql["checks"] == [{"op": "regex", "passed": False, "reason": None}]
    assert sql["checks_note"].startswith("the run kept no output")


# --------------------------------------------------------------------------- outputs kept


def test_outputs_are_kept_only_when_asked(tmp_path: Path) -> None:
    _write_goldens(tmp_path)
    _eval(tmp_path, "{{ input }}")
    [run_id] = _ids(tmp_path)
    record = json.loads((tmp_path / ".assay" / "runs" / f"{run_id}.json").read_text())
    assert "outputs" not in record and record["command"] == "eval"  # off by default
    (tmp_path / "assay.toml").write_text("keep_outputs = true\n", encoding="utf-8")
    _eval(tmp_path, "{{ input }}")
    record = json.loads((tmp_path / ".assay" / "runs" / f"{_ids(tmp_path)[1]}.json").read_text())
    assert record["outputs"] == {
        "a": {"capital-fr": "Paris", "capital-it": "Rome", "capital-es": "Madrid"}
    }
    assert "Roma-SECRET-EXPECTED" not in json.dumps(record)
    (tmp_path / "assay.toml").write_text('keep_outputs = "yes"\n', encoding="utf-8")
    code, _, err = run_cli(["eval", "--candidates", "cands.yaml"], tmp_path)
    assert code == 1 and "keep_outputs" in err and len(err.splitlines()) == 1


def test_failing_repeats_answers_are_kept(tmp_path: Path) -> None:
    (tmp_path / "assay.toml").write_text("keep_outputs = true\n", encoding="utf-8")
    _write_goldens(tmp_path)
    (tmp_path / "cands.yaml").write_text(
        "provider: {type: echo}\nrepeats: 3\ncandidates:\n  - {id: a, prompt: 'say {{ input }}'}\n",
        encoding="utf-8",
    )
    eval_ = ["eval", "--candidates", "cands.yaml", "--no-cache"]
    code, _, err = run_cli([*eval_, "--json", "-o", "report.json"], tmp_path)
    assert code == 0, err
    expected = [{"output": "say Rome", "passed": False, "score": None, "count": 3}]
    # The saved record (outputs kept), and the run's --json report served alone: the same.
    for document in (None, tmp_path / "report.json"):
        with serving(tmp_path, document) as address:
            [summary] = get(address, "/api/runs")[2]["runs"]
            _, _, body = get(address, f"/api/runs/{summary['run_id']}")
        row = next(r for r in body["results"] if r["id"] == "capital-it")
        assert row["output"] == "say Rome" and row["repeats"] == expected, document


# --------------------------------------------------------------------------- git


def _gate_example(root: Path, env: dict[str, str | None] | None = None) -> dict[str, Any]:
    code, _, err = run_cli(["gate", "--example"], root, env={"GITHUB_SHA": None, **(env or {})})
    assert code == 0, err
    with serving(root) as address:
        return dict(get(address, "/api/runs")[2]["runs"][0])


def test_runs_say_the_branch_and_commit_they_ran_at(tmp_path: Path) -> None:
    sha = "0123456789abcdef0123456789abcdef01234567"
    git = tmp_path / ".git"
    (git / "refs" / "heads" / "feature").mkdir(parents=True)
    (git / "HEAD").write_text("ref: refs/heads/feature/viewer\n", encoding="utf-8")
    (git / "refs" / "heads" / "feature" / "viewer").write_text(sha + "\n", encoding="utf-8")
    project = tmp_path / "sub" / "project"  # a project inside the checkout
    project.mkdir(parents=True)
    assert _gate_example(project)["git"] == {"branch": "feature/viewer", "commit": sha}
    # A ref only in packed-refs, then a detached HEAD.
    (git / "refs" / "heads" / "feature" / "viewer").unlink()
    (git / "packed-refs").write_text(f"# pack-refs\n{sha} refs/heads/feature/viewer\n")
    assert _gate_example(project)["git"] == {"branch": "feature/viewer", "commit": sha}
    (git / "HEAD").write_text(sha + "\n", encoding="utf-8")
    assert _gate_example(project)["git"] == {"branch": None, "commit": sha}
    # On GitHub Actions, its own names.
    on_ci = {"GITHUB_SHA": "f" * 40, "GITHUB_HEAD_REF": "", "GITHUB_REF_NAME": "main"}
    assert _gate_example(project, on_ci)["git"] == {"branch": "main", "commit": "f" * 40}


def test_a_run_outside_git_has_no_git_state(tmp_path: Path) -> None:
    assert _gate_example(tmp_path)["git"] is None


# --------------------------------------------------------------------------- live


def test_a_running_eval_keeps_a_live_progress_file(tmp_path: Path) -> None:
    # The model is the project's python function: while the run goes it reports what the
    # live folder holds, which the kept outputs carry back.
    (tmp_path / "assay.toml").write_text("keep_outputs = true\n", encoding="utf-8")
    _write_goldens(tmp_path)
    (tmp_path / "spy.py").write_text(
        "import json, os, time\n"
        "def answer(prompt):\n"
        "    time.sleep(0.3)\n"
        "    folder = os.path.join('.assay', 'live')\n"
        "    names = sorted(os.listdir(folder)) if os.path.isdir(folder) else []\n"
        "    states = []\n"
        "    for name in names:\n"
        "        with open(os.path.join(folder, name)) as handle:\n"
        "            states.append(json.load(handle))\n"
        "    return json.dumps([[s['kind'], s['done'], s['total']] for s in states])\n",
        encoding="utf-8",
    )
    (tmp_path / "cands.yaml").write_text(
        "provider: {type: python, function: 'spy:answer'}\nmax_concurrency: 1\n"
        "candidates:\n  - {id: a, prompt: '{{ input }}'}\n",
        encoding="utf-8",
    )
    code, _, err = run_cli(["eval", "--candidates", "cands.yaml", "--no-cache"], tmp_path)
    assert code == 0, err
    with serving(tmp_path) as address:
        _, _, body = get(address, f"/api/runs/{_ids(tmp_path)[0]}")
        assert get(address, "/api/live")[2] == {"runs": []}  # the run is over: its file gone
    seen = [json.loads(r["output"]) for r in body["results"]]
    assert [] in seen[:1]  # before the first call was done, no progress yet
    assert ["eval", 2, 3] in [s[0] for s in seen if s]  # the third call saw two done
    assert not (tmp_path / ".assay" / "live").exists()


def test_live_runs_list_running_processes_only(tmp_path: Path) -> None:
    from assay.viewer import live_run

    with live_run(tmp_path, "eval") as live, serving(tmp_path) as address:
        assert get(address, "/api/live")[2] == {"runs": []}  # nothing written yet
        live.update(3, 10, {"id": "g1", "candidate": "a", "status": "pass", "score": 1.0})
        [run] = get(address, "/api/live")[2]["runs"]
        assert (run["kind"], run["done"], run["total"]) == ("eval", 3, 10)
        assert run["pid"] == os.getpid()  # the live page's key for a run and its label
        assert run["results_so_far"] == [
            {"id": "g1", "candidate": "a", "status": "pass", "score": 1.0}
        ]
        # A file left by a process that died is not a run in progress.
        dead = spawn(["--version"], tmp_path)
        dead.communicate(timeout=30)
        stale = dict(live.state, pid=dead.pid)
        (tmp_path / ".assay" / "live" / "0_stale.json").write_text(json.dumps(stale))
        (tmp_path / ".assay" / "live" / "1_torn.json").write_text("{")
        assert len(get(address, "/api/live")[2]["runs"]) == 1
    assert not live.path.exists()


# --------------------------------------------------------------------------- the command


def test_assay_view_prints_its_url_serves_and_stops_on_ctrl_c(project: Path) -> None:
    process = spawn(["view", "--port", "0"], project)
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        match = re.fullmatch(r"assay view: http://127\.0\.0\.1:(\d+)/\n", line)
        assert match, line
        status, _, body = get(("127.0.0.1", int(match.group(1))), "/api/runs")
        assert status == 200 and len(body["runs"]) == 3
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=10)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130
    assert out == "" and err.strip() == "assay: interrupted"  # click's newline first


def test_a_host_that_is_not_loopback_is_warned_about(tmp_path: Path) -> None:
    # 192.0.2.1 (TEST-NET-1) is no address of this machine: the warning, then the bind fails.
    code, out, err = run_cli(["view", "--host", "192.0.2.1", "--port", "0"], tmp_path)
    assert code == 1 and out == ""
    warning, error = err.splitlines()
    assert warning.startswith("assay: warning: --host 192.0.2.1 is not loopback")
    assert error.startswith("assay: error: cannot serve on 192.0.2.1:0: ")
    code, _, err = run_cli(["view", "missing.json"], tmp_path)
    assert code == 1 and err == "assay: error: missing.json: no such run document\n"


def test_a_busy_port_is_one_line(tmp_path: Path) -> None:
    from assay.viewer import make_server

    server = make_server(tmp_path, port=0)
    try:
        port = server.server_address[1]
        code, _, err = run_cli(["view", "--port", str(port)], tmp_path)
    finally:
        server.server_close()
    assert code == 1 and err.startswith(f"assay: error: cannot serve on 127.0.0.1:{port}: ")
    assert len(err.splitlines()) == 1


def test_the_viewer_module_is_not_imported_by_a_gate_run(tmp_path: Path) -> None:
    import subprocess
    import sys

    probe = (
        "import sys\nfrom assay.cli import main\n"
        "try:\n    main(['gate', '--example', '-q'])\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in sys.modules if m.startswith(('assay.viewer', 'http.server'))))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )
    assert done.stdout.splitlines()[-1] == "[]", done.stderr


@pytest.mark.parametrize(
    ("host", "status"),
    [
        ("attacker.example:8765", 403),  # a rebound name: a web page reading through the browser
        ("127.0.0.1.attacker.example", 403),
        ("localhost:1234", 200),
        ("127.0.0.1", 200),
        ("[::1]:8765", 200),
    ],
)
def test_a_loopback_viewer_answers_loopback_host_names_only(
    project: Path, host: str, status: int
) -> None:
    with serving(project) as address:
        for path in ("/api/runs", "/"):
            connection = http.client.HTTPConnection(*address, timeout=10)
            try:
                connection.putrequest("GET", path, skip_host=True)
                connection.putheader("Host", host)
                connection.endheaders()
                response = connection.getresponse()
                response.read()
            finally:
                connection.close()
            assert response.status == status, (host, path)
