"""``assay view``'s pages in a real headless Chromium (Debian's, driven by Playwright), against a
real ``assay view`` process over a project whose runs were saved by real ``assay gate`` runs.

Each step asserts on what the page shows. The tests skip only when ``/usr/bin/chromium`` or the
``playwright`` package is missing. No test measures time: ``bench/view_bench.py`` does.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.browser import launched_chromium
from tests.helpers.cli import run_cli, spawn

WORSE_SQL = "SELECT * FROM users;"
STATIC = Path(__file__).resolve().parents[2] / "src" / "assay" / "viewer" / "static"


def test_the_front_end_names_nothing_off_this_machine() -> None:
    texts = {p.name: p.read_text(encoding="utf-8") for p in STATIC.iterdir()}
    assert sorted(texts) == ["app.css", "app.js", "index.html"]
    for name, text in texts.items():
        text = text.replace('"http://www.w3.org/2000/svg"', "")  # SVG's namespace, never fetched
        assert not re.search(r"(?i)\b(https?:|ftp:|wss?:)|//[a-z0-9.-]+\.[a-z]{2,}/", text), name
        assert "@import" not in text and "url(" not in text and "innerHTML" not in text, name
    html = texts["index.html"]
    assert re.findall(r'(?:src|href)="([^"#]+)"', html) == ["data:,", "app.css", "app.js"]
    assert "default-src 'none'" in html and "connect-src 'self'" in html


@dataclass
class Project:
    root: Path
    url: str
    baseline_run: str  # the write-baseline run
    check_run: str  # the --check run with sql-active-users regressed


def _gate(root: Path, *args: str) -> int:
    code, _, err = run_cli(["gate", "--outputs", "outputs.json", *args], root)
    assert code in (0, 2), err
    return code


def _runs(root: Path) -> list[str]:
    return sorted(p.stem for p in (root / ".assay" / "runs").glob("eval_run_*.json"))


def _make_project(root: Path) -> tuple[Path, str, str]:
    code, _, err = run_cli(["init", "demo"], root)
    assert code == 0, err
    project = root / "demo"
    with (project / "assay.toml").open("a", encoding="utf-8") as toml:
        toml.write("keep_outputs = true\n")  # the golden and compare pages show outputs
    assert _gate(project, "--write-baseline") == 0
    outputs = json.loads((project / "outputs.json").read_text(encoding="utf-8"))
    outputs["sql-active-users"] = WORSE_SQL
    (project / "outputs.json").write_text(json.dumps(outputs), encoding="utf-8")
    assert _gate(project, "--check") == 2
    baseline_run, check_run = _runs(project)
    return project, baseline_run, check_run


@contextmanager
def serving(root: Path) -> Iterator[str]:
    """A real ``assay view --port 0`` process over ``root``; its printed URL."""
    server = spawn(["view", "--port", "0"], root)
    try:
        assert server.stdout is not None
        line = server.stdout.readline()
        match = re.fullmatch(r"assay view: (http://127\.0\.0\.1:\d+/)\n", line)
        assert match, line + (server.stderr.read() if server.poll() is not None else "")
        yield match.group(1)
    finally:
        server.terminate()
        server.communicate(timeout=10)  # waits, and closes its pipes


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Project]:
    root, baseline_run, check_run = _make_project(tmp_path_factory.mktemp("view"))
    with serving(root) as url:
        yield Project(root, url, baseline_run, check_run)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    yield from launched_chromium()


@dataclass
class Page:
    page: Any
    base: str
    errors: list[str]
    foreign: list[str]  # requests that went anywhere but the viewer's own server

    def goto(self, hash_route: str, ready: str) -> None:
        self.page.goto(self.base + hash_route)
        self.wait(ready)

    def wait(self, ready: str) -> None:
        self.page.wait_for_selector(f"body[data-ready={ready}]", state="attached", timeout=10_000)

    def rows(self) -> list[str]:
        return [t.strip() for t in self.page.locator(".vrow").all_inner_texts()]


@pytest.fixture
def page(browser: Any, project: Project) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    raw = context.new_page()
    shown = Page(raw, project.url, [], [])
    raw.on("pageerror", lambda e: shown.errors.append(str(e)))
    raw.on("console", lambda m: shown.errors.append(m.text) if m.type == "error" else None)
    raw.on(
        "request",
        lambda r: None if r.url.startswith((project.url, "data:")) else shown.foreign.append(r.url),
    )
    yield shown
    context.close()
    assert shown.errors == []
    assert shown.foreign == []


def test_runs_page_lists_the_saved_runs_with_kind_and_pass_rate(page: Page) -> None:
    page.goto("#/runs", "runs")
    rows = page.rows()
    assert len(rows) == 2
    # Newest first: the check (4 of 6 pass: 66.7 %), then the baseline run (5 of 6: 83.3 %).
    assert "gate" in rows[0] and "check" in rows[0] and "66.7%" in rows[0]
    assert "gate" in rows[1] and "write-baseline" in rows[1] and "83.3%" in rows[1]
    assert page.page.locator(".chart polyline").count() == 2  # pass rate and score, one kind
    page.page.select_option("select[aria-label=mode]", "check")
    assert len(page.rows()) == 1 and "mode=check" in page.page.url


def test_a_run_filtered_to_failures_then_searched(page: Page, project: Project) -> None:
    page.goto("#/runs", "runs")
    page.page.keyboard.press("Enter")  # the selection starts on the newest run: the check
    page.wait("run")
    assert project.check_run in page.page.url
    assert "passed in the baseline, now fail" in page.page.locator("#regressions").inner_text()
    assert len(page.rows()) == 6
    page.page.click("button[data-status=fail]")
    rows = page.rows()
    assert len(rows) == 1 and "sql-active-users" in rows[0] and "FAIL" in rows[0]
    assert "status=fail" in page.page.url  # a deep link keeps the filter
    page.page.click("button[data-status='']")
    page.page.keyboard.press("/")
    page.page.keyboard.type("refund")
    rows = page.rows()
    assert len(rows) == 1 and "refund-window" in rows[0]
    page.page.keyboard.press("Escape")  # leaves the search box, then j/k move the selection
    page.page.fill("#search", "")
    page.page.dispatch_event("#search", "input")
    page.page.keyboard.press("Escape")
    page.page.keyboard.press("j")
    page.page.keyboard.press("j")
    assert "refund-window" in page.page.locator(".vrow.sel").inner_text()


def test_a_golden_shows_checks_output_expected_and_a_diff(page: Page, project: Project) -> None:
    page.goto(f"#/run/{project.check_run}?status=fail", "run")
    page.page.keyboard.press("Enter")
    page.wait("golden")
    assert "/golden/sql-active-users?candidate=default" in page.page.url
    checks = page.page.locator("#checks").inner_text()
    assert "fail" in checks and "regex" in checks
    # Each check's reason, worked out again from the kept output and the project's golden.
    assert "recomputed from the kept output" in page.page.locator("#checks-source").inner_text()
    assert "output does not match" in checks and "✓ pass" in checks
    output = page.page.locator("#output").inner_text()
    assert WORSE_SQL in output
    # The expected answer comes from the project's golden file, read now.
    expected = page.page.locator("#expected pre").inner_text()
    assert expected == "SELECT email FROM users WHERE active = TRUE;"
    assert page.page.locator("#output del").count() > 0  # words of the expected answer missing
    assert "WHERE" in " ".join(page.page.locator("#output del").all_inner_texts())
    page.page.keyboard.press("Escape")  # back to the run, its filter kept
    page.wait("run")
    assert "status=fail" in page.page.url and len(page.rows()) == 1


def test_comparing_two_runs_puts_the_changed_golden_first(page: Page, project: Project) -> None:
    page.goto("#/runs", "runs")
    boxes = page.page.locator(".vrow input[type=checkbox]")
    boxes.nth(0).check()
    boxes.nth(1).check()
    page.page.click("#compare")
    page.wait("compare")
    assert page.page.url.endswith(f"#/compare/{project.baseline_run}/{project.check_run}")
    rows = page.rows()
    assert len(rows) == 6
    assert "regressed" in rows[0] and "sql-active-users" in rows[0] and "-0.250" in rows[0]
    assert all("same" in r for r in rows[1:])
    page.page.keyboard.press("Enter")  # the detail: both outputs side by side, a word diff
    detail = page.page.locator("#detail")
    assert WORSE_SQL in detail.inner_text()
    assert "SELECT email FROM users WHERE active = TRUE;" in detail.inner_text()
    assert detail.locator("ins").count() > 0 and detail.locator("del").count() > 0


def test_a_run_against_the_baseline_says_what_the_gate_concluded(
    page: Page, project: Project
) -> None:
    page.goto(f"#/compare/{project.check_run}/baseline", "compare")
    text = page.page.locator("main").inner_text()
    assert "the baseline (assay-baseline.json)" in text
    assert "gate: failed" in text
    assert "regressed" in page.rows()[0] and "sql-active-users" in page.rows()[0]


def test_a_live_run_shows_up_updates_and_finishes(page: Page, project: Project) -> None:
    from assay.viewer._live import LiveRun

    page.goto("#/live", "live")
    assert "No run in progress" in page.page.locator("#live").inner_text()
    live = LiveRun(project.root, "gate")  # what a running gate writes, from this live process
    try:
        live.update(0, 3, force=True)
        page.page.wait_for_selector("text=0 of 3 done", timeout=10_000)
        live.update(1, 3, {"id": "refund-window", "candidate": "default", "status": "pass"})
        failed = {"id": "sql-active-users", "candidate": "default", "status": "fail"}
        live.update(2, 3, failed, force=True)
        page.page.wait_for_selector("text=2 of 3 done", timeout=10_000)
        text = page.page.locator("#live").inner_text()
        assert "sql-active-users" in text and "refund-window" in text and "FAIL" in text
    finally:
        live.close()
    page.page.wait_for_selector("text=finished since this page opened", timeout=10_000)
    assert "No run in progress" in page.page.locator("#live").inner_text()


def test_an_unknown_run_says_so_on_the_page(page: Page) -> None:
    page.goto("#/run/eval_run_20000101T000000_000000Z", "error")
    assert "not found" in page.page.locator("main").inner_text()
    page.errors.clear()  # the browser logs the 404 response itself


def test_phone_width_and_dark_theme(browser: Any, project: Project) -> None:
    context = browser.new_context(viewport={"width": 375, "height": 740}, color_scheme="dark")
    raw = context.new_page()
    errors: list[str] = []
    raw.on("pageerror", lambda e: errors.append(str(e)))
    try:
        for route, ready in (
            ("#/runs", "runs"),
            (f"#/run/{project.check_run}", "run"),
            (f"#/run/{project.check_run}/golden/sql-active-users", "golden"),
            (f"#/compare/{project.baseline_run}/{project.check_run}", "compare"),
        ):
            raw.goto(project.url + route)
            raw.wait_for_selector(f"body[data-ready={ready}]", state="attached")
            # Nothing wider than the phone: no sideways scrolling.
            assert raw.evaluate("document.documentElement.scrollWidth") <= 375, route
        dark = raw.evaluate("getComputedStyle(document.body).backgroundColor")
        raw.click("#theme")  # auto -> light
        assert raw.evaluate("document.documentElement.dataset.theme") == "light"
        light = raw.evaluate("getComputedStyle(document.body).backgroundColor")
        assert dark == "rgb(13, 17, 23)" and light == "rgb(246, 248, 250)"
        raw.reload()  # the choice is remembered
        raw.wait_for_selector("body[data-ready=compare]", state="attached")
        assert raw.locator("#theme").inner_text() == "theme: light"
    finally:
        context.close()
    assert errors == []


def test_a_big_run_draws_only_the_rows_in_view(browser: Any, tmp_path: Path) -> None:
    n = 3000
    (tmp_path / "goldens").mkdir()
    for i in range(n):
        (tmp_path / "goldens" / f"g{i:04d}.md").write_text(
            f"---\nid: g{i:04d}\ninput: q\nasserts: ['contains:ok']\n---\n", encoding="utf-8"
        )
    outputs = {f"g{i:04d}": "ok" if i % 5 else "no" for i in range(n)}
    (tmp_path / "outputs.json").write_text(json.dumps(outputs), encoding="utf-8")
    (tmp_path / "assay.toml").write_text('goldens = "goldens"\n', encoding="utf-8")
    code, _, err = run_cli(["gate", "--outputs", "outputs.json"], tmp_path, timeout=60)
    assert code == 0, err
    (run_id,) = _runs(tmp_path)
    with serving(tmp_path) as url:
        context = browser.new_context(viewport={"width": 1280, "height": 800})
        raw = context.new_page()
        try:
            raw.goto(f"{url}#/run/{run_id}")
            raw.wait_for_selector("body[data-ready=run]", state="attached")
            assert f"{n} shown" in raw.locator("#results").inner_text()
            assert 0 < raw.locator(".vrow").count() < 100  # a window, not 3,000 rows
            raw.evaluate("window.scrollTo(0, document.body.scrollHeight)")
            raw.wait_for_selector(".vrow:has-text('g2999')")
            assert raw.locator(".vrow").count() < 100
            raw.click("button[data-status=fail]")
            assert f"{n // 5} shown" in raw.locator("#results").inner_text()
            for _ in range(3):
                raw.keyboard.press("j")
            assert "g0015" in raw.locator(".vrow.sel").inner_text()  # the 4th failure: 0, 5, 10, 15
        finally:
            context.close()


def test_an_agent_task_shows_its_telemetry_and_journal_timeline(
    browser: Any, tmp_path: Path
) -> None:
    from assay.attest import Journal
    from tests.helpers.telemetry import smoke_telemetry

    failing = {"smoke-fix-off-by-one": {"completion_signals_passed": 0}}
    telemetry = Path(smoke_telemetry(tmp_path / "telemetry", failing))
    journal = Journal(telemetry / "smoke-fix-readme-typo.journal.jsonl")
    journal.append("read", path="README.md", content="SECRET-FILE-TEXT")
    journal.append("exec", command="pytest -q")
    journal.append("net", endpoint="127.0.0.1:9")
    code, _, err = run_cli(["bench", "--telemetry", telemetry, "-k", "smoke-*"], tmp_path)
    assert code in (0, 2), err
    (run_id,) = _runs(tmp_path)
    with serving(tmp_path) as url:
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        raw = context.new_page()
        try:
            raw.goto(f"{url}#/runs")
            raw.wait_for_selector("body[data-ready=runs]", state="attached")
            assert "bench" in raw.locator(".vrow").first.inner_text()
            raw.goto(f"{url}#/run/{run_id}/golden/smoke-fix-readme-typo")
            raw.wait_for_selector("body[data-ready=golden]", state="attached")
            timeline = raw.locator("#journal li").all_inner_texts()
            assert len(timeline) == 3
            assert "read" in timeline[0] and "README.md" in timeline[0]
            assert "exec" in timeline[1] and "pytest -q" in timeline[1]
            assert "net" in timeline[2] and "127.0.0.1:9" in timeline[2]
            assert "files_modified" in raw.locator("#telemetry").inner_text()
            assert "SECRET-FILE-TEXT" not in raw.content()
            raw.goto(f"{url}#/run/{run_id}/golden/smoke-fix-off-by-one")
            raw.wait_for_selector("body[data-ready=golden]", state="attached")
            facts = raw.locator("#facts").inner_text()
            assert "failure category" in facts, facts
        finally:
            context.close()


def test_a_real_eval_in_progress_shows_up_on_the_live_page(browser: Any, tmp_path: Path) -> None:
    # A real `assay eval` process whose model (the project's python function) takes a moment a
    # call, one call at a time: its progress file comes, counts up, and goes when it ends.
    (tmp_path / "goldens").mkdir()
    lines = [
        json.dumps({"id": f"q{i}", "input": f"q{i}", "asserts": ["contains:q"]}) for i in range(4)
    ]
    (tmp_path / "goldens" / "qs.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (tmp_path / "slow.py").write_text(
        "import time\ndef answer(prompt):\n    time.sleep(0.7)\n    return prompt\n",
        encoding="utf-8",
    )
    (tmp_path / "cands.yaml").write_text(
        "provider: {type: python, function: 'slow:answer'}\nmax_concurrency: 1\n"
        "candidates:\n  - {id: a, prompt: '{{ input }}'}\n",
        encoding="utf-8",
    )
    with serving(tmp_path) as url:
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        raw = context.new_page()
        try:
            raw.goto(f"{url}#/live")
            raw.wait_for_selector("body[data-ready=live]", state="attached")
            assert "No run in progress" in raw.locator("#live").inner_text()
            run = spawn(["eval", "--candidates", "cands.yaml", "--no-cache"], tmp_path)
            try:
                raw.wait_for_selector(".live-run:has-text('eval')", timeout=20_000)
                first = _done(raw.locator(".live-progress").inner_text())
                later, text = first, ""
                for _ in range(100):
                    # One read of the section: the page may redraw between two.
                    text = raw.evaluate(
                        "() => document.querySelector('.live-run')?.innerText || ''"
                    )
                    if not text:
                        break
                    later = max(later, _done(text))
                    if later > first:
                        break
                    raw.wait_for_timeout(100)
                assert later > first  # the page followed the run as it went
                # ... and showed the calls answered so far, the first one among them.
                assert "ANSWERED" in text and "q0" in text, text
            finally:
                _, err = run.communicate(timeout=60)
            assert run.returncode == 0, err
            raw.wait_for_selector("text=finished since this page opened", timeout=10_000)
        finally:
            context.close()


def _done(text: str) -> int:
    match = re.search(r"(\d+) of 4 calls done", text)
    assert match, text
    return int(match.group(1))
