"""The HTML report, in a real headless Chromium (Debian's, driven by Playwright).

The browser tests skip only when ``/usr/bin/chromium`` or the ``playwright`` package is missing;
the embedding tests at the top run everywhere. No test measures time: ``bench/html_bench.py``
reports how long a 10,000-golden page takes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from assay.asserts import CheckResult
from assay.config import load_config
from assay.gate import Verdict
from assay.gate._run import GateOptions, GateRun, load_selected, run_gate
from assay.goldens import Golden
from assay.models._static import load_outputs
from assay.results import ReportContent, Result, summarize
from assay.views._html import embed_json, render_html
from tests.helpers.browser import launched_chromium
from tests.helpers.goldens import ORIGIN, write_golden, write_json
from tests.helpers.runs import agent_document, sample_run

SCRIPT_OUTPUT = '<script>window.__pwned=1</script><img src=x onerror="window.__pwned=4">'
BREAKOUT_OUTPUT = "</script><script>window.__pwned=2</script><!--"

# --------------------------------------------------------------------- the page, without a browser


def test_embed_json_cannot_close_the_script_element() -> None:
    text = embed_json({"o": "</script><script>x()</script><!-- & \u2028\u2029 \ud800"})
    assert "<" not in text and ">" not in text and "&" not in text
    assert "\u2028" not in text and "\u2029" not in text
    assert json.loads(text) == {"o": "</script><script>x()</script><!-- & \u2028\u2029 \ud800"}


def test_embed_json_survives_nan_and_odd_types() -> None:
    text = embed_json({"nan": float("nan"), "inf": [float("inf")], "path": Path("a")})
    assert json.loads(text) == {"nan": "nan", "inf": ["inf"], "path": "a"}


def test_page_is_self_contained() -> None:
    html = render_html(sample_run().to_dict())
    html.encode("utf-8")
    assert not re.search(r"(?i)\b(https?:|ftp:|//[a-z0-9])", html.replace("data:,", ""))
    assert not re.search(r"(?i)\b(src|href)\s*=\s*[\"'](?!data:)", html)
    assert "@import" not in html and "url(" not in html
    assert html.count("</script>") == 2  # the data element and the page script, nothing else
    assert "Content-Security-Policy" in html and "default-src 'none'" in html


# ------------------------------------------------------------------------------------ the browser


@dataclass
class Loaded:
    page: Any
    url: str
    errors: list[str]
    requests: list[str]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    yield from launched_chromium()


@pytest.fixture
def load(browser: Any, tmp_path: Path) -> Iterator[Any]:
    """``load(html)`` writes the page to a file and opens it, recording errors and requests."""
    contexts: list[Any] = []

    def open_page(html: str, name: str = "report.html") -> Loaded:
        path = tmp_path / name
        path.write_text(html, encoding="utf-8")
        context = browser.new_context(viewport={"width": 1366, "height": 900})
        contexts.append(context)
        page = context.new_page()
        loaded = Loaded(page, path.as_uri(), [], [])
        page.on(
            "console",
            lambda m: loaded.errors.append(m.text) if m.type in ("error", "warning") else None,
        )
        page.on("pageerror", lambda e: loaded.errors.append(str(e)))
        page.on("request", lambda r: loaded.requests.append(r.url))
        page.goto(loaded.url, wait_until="load")
        return loaded

    yield open_page
    for context in contexts:
        context.close()


@dataclass
class Project:
    run: GateRun
    goldens: dict[str, Golden]
    outputs: dict[str, dict[str, Any]]
    baseline: dict[str, Any]


GOLDENS = {
    "sql-active-users": """\
id: sql-active-users
tier: smoke
input: "List the email of every active user."
expected: "SELECT email FROM users WHERE active = TRUE;"
asserts: ['contains:FROM', 'contains:users']
""",
    "json-invoice": """\
id: json-invoice
input: "Extract the invoice number as JSON."
expected: {"invoice": "INV-1042"}
asserts: [is-json, {op: equals, path: /invoice, value: INV-1042}]
""",
    "safe-html": """\
