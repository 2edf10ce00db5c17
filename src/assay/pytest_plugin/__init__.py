"""assay's pytest plugin: goldens as test items (registered under the ``pytest11`` entry point,
so ``pip install assay`` is enough).

``pytest --assay-outputs outputs.json [--assay-goldens DIR] [--assay-check [--assay-baseline F]]``
scores the outputs with the gate, once, and adds one test item per golden (and candidate), named
by its id and marked with its tier. With ``--assay-check`` only a regressed golden fails (one
that did not pass but is no regression is ``xfail``), and an ``assay-gate`` item fails exactly
when the gate would exit 2 or could not decide. The details: docs/guide/pytest.md.

Without ``--assay-outputs`` the plugin does nothing (it is loaded in every pytest session where
assay is installed): only this module and pytest are imported.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import pytest

if TYPE_CHECKING:
    from assay.gate import GateRun
    from assay.results import Result

_TRIM: Final = 600
_DIFF_LINES: Final = 20
_RUN_KEY: Final = pytest.StashKey["GateRun"]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("assay", "assay: goldens as test items")
    group.addoption(
        "--assay-outputs",
        metavar="FILE",
        help="Score this outputs file against the goldens: one test item per golden.",
    )
    group.addoption(
        "--assay-goldens",
        metavar="DIR",
        help="The goldens folder or file (default: the project's, from assay.toml).",
    )
    group.addoption(
        "--assay-check",
        action="store_true",
        help="Compare with the baseline: an assay-gate item fails when a golden got worse.",
    )
    group.addoption(
        "--assay-baseline",
        metavar="FILE",
        help="The baseline for --assay-check (default: the project's, from assay.toml).",
    )


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("assay_outputs") is None:
        if config.getoption("assay_check") or config.getoption("assay_baseline"):
            raise pytest.UsageError("--assay-check and --assay-baseline need --assay-outputs")
        return
    from assay.vocabulary import TIERS

    for tier in TIERS:
        config.addinivalue_line("markers", f"{tier}: an assay golden of tier {tier}")
    config.addinivalue_line("markers", "assay: an assay golden or the assay gate's verdict")


def _gate_run(config: pytest.Config) -> GateRun:
    """The gate run of these options (once per session); an assay error is a usage error."""
    from assay.config import load_config
    from assay.errors import AssayError
    from assay.gate import GateOptions, run_gate

    found = config.stash.get(_RUN_KEY, None)
    if found is not None:
        return found
    goldens = config.getoption("assay_goldens")
    baseline = config.getoption("assay_baseline")
    options = GateOptions(
        path=Path(goldens) if goldens else None,
        outputs=Path(config.getoption("assay_outputs")),
        baseline=Path(baseline) if baseline else None,
        mode="check" if config.getoption("assay_check") else "report",
    )
    try:
        run = run_gate(options, load_config())
    except AssayError as exc:
        raise pytest.UsageError(f"assay: {exc}") from None
    config.stash[_RUN_KEY] = run
    return run


@pytest.hookimpl(tryfirst=True)  # before -k and -m deselect: they see the goldens
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    if config.getoption("assay_outputs") is None:
        return
    run = _gate_run(config)
    suite = AssaySuite.from_parent(session, name="assay", nodeid="assay")
    several = len({r.candidate for r in run.results}) > 1
    for result in run.results:
        name = f"{result.id}[{result.candidate}]" if several else result.id
        item = GoldenItem.from_parent(suite, name=name)
        item.result_key = (result.candidate, result.id)
        if result.tier is not None:
            item.add_marker(result.tier)
        item.add_marker("assay")
        items.append(item)
    if run.mode == "check":
        gate = GateItem.from_parent(suite, name="assay-gate")
        gate.add_marker("assay")
        items.append(gate)


class AssaySuite(pytest.Collector):
    """The parent of the golden items (they are made by the plugin, not collected)."""

    def collect(self) -> list[pytest.Item]:
        return []


class GoldenFailed(Exception):
    """A golden that did not pass: its report is the message."""


class _AssayItem(pytest.Item):
    """An item whose failure is shown as its report, with no traceback."""

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, GoldenFailed):
            return str(excinfo.value)
        return super().repr_failure(excinfo)


class GoldenItem(_AssayItem):
    """One golden's result for one candidate."""

    result_key: tuple[str, str] = ("", "")

    def runtest(self) -> None:
        run = _gate_run(self.config)
        result = next(r for r in run.results if (r.candidate, r.id) == self.result_key)
        if result.status == "pass":
            return
        if result.status == "needs-judge":
            pytest.skip("needs a judge: " + "; ".join(result.notes or ("not judged",)))
        if run.mode == "check":
            # Under the gate only a regression fails: a golden that failed in the baseline too,
            # a new one, an error (infrastructure) or a random drop the statistics do not call
            # is shown as an expected failure, with its reason.
            regressed = {(r.candidate, r.id) for r in run.diff.regressions} if run.diff else set()
            if self.result_key not in regressed:
                candidate, golden_id = self.result_key
                known = (run.baseline_document or {}).get("goldens", {}).get(candidate, {})
                why = "did not pass in the baseline either"
                if golden_id not in known:
                    why = "not in the baseline"
                pytest.xfail(f"{result.status}, not a regression ({why})")
        raise GoldenFailed(_failure_text(run, result))

    def reportinfo(self) -> tuple[str, int | None, str]:
        return f"assay golden {self.result_key[1]}", None, self.name


