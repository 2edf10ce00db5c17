"""The run history page (``assay runs list --format html``): every saved run, newest first, the
pass rate per run as an SVG chart; no script and no URL, drawn in a real browser without an
error or a request."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from assay.views._history import render_history
from tests.helpers.cli import run_cli
from tests.views.test_html_browser import browser, load  # noqa: F401 - the fixtures

ROWS: list[dict[str, Any]] = [
    {
        "run_id": "eval_run_1",
        "kind": "gate",
        "created_at": "t1",
        "total": 10,
        "pass_rate": 0.9,
        "outcome": "gate passed",
    },
    {
        "run_id": "eval_run_2<b>",
        "kind": "gate",
        "created_at": "t2",
        "total": 10,
        "pass_rate": 0.6,
        "outcome": "gate failed",
    },
    {
        "run_id": "eval_run_3",
        "kind": "agent",
        "created_at": "t3",
        "total": 5,
        "pass_rate": None,
        "outcome": "score 0.225",
    },
]


def test_the_page_lists_runs_newest_first_with_a_chart_and_nothing_to_run() -> None:
    page = render_history(ROWS)
    rows = re.findall(r"<tr><td>([^<]*)</td>", page)
    assert rows == ["eval_run_3", "eval_run_2&lt;b&gt;", "eval_run_1"]  # escaped, newest first
    assert page.count("<circle ") == 2  # a dot per run with a pass rate
    assert '<td class="failed">failed</td>' in page
    assert "<th>what</th>" in page and "<td>-</td>" in page  # no mode or selection recorded
    assert "<script" not in page and "http" not in page.replace("http-equiv", "")
    assert "default-src 'none'" in page.replace("&#x27;", "'")


def test_runs_list_writes_the_page(tmp_path: Path) -> None:
    for _ in range(3):
        run_cli(["gate", "--example"], tmp_path)
    code, out, err = run_cli(["runs", "list", "-f", "html"], tmp_path)
    assert code == 0, err
    assert out.count("<tr><td>eval_run_") == 3
    assert out.count("<td>report</td>") == 3  # what each run was: its mode
    code, _, err = run_cli(["runs", "list", "--json", "-f", "html"], tmp_path)
    assert code == 1 and "--json and --format html" in err


def test_the_page_draws_in_a_browser_without_errors_or_requests(load: Any) -> None:  # noqa: F811
    loaded = load(render_history(ROWS), "history.html")
    assert loaded.errors == []
    assert loaded.requests == [loaded.url]
    assert loaded.page.locator("tbody tr").count() == 3
    assert loaded.page.locator("svg circle").count() == 2