id: safe-html
tier: adversarial
input: "Reply without any script tag."
expected: "plain text"
asserts: ['not-contains:<script>']
""",
    "breakout": """\
id: breakout
tier: adversarial
input: "</script><script>window.__pwned=3</script>"
expected: "fine"
asserts: ['contains:fine']
""",
    "friday": """\
id: friday
input: "Can I deploy on Friday?"
rubric: "Says no because of the change freeze."
""",
}
GOOD = {
    "sql-active-users": "SELECT email FROM users WHERE active = TRUE;",
    "json-invoice": '{"invoice": "INV-1042"}',
    "safe-html": "plain text",
    "breakout": "fine",
    "friday": "No.",
}
NOW = {
    "prompt-a": {
        **GOOD,
        "json-invoice": '{"invoice": "INV-1O42"}',
        "safe-html": SCRIPT_OUTPUT,
        "breakout": BREAKOUT_OUTPUT,
    },
    "prompt-b": {k: v for k, v in GOOD.items() if k != "friday"},
}


@pytest.fixture
def project(tmp_path: Path) -> Project:
    """A ``--check`` run of two candidates where prompt-a regressed (with hostile outputs)."""
    root = tmp_path / "project"
    for name, frontmatter in GOLDENS.items():
        write_golden(root / "goldens", f"{name}.md", frontmatter, ORIGIN)
    config = load_config(root)
    good = write_json(root / "good.json", {"prompt-a": GOOD, "prompt-b": GOOD})
    now = write_json(root / "now.json", NOW)
    goldens_path = root / "goldens"
    run_gate(GateOptions(path=goldens_path, outputs=good, mode="write-baseline"), config)
    options = GateOptions(path=goldens_path, outputs=now, mode="check")
    run = run_gate(options, config)
    by_id = {g.id: g for g in load_selected(options, config).goldens}
    baseline = json.loads(config.baseline.read_text(encoding="utf-8"))
    return Project(run, by_id, load_outputs(now, by_id), baseline)


def gate_page(project: Project) -> str:
    document = project.run.to_dict()
    document["summary"]["composite"] = {
        "score": 0.5,
        "components": {"task_success": 0.5},
        "per_tier": {"smoke": 1.0},
    }
    return render_html(document, ReportContent(project.goldens, project.outputs, project.baseline))


def visible_ids(page: Any) -> list[str]:
    return [
        str(x) for x in page.eval_on_selector_all("tr.row", "rows => rows.map(r => r.dataset.id)")
    ]


def test_loads_without_errors_or_requests(load: Any, project: Project) -> None:
    loaded = load(gate_page(project))
    page = loaded.page
    assert loaded.errors == []
    assert loaded.requests == [loaded.url]
    assert sorted(visible_ids(page)) == sorted(GOLDENS)
    summary = page.inner_text("#summary")
    assert "FAILED" in summary and "composite" in summary.lower()
    assert page.evaluate("window.__pwned") is None


def test_regressions_come_first_with_before_and_after(load: Any, project: Project) -> None:
    page = load(gate_page(project)).page
    sections = page.eval_on_selector_all("section", "s => s.map(x => x.id)")
    assert sections.index("regressions") < sections.index("candidates")
    assert sections.index("regressions") < sections.index("results")
    text = page.inner_text("#regressions")
    assert "json-invoice" in text and "prompt-a" in text
    assert "PASS 1.000" in text  # before
    assert "FAIL 0.500" in text  # after


def test_filter_box_hides_rows(load: Any, project: Project) -> None:
    page = load(gate_page(project)).page
    page.fill("#filter", "invoice")
    assert visible_ids(page) == ["json-invoice"]
    page.fill("#filter", "no such golden")
    assert visible_ids(page) == []
    assert "No row matches" in page.inner_text("#matrix")
    page.fill("#filter", "")
    assert len(visible_ids(page)) == len(GOLDENS)
    page.fill("#filter", "INV-1042 equals")  # every term must match: a failed check's text
    assert visible_ids(page) == ["json-invoice"]


def test_status_filter(load: Any, project: Project) -> None:
    page = load(gate_page(project)).page
    for status in ("pass", "needs-judge", "no-output", "error"):
        page.uncheck(f"input.status-filter[value='{status}']")
    failing = {r.id for r in project.run.results if r.status == "fail"}
    assert set(visible_ids(page)) == failing
    page.uncheck("input.status-filter[value='fail']")
    page.check("input.status-filter[value='no-output']")
    assert visible_ids(page) == ["friday"]  # prompt-b has no output for it


def test_detail_panel_shows_input_output_expected_checks(load: Any, project: Project) -> None:
    page = load(gate_page(project)).page
    page.click("tr.row[data-id='json-invoice']")
    panel = page.locator("tr.detail")
    assert panel.count() == 1
    text = panel.inner_text()
    for label in ("Input", "Expected", "Output", "Checks"):
        assert label in text
    assert "Extract the invoice number as JSON." in text
    assert '"invoice": "INV-1042"' in text  # expected, shown as JSON
    assert '{"invoice": "INV-1O42"}' in text  # prompt-a's output
    assert "equals:INV-1042 @/invoice" in text
    assert "baseline: PASS" in text
    assert page.get_attribute("tr.row[data-id='json-invoice']", "aria-expanded") == "true"
    page.click("tr.row[data-id='json-invoice']")
    assert page.locator("tr.detail").count() == 0


def test_script_output_is_text(load: Any, project: Project) -> None:
    page = load(gate_page(project)).page
    page.click("tr.row[data-id='safe-html']")
    page.click("tr.row[data-id='breakout']")
    text = page.locator("tr.detail").all_inner_texts()
    joined = "\n".join(text)
    assert SCRIPT_OUTPUT in joined
    assert BREAKOUT_OUTPUT in joined
    assert "</script><script>window.__pwned=3</script>" in joined  # the input
    assert page.evaluate("window.__pwned") is None
    assert page.evaluate("document.scripts.length") == 2


@pytest.mark.slow
def test_ten_thousand_goldens_page_and_screenshot(load: Any, tmp_path: Path) -> None:
    n = 10_000
    check = CheckResult("contains:FROM", "contains", False, "output does not contain 'FROM'")
    results = [
        Result(f"g{i:05d}", "smoke", "default", "pass", True, 1.0, "tier1-asserts")
        if i % 7
        else Result(f"g{i:05d}", "smoke", "default", "fail", False, 0.0, "tier1-asserts", (check,))
        for i in range(n)
    ]
    run = GateRun(results, [summarize("default", results)], n, Verdict())
    loaded = load(render_html(run.to_dict()))
    page = loaded.page
    assert loaded.errors == []
    assert page.locator("tr.row").count() == 200
    assert page.inner_text("#page-info").startswith("1–200 of 10000")
    page.click("#next")
    assert visible_ids(page)[0] == "g00200"
    page.fill("#filter", "g09999")
    assert visible_ids(page) == ["g09999"]
    page.fill("#filter", "")
    page.uncheck("input.status-filter[value='pass']")
    assert page.inner_text("#page-info").startswith(f"1–200 of {len(range(0, n, 7))}")
    shot = page.screenshot(path=str(tmp_path / "10k.png"))
    assert shot.startswith(b"\x89PNG")


def test_agent_report(load: Any) -> None:
    document = agent_document()
    loaded = load(render_html(document))
    page = loaded.page
    assert loaded.errors == []
    assert loaded.requests == [loaded.url]
    assert len(visible_ids(page)) == len(document["results"])
    assert "0.000" in page.inner_text("#summary")
    page.fill("#filter", "test_regression")
    assert visible_ids(page) == ["smoke-pin-dependency"]
    page.click("tr.row[data-id='smoke-pin-dependency']")
    detail = page.inner_text("tr.detail")
    assert "test_regression" in detail and "2 test(s) failed" in detail
    page.fill("#filter", "")
    page.uncheck("input.status-filter[value='fail']")
    page.uncheck("input.status-filter[value='no-output']")  # the tasks with no telemetry
    assert visible_ids(page) == ["smoke-fix-off-by-one"]