class GateItem(_AssayItem):
    """The gate's verdict against the baseline (``--assay-check``)."""

    def runtest(self) -> None:
        run = _gate_run(self.config)
        if run.undecided:
            raise GoldenFailed("the gate could not decide: " + "; ".join(run.undecided))
        if run.gate_failures:
            lines = [*run.gate_failures]
            if run.diff is not None:
                lines += [f"  {r.candidate}/{r.id}: {r.why}" for r in run.diff.regressions]
            raise GoldenFailed("\n".join(lines))

    def reportinfo(self) -> tuple[str, int | None, str]:
        return "assay gate", None, self.name


def _failure_text(run: GateRun, result: Result) -> str:
    """What failed, what was said, and how it differs from what was expected."""
    import difflib

    from assay.asserts import as_text

    candidate, golden_id = result.candidate, result.id
    decided = "" if result.decided_by is None else f", decided by {result.decided_by}"
    lines = [f"{golden_id} ({candidate}): {result.status}{decided}"]
    for check in result.checks:
        if not check.passed:
            lines.append(f"  failed {check.text}: {check.reason or 'failed'}")
    lines.extend(f"  note: {note}" for note in result.notes)
    output = run.outputs.get(candidate, {}).get(golden_id)
    if output is not None:
        text = as_text(output)
        shown = text if len(text) <= _TRIM else text[:_TRIM] + f"… ({len(text)} characters)"
        lines += ["  output:", *("    " + line for line in shown.splitlines() or [""])]
        golden = run.goldens.get(golden_id)
        if golden is not None and golden.has_expected:
            expected = as_text(golden.expected)
            diff = list(
                difflib.unified_diff(
                    expected.splitlines(),
                    text.splitlines(),
                    "expected",
                    "output",
                    lineterm="",
                )
            )
            if diff:
                more = len(diff) - _DIFF_LINES
                lines += ["  diff:", *("    " + line for line in diff[:_DIFF_LINES])]
                if more > 0:
                    lines.append(f"    … {more} more line(s)")
    return "\n".join(lines)


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    run = config.stash.get(_RUN_KEY, None)
    if run is None:
        return
    document = run.to_dict()
    summary = document["summary"]
    counts = summary["counts"]
    shown = ", ".join(f"{counts[k]} {k}" for k in ("pass", "fail", "needs-judge", "no-output"))
    terminalreporter.write_line(f"assay: {summary['total']} results: {shown}")
    if run.mode == "check":
        verdict = "FAILED" if run.gate_failures or run.undecided else "passed"
        terminalreporter.write_line(f"assay gate: {verdict}")
