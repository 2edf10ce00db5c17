"""End-to-end tests of ``assay gate``: the goldens gate as a user drives it from a shell."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.cli import CliRunner
from tests.helpers.goldens import ORIGIN, GoldensProject, write_golden, write_json

ROW = re.compile(r"^  (PASS|FAIL|NEEDS-JUDGE|NO-OUTPUT|ERROR)\s+(\S+)\s+(\S+)(.*)$")


def report_rows(stdout: str) -> dict[str, tuple[str, str, str]]:
    """Parse the text report's per-golden rows: id -> (LABEL, decided_by, rest of the line)."""
    rows: dict[str, tuple[str, str, str]] = {}
    for line in stdout.splitlines():
        m = ROW.match(line)
        if m:
            label, golden_id, decided_by, rest = m.groups()
            assert golden_id not in rows, f"two rows for {golden_id}"
            rows[golden_id] = (label, decided_by, rest.strip())
    return rows


def load_json_stdout(stdout: str) -> dict[str, Any]:
    document = json.loads(stdout)  # one JSON document, nothing else on stdout
    assert isinstance(document, dict)
    return document


def by_id(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["id"]: r for r in document["results"]}


# --------------------------------------------------------------------------- 1. the seed self-test


def test_seed_self_test_write_check_and_regression(cli: CliRunner, project: GoldensProject) -> None:
    code, out, err = cli("gate", "goldens", "--outputs", "good.json", "--write-baseline")
    assert code == 0, err
    assert err == ""
    rows = report_rows(out)
    assert rows["sql-active-users"][0] == "PASS"
    assert rows["json-invoice"][0] == "PASS"
    assert project.baseline.is_file()
    assert "baseline written: assay-baseline.json" in out  # relative to the project

    baseline = json.loads(project.baseline.read_text(encoding="utf-8"))
    assert baseline["schema_version"] == 2
    entries = baseline["goldens"]["default"]
    assert set(entries) == {"sql-active-users", "json-invoice"}
    for entry in entries.values():
        assert entry["passed"] is True
        assert entry["status"] == "pass"
        assert entry["score"] == 1.0
        assert entry["decided_by"] == "tier1-asserts"
        assert entry["fingerprint"].startswith("sha256:")
    written = project.baseline.read_bytes()

    code, out, err = cli("gate", "goldens", "--outputs", "good.json", "--check")
    assert code == 0, out + err
    assert "0 regression(s)" in out
    assert "gate: passed" in out
    assert "REGRESSED" not in out
    assert project.baseline.read_bytes() == written  # --check never rewrites the baseline

    code, out, err = cli("gate", "goldens", "--outputs", "broken.json", "--check")
    assert code == 2, out + err
    assert "Traceback" not in err
    regressed = [line for line in out.splitlines() if "REGRESSED" in line]
    assert len(regressed) == 1
    assert "sql-active-users" in regressed[0]
    assert "contains:FROM" in regressed[0]
    assert "json-invoice" not in regressed[0]
    assert report_rows(out)["sql-active-users"][0] == "FAIL"
    assert "gate: FAILED (exit 2)" in out
    assert project.baseline.read_bytes() == written


def test_check_json_document_names_regressions(cli: CliRunner, project: GoldensProject) -> None:
    code, _, err = cli("gate", "goldens", "--outputs", "good.json", "--write-baseline")
    assert code == 0, err

    code, out, err = cli("gate", "goldens", "--outputs", "broken.json", "--json", "--check")
    assert code == 2, err
    document = load_json_stdout(out)
    assert {"results", "summary", "regressions"} <= set(document)
    results = by_id(document)
    assert set(results) == {"sql-active-users", "json-invoice"}
    sql = results["sql-active-users"]
    assert sql["status"] == "fail"
    assert sql["passed"] is False
    assert sql["score"] == 0.5
    assert sql["decided_by"] == "tier1-asserts"
    failed = [c for c in sql["checks"] if not c["passed"]]
    assert [c["text"] for c in failed] == ["contains:FROM"]
    assert failed[0]["op"] == "contains"
    assert results["json-invoice"]["status"] == "pass"

    regressions = document["regressions"]
    assert len(regressions) == 1
    assert regressions[0]["id"] == "sql-active-users"
    assert "contains:FROM" in regressions[0]["why"]
    assert document["summary"]["gate"] == "failed"
    assert document["summary"]["counts"]["pass"] == 1
    assert document["summary"]["counts"]["fail"] == 1
    assert document["summary"]["pass_rate"] == 0.5


def test_check_json_without_regression_has_empty_list(
    cli: CliRunner, project: GoldensProject
) -> None:
    assert cli("gate", "goldens", "--outputs", "good.json", "--write-baseline")[0] == 0
    code, out, err = cli("gate", "goldens", "--outputs", "good.json", "--check", "--json")
    assert code == 0, err
    document = load_json_stdout(out)
    assert document["regressions"] == []
    assert document["summary"]["gate"] == "passed"
    assert document["summary"]["pass_rate"] == 1.0


# ------------------------------------------------------------------- 2. tier 3 and tier 2 decisions


RUBRIC_ONLY = """\
id: explain-cache
input: "Explain what a cache is."
rubric: "Mentions that a cache trades memory for speed."
"""


def test_rubric_only_golden_is_needs_judge_over_cli(cli: CliRunner, tmp_path: Path) -> None:
    write_golden(tmp_path / "goldens", "explain-cache.md", RUBRIC_ONLY, ORIGIN)
    write_json(tmp_path / "out.json", {"explain-cache": "A cache keeps hot data close."})
    code, out, err = cli("gate", "goldens", "--outputs", "out.json", "--json")
    assert code == 0, err
    result = by_id(load_json_stdout(out))["explain-cache"]
    assert result["status"] == "needs-judge"
    assert result["passed"] is None
    assert result["score"] is None
    assert result["decided_by"] == "tier3-judge"
    assert result["checks"] == []
    assert any("tier 2 skipped" in n for n in result["notes"])

    code, out, err = cli("gate", "goldens", "--outputs", "out.json")
    assert code == 0, err
    assert report_rows(out)["explain-cache"][:2] == ("NEEDS-JUDGE", "tier3-judge")


@pytest.mark.parametrize("judge_block", ["", "[judge]\nverified = false\n"])
def test_judge_is_never_called_in_deterministic_mode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, judge_block: str
) -> None:
    import assay.cascade._judge
    from assay.config import load_config
    from assay.gate._run import GateOptions, run_gate

    # The gate reaches the judge through assay.cascade.apply_judge (cascade._judge's, which calls
    # judge_texts and the model runner): that is what is patched, and the control at the end
    # proves it is on the path.
    judged: list[list[str]] = []

    def recording_apply_judge(pending: Any, settings: Any, **kwargs: Any) -> list[Any]:
        judged.append([result.id for result, _output, _golden in pending])
        return [result for result, _output, _golden in pending]

    def exploding(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the judge must never be called in deterministic mode")

    # The module objects the gate imports from (sys.modules), not attributes reached through
    # the assay package: those can name an earlier import of the same module.
    monkeypatch.setattr(sys.modules["assay.cascade"], "apply_judge", recording_apply_judge)
    monkeypatch.setattr(sys.modules["assay.cascade._judge"], "judge_texts", exploding)
    monkeypatch.setattr(assay.cascade._judge, "judge", exploding)
    if judge_block:
        (tmp_path / "assay.toml").write_text(judge_block, encoding="utf-8")
    write_golden(tmp_path / "goldens", "explain-cache.md", RUBRIC_ONLY, ORIGIN)
    outputs = write_json(tmp_path / "out.json", {"explain-cache": "A cache keeps hot data close."})

    config = load_config(tmp_path)
    for similarity in (None, "difflib", "rapidfuzz"):
        run = run_gate(
            GateOptions(path=tmp_path / "goldens", outputs=outputs, similarity=similarity), config
        )
        assert run.exit_code == 0
        assert len(run.results) == 1
        result = run.results[0]
        assert result.id == "explain-cache"
        assert result.status == "needs-judge"
        assert result.passed is None
        assert result.score is None
        assert result.decided_by == "tier3-judge"
    assert judged == []

    # Control: asking for the judge sends the same golden through the patched function, so the
    # assertion above would fail if deterministic mode called the judge.
    run_gate(GateOptions(path=tmp_path / "goldens", outputs=outputs, judge=True), config)
    assert judged == [["explain-cache"]]


def test_verified_judge_without_a_provider_is_a_config_error(
    cli: CliRunner, tmp_path: Path
) -> None:
    # verified = true makes tier 3 run the judge; with no [judge.provider] it cannot, and the run
    # must say so instead of silently leaving goldens undecided.
    (tmp_path / "assay.toml").write_text("[judge]\nverified = true\n", encoding="utf-8")
    write_golden(tmp_path / "goldens", "explain-cache.md", RUBRIC_ONLY, ORIGIN)
    write_json(tmp_path / "out.json", {"explain-cache": "A cache keeps hot data close."})
    code, _out, err = cli("gate", "goldens", "--outputs", "out.json")
    assert code == 1
    assert "judge.provider" in err
    assert "Traceback" not in err


SIMILAR = """\
id: fox
input: "Describe the fox."
expected: "the quick brown fox jumps over the lazy dog"
"""


def test_rapidfuzz_decides_golden_without_asserts(cli: CliRunner, tmp_path: Path) -> None:
    from rapidfuzz import fuzz

    expected = "the quick brown fox jumps over the lazy dog"
    close = "the quick brown fox jumped over the lazy dog"
    far = "completely unrelated text about tax returns"
    close_score = fuzz.ratio(close, expected) / 100
    far_score = fuzz.ratio(far, expected) / 100
    assert close_score >= 0.8 > far_score  # the test's own premise (default threshold 0.8)

    write_golden(tmp_path / "goldens", "fox.md", SIMILAR, ORIGIN)
    write_json(tmp_path / "close.json", {"fox": close})
    write_json(tmp_path / "far.json", {"fox": far})

    code, out, err = cli(
        "gate", "goldens", "--outputs", "close.json", "--similarity", "rapidfuzz", "--json"
    )
    assert code == 0, err
    result = by_id(load_json_stdout(out))["fox"]
    assert result["decided_by"] == "tier2-rapidfuzz"
    assert result["status"] == "pass"
    assert result["passed"] is True
    assert result["score"] == pytest.approx(close_score)

    code, out, err = cli(
        "gate", "goldens", "--outputs", "far.json", "--similarity", "rapidfuzz", "--json"
    )
    assert code == 0, err
    result = by_id(load_json_stdout(out))["fox"]
    assert result["decided_by"] == "tier2-rapidfuzz"
    assert result["status"] == "fail"
    assert result["passed"] is False
    assert result["score"] == pytest.approx(far_score)

    # Without a backend the same golden is not decided by tier 2: it escalates to needs-judge.
    code, out, err = cli("gate", "goldens", "--outputs", "far.json", "--json")
    assert code == 0, err
    result = by_id(load_json_stdout(out))["fox"]
    assert result["status"] == "needs-judge"
    assert result["decided_by"] == "tier3-judge"


# ------------------------------------------------------------------------------- 3. text report


def test_text_report_rows_and_summary(cli: CliRunner, tmp_path: Path) -> None:
    goldens = tmp_path / "goldens"
    write_golden(goldens, "passes.md", "expected: hello\nasserts:\n  - 'contains:hello'\n", ORIGIN)
    write_golden(
        goldens,
        "fails.md",
        "expected: hello\nasserts:\n  - 'contains:hello'\n  - 'regex:^world$'\n",
        ORIGIN,
    )
    write_golden(goldens, "judged.md", "rubric: 'Is it polite?'\n", ORIGIN)
    write_golden(goldens, "absent.md", "expected: x\nasserts:\n  - 'contains:x'\n", ORIGIN)
    write_json(
        tmp_path / "out.json", {"passes": "hello there", "fails": "hello", "judged": "Thanks!"}
    )

    code, out, err = cli("gate", "goldens", "--outputs", "out.json")
    assert code == 0, err  # a report with failing goldens still exits 0
    assert err == ""
    rows = report_rows(out)
    assert set(rows) == {"passes", "fails", "judged", "absent"}
    assert rows["passes"][:2] == ("PASS", "tier1-asserts")
    assert rows["passes"][2] == ""
    assert rows["fails"][:2] == ("FAIL", "tier1-asserts")
    assert "regex:^world$" in rows["fails"][2]
    assert "contains:hello" not in rows["fails"][2]  # only the failed asserts are listed
    assert rows["judged"][:2] == ("NEEDS-JUDGE", "tier3-judge")
    assert rows["absent"][0] == "NO-OUTPUT"

    summary = [line for line in out.splitlines() if line.startswith("summary:")]
    assert summary == [
        "summary: 4 goldens: 1 pass, 1 fail, 1 needs-judge, 1 no-output, 0 error · "
        "pass rate 25.0% · mean score 0.500"
    ]
    assert "gate:" not in out  # a plain report is not a gate

    code, out, err = cli("gate", "goldens", "--outputs", "out.json", "--json")
    assert code == 0, err
    results = by_id(load_json_stdout(out))
    absent = results["absent"]
    assert absent["status"] == "no-output"
    assert absent["passed"] is False
    assert absent["score"] == 0.0


def test_report_written_to_output_file(cli: CliRunner, project: GoldensProject) -> None:
    code, out, err = cli(
        "gate", "goldens", "--outputs", "good.json", "--json", "--output", "r.json"
    )
    assert code == 0, err
    assert out == ""
    document = json.loads((project.root / "r.json").read_text(encoding="utf-8"))
    assert {r["id"] for r in document["results"]} == {"sql-active-users", "json-invoice"}


# -------------------------------------------------------------------------------- 4. --self-test


def test_self_test_consistent_goldens_exit_0(cli: CliRunner, project: GoldensProject) -> None:
    code, out, err = cli("gate", "goldens", "--self-test")
    assert code == 0, out + err
    assert "self-test: 2 golden(s) checked" in out
    assert "self-test: OK" in out
    assert "INCONSISTENT" not in out
    assert "warning" not in out  # both goldens carry an Origin section


def _inconsistent_suite(goldens: Path) -> None:
    write_golden(
        goldens, "good.md", "expected: 'SELECT 1 FROM t'\nasserts:\n  - 'contains:FROM'\n", ORIGIN
    )
    write_golden(
        goldens,
        "bad-sql.md",
        "expected: 'SELECT 1'\nasserts:\n  - 'contains:FROM'\n  - 'contains:SELECT'\n",
        ORIGIN,
    )
    write_golden(goldens, "bad-json.md", "expected: 'not json'\nasserts:\n  - is-json\n", ORIGIN)
    # Consistent, but no '## Origin' section: a warning, never a failure.
    write_golden(goldens, "no-origin.md", "expected: hi\nasserts:\n  - 'contains:hi'\n", "body\n")


def test_self_test_names_every_inconsistent_golden(cli: CliRunner, tmp_path: Path) -> None:
    _inconsistent_suite(tmp_path / "goldens")
    code, out, err = cli("gate", "goldens", "--self-test")
    assert code == 1, out + err
    assert "Traceback" not in err
    inconsistent = [line for line in out.splitlines() if "INCONSISTENT" in line]
    assert len(inconsistent) == 2
    assert any("bad-sql" in line for line in inconsistent)
    assert any("bad-json" in line for line in inconsistent)
    assert "contains:FROM" in out
    assert "is-json" in out
    assert not any(re.search(r"INCONSISTENT\s+good\b", line) for line in inconsistent)
    assert "self-test: 2 inconsistent golden(s)" in out
    warnings = [line for line in out.splitlines() if "warning" in line]
    assert len(warnings) == 1
    assert "no-origin" in warnings[0]


def test_missing_origin_warns_but_passes(cli: CliRunner, tmp_path: Path) -> None:
    goldens = tmp_path / "goldens"
    write_golden(goldens, "a.md", "expected: hi\nasserts:\n  - 'contains:hi'\n", "no origin\n")
    write_golden(goldens, "b.md", "expected: yo\nasserts:\n  - 'equals:yo'\n", ORIGIN)
    code, out, err = cli("gate", "goldens", "--self-test")
    assert code == 0, out + err
    warnings = [line for line in out.splitlines() if "warning" in line]
    assert len(warnings) == 1
    assert " a:" in warnings[0]
    assert "Origin" in warnings[0]
    assert "self-test: OK" in out


def test_self_test_json(cli: CliRunner, tmp_path: Path) -> None:
    _inconsistent_suite(tmp_path / "goldens")
    code, out, err = cli("gate", "goldens", "--self-test", "--json")
    assert code == 1, err
    document = load_json_stdout(out)
    assert document["ok"] is False
    assert document["checked"] == 4
    assert sorted(i["id"] for i in document["inconsistent"]) == ["bad-json", "bad-sql"]
    bad_sql = next(i for i in document["inconsistent"] if i["id"] == "bad-sql")
    assert bad_sql["source"].endswith("bad-sql.md")
    assert [c["text"] for c in bad_sql["failed"]] == ["contains:FROM"]
    assert document["no_origin"] == ["no-origin"]

    goldens = tmp_path / "goldens"
    (goldens / "bad-sql.md").unlink()
    (goldens / "bad-json.md").unlink()
    code, out, err = cli("gate", "goldens", "--self-test", "--json")
    assert code == 0, err
    document = load_json_stdout(out)
    assert document["ok"] is True
    assert document["inconsistent"] == []
    assert document["checked"] == 2


# ------------------------------------------------------------------ 5. --write-baseline refusal


def test_write_baseline_refuses_to_disarm_the_gate(cli: CliRunner, project: GoldensProject) -> None:
    assert cli("gate", "goldens", "--outputs", "good.json", "--write-baseline")[0] == 0
    before = project.baseline.read_bytes()
    write_json(project.root / "empty.json", {})

    code, out, err = cli("gate", "goldens", "--outputs", "empty.json", "--write-baseline")
    assert code == 1, out + err
    assert "Traceback" not in err
    assert "assay-baseline.json" in err
    assert "--force" in err
    assert project.baseline.read_bytes() == before

    code, out, err = cli(
        "gate", "goldens", "--outputs", "empty.json", "--write-baseline", "--force"
    )
    assert code == 0, err
    after = json.loads(project.baseline.read_text(encoding="utf-8"))
    assert after["schema_version"] == 2
    statuses = {e["status"] for e in after["goldens"]["default"].values()}
    assert statuses == {"no-output"}
    assert project.baseline.read_bytes() != before


def test_write_baseline_honours_baseline_flag(cli: CliRunner, project: GoldensProject) -> None:
    code, _, err = cli(
        "gate", "goldens", "--outputs", "good.json", "--write-baseline", "--baseline", "ci/b.json"
    )
    assert code == 0, err
    assert json.loads((project.root / "ci" / "b.json").read_text())["schema_version"] == 2
    assert not project.baseline.exists()
    code, out, err = cli(
        "gate", "goldens", "--outputs", "broken.json", "--check", "--baseline", "ci/b.json"
    )
    assert code == 2, err
    assert "REGRESSED  sql-active-users" in out


# -------------------------------------------------------------------------- 6. multi-candidate


def _ranking_suite(tmp_path: Path) -> None:
    goldens = tmp_path / "goldens"
    for name, a, b in (("g1", "A", "B"), ("g2", "C", "D"), ("g3", "E", "F")):
        write_golden(
            goldens, f"{name}.md", f"asserts:\n  - 'contains:{a}'\n  - 'contains:{b}'\n", ORIGIN
        )
    full = {"g1": "AB", "g2": "CD", "g3": "EF"}
    write_json(
        tmp_path / "cands.json",
        {
            # mean 0.5, pass rate 0: outranks one-hit (lower pass rate, higher mean)
            "partial": {"g1": "A", "g2": "C", "g3": "E"},
            # mean 1/3, pass rate 1/3
            "one-hit": {"g1": "AB", "g2": "x", "g3": "x"},
            # mean 0.5, pass rate 1/3: ties partial on mean, wins on pass rate
            "tie-pass": {"g1": "AB", "g2": "C", "g3": "x"},
            # identical perfect candidates: the tie is broken by id (code-point order)
            "zeta": full,
            "alpha": full,
            "Zulu": full,
        },
    )


EXPECTED_RANKING = ["Zulu", "alpha", "zeta", "tie-pass", "partial", "one-hit"]


def test_multi_candidate_json_ranking(cli: CliRunner, tmp_path: Path) -> None:
    _ranking_suite(tmp_path)
    code, out, err = cli("gate", "goldens", "--outputs", "cands.json", "--json")
    assert code == 0, err
    document = load_json_stdout(out)
    ranked = document["summary"]["candidates"]
    assert [c["candidate"] for c in ranked] == EXPECTED_RANKING
    stats = {c["candidate"]: (c["mean_score"], c["pass_rate"]) for c in ranked}
    assert stats["alpha"] == (1.0, 1.0)
    assert stats["Zulu"] == (1.0, 1.0)
    assert stats["partial"] == (pytest.approx(0.5), 0.0)
    assert stats["tie-pass"] == (pytest.approx(0.5), pytest.approx(1 / 3))
    assert stats["one-hit"] == (pytest.approx(1 / 3), pytest.approx(1 / 3))
    assert len(document["results"]) == 18
    cells = {(r["candidate"], r["id"]): r for r in document["results"]}
    assert cells[("partial", "g2")]["status"] == "fail"
    assert cells[("partial", "g2")]["score"] == 0.5
    assert cells[("one-hit", "g1")]["status"] == "pass"


def test_multi_candidate_text_matrix_and_ranking(cli: CliRunner, tmp_path: Path) -> None:
    _ranking_suite(tmp_path)
    code, out, err = cli("gate", "goldens", "--outputs", "cands.json")
    assert code == 0, err
    lines = out.splitlines()
    assert any(line.startswith("matrix") for line in lines)
    m = lines.index(next(line for line in lines if line.startswith("matrix")))
    header = lines[m + 1].split()
    assert header == EXPECTED_RANKING
    matrix_rows = {line.split()[0]: line.split()[1:] for line in lines[m + 2 : m + 5]}
    assert set(matrix_rows) == {"g1", "g2", "g3"}
    # each cell is "<LABEL> <score>", in the header's candidate order
    g1 = matrix_rows["g1"]
    assert g1[0::2] == ["PASS", "PASS", "PASS", "PASS", "FAIL", "PASS"]
    assert g1[1::2] == ["1.000", "1.000", "1.000", "1.000", "0.500", "1.000"]

    r = lines.index(next(line for line in lines if line.startswith("ranking")))
    ranking = [line.strip() for line in lines[r + 1 : r + 1 + len(EXPECTED_RANKING)]]
    assert [line.split(":")[0] for line in ranking] == [
        f"{i}. {name}" for i, name in enumerate(EXPECTED_RANKING, start=1)
    ]
    assert ranking[0].startswith("1. Zulu: mean score 1.000, pass rate 100.0%")
    assert ranking[-1].startswith("6. one-hit: mean score 0.333, pass rate 33.3%")
    for name in EXPECTED_RANKING:
        assert f"candidate {name}:" in out


# ------------------------------------------------------------------------------- 7. --example


def test_example_runs_from_an_empty_directory(cli: CliRunner, tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    code, out, err = cli("gate", "--example", cwd=empty)
    assert code == 0, err
    assert "smoke-sql-active-users" in out
    assert report_rows(out)["smoke-sql-active-users"][:2] == ("PASS", "tier1-asserts")

    code, out, err = cli("gate", "--example", "--json", cwd=empty)
    assert code == 0, err
    results = by_id(load_json_stdout(out))
    assert results["smoke-sql-active-users"]["status"] == "pass"
