"""Calibrate the gate: false alarms and power of `assay eval --candidates --check` (random).

Usage: python bench/gate_calibration.py [--gates 500] [--seed 0] [--only NAME,...] [--strict]

Each simulated gate runs the real gate in-process (``assay.gate.run_gate``, ``no_cache=True``):
write the baseline with the "before" pass probabilities, then check with the "after" ones, and
record the check's exit code (2 = alarm, 0 = no alarm; anything else is a bug and is counted).
The candidate is a python provider (``simprov:answer``, async) whose golden ``gK`` answers
"done" (passing ``contains:done``) with a known probability, from a ``random.Random`` seeded per
(scenario, gate, phase, golden), so the whole benchmark is reproducible and no outcome depends
on the order the runner makes its calls.

1. False alarms with no change (before = after): must be at most alpha = 0.05.
2. Power against a real drop: 5 of 20 goldens 0.9 -> 0.1 at repeats 10 (target >= 0.9); every
   golden 0.8 -> 0.5 at repeats 1 (target >= 0.8; 50 goldens by default, --broad-goldens: with
   one sample each, 20 goldens give about 10 discordant pairs, too few for any valid test to
   reach 0.8; 50 give about 25).
3. Adaptive repeats (``[gate] max_repeats``) against fixed repeats: model calls per check run,
   false-alarm rate and power. Shown only when this assay honours max_repeats (a check run makes
   more than repeats x goldens calls); otherwise the adaptive rows are reported as not available.

Rates come with a 95% Wilson interval; a verdict is PASS when the point estimate meets its
target (false alarms <= alpha, power >= target). The exit code is 0 unless a gate exited with
something other than 0 or 2 (or raised), which is a bug (exit 1); with --strict any FAIL exits 1
as well. The figures are also written to $ASSAY_BENCH_OUT (default bench/out)/gate-calibration.json.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import importlib
import json
import os
import platform
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

OUT = Path(os.environ.get("ASSAY_BENCH_OUT") or Path(__file__).resolve().parent / "out")
ALPHA = 0.05
MODULE = "simprov"

SIMPROV = '''"""A simulated candidate (bench/gate_calibration.py): golden gK passes with P["gK"]."""

import random

P = {}
SEED = ["0"]
_STREAMS = {}


def reseed(seed, probabilities):
    """A fresh run: new pass probabilities and new streams (one per golden)."""
    P.clear()
    P.update(probabilities)
    SEED[0] = str(seed)
    _STREAMS.clear()


async def answer(prompt):
    golden = prompt.strip()
    rng = _STREAMS.get(golden)
    if rng is None:
        rng = _STREAMS[golden] = random.Random(SEED[0] + "/" + golden)
    return "done" if rng.random() < P[golden] else "not yet"
'''


@dataclass(frozen=True, slots=True)
class Scenario:
    name: str
    kind: str  # "null" (false-alarm rate) or "power"
    goldens: int
    repeats: int
    before: tuple[float, ...]
    after: tuple[float, ...]
    target: float  # null: the most false alarms allowed; power: the least power wanted
    seed: int
    max_repeats: int | None = None
    group: str = ""

    @property
    def adaptive(self) -> bool:
        return self.max_repeats is not None


def _same(n: int, p: float) -> tuple[float, ...]:
    return (p,) * n


def _drop(n: int, dropped: int, high: float, low: float) -> tuple[float, ...]:
    return (low,) * dropped + (high,) * (n - dropped)


def scenarios(broad_goldens: int) -> list[Scenario]:
    out = []
    seed = 1000
    for p in (0.5, 0.9):
        for repeats in (5, 10):
            out.append(
                Scenario(
                    f"null p={p} r={repeats}",
                    "null",
                    20,
                    repeats,
                    _same(20, p),
                    _same(20, p),
                    ALPHA,
                    seed,
                    group="1. false alarms, no change",
                )
            )
            seed += 1000
    out.append(
        Scenario(
            "drop 5/20 0.9->0.1 r=10",
            "power",
            20,
            10,
            _same(20, 0.9),
            _drop(20, 5, 0.9, 0.1),
            0.9,
            seed,
            group="2. power against a real drop",
        )
    )
    seed += 1000
    out.append(
        Scenario(
            f"drop all {broad_goldens} 0.8->0.5 r=1",
            "power",
            broad_goldens,
            1,
            _same(broad_goldens, 0.8),
            _same(broad_goldens, 0.5),
            0.8,
            seed,
            group="2. power against a real drop",
        )
    )
    seed += 1000
    group = "3. adaptive repeats 5->20 vs fixed 20"
    for label, before, after, kind, target in (
        ("null p=0.9", _same(20, 0.9), _same(20, 0.9), "null", ALPHA),
        ("drop 5/20 0.9->0.1", _same(20, 0.9), _drop(20, 5, 0.9, 0.1), "power", 0.9),
    ):
        out.append(
            Scenario(f"{label} fixed r=20", kind, 20, 20, before, after, target, seed, group=group)
        )
        out.append(
            Scenario(
                f"{label} adaptive r=5..20",
                kind,
                20,
                5,
                before,
                after,
                target,
                seed + 500,
                max_repeats=20,
                group=group,
            )
        )
        seed += 1000
    return out


@dataclass(slots=True)
class Outcome:
    scenario: Scenario
    gates: int = 0
    alarms: int = 0
    exit_codes: Counter[str] = field(default_factory=Counter)  # "check 0", "baseline 1", ...
    bugs: list[str] = field(default_factory=list)
    check_calls: list[int] = field(default_factory=list)
    baseline_calls: list[int] = field(default_factory=list)
    wall_s: float = 0.0


@contextlib.contextmanager
def project(scenario: Scenario) -> Iterator[tuple[Any, Any, Any, Any]]:
    """A temp project for one scenario, importable and current: (write options, check
    options, config, the simulated provider module)."""
    from assay.config import GateSettings, load_config
    from assay.gate import GateOptions

    previous = Path.cwd()
    with tempfile.TemporaryDirectory(prefix="assay-calibration-") as tmp:
        root = Path(tmp)
        with open(root / "goldens.jsonl", "w", encoding="utf-8") as handle:
            for i in range(scenario.goldens):
                row = {"id": f"g{i}", "input": f"g{i}", "asserts": ["contains:done"]}
                handle.write(json.dumps(row) + "\n")
        (root / f"{MODULE}.py").write_text(SIMPROV, encoding="utf-8")
        candidates = {
            "provider": {
                "type": "python",
                "function": f"{MODULE}:answer",
                "max_concurrency": 64,
                "max_retries": 0,
            },
            "candidates": [{"id": "a", "prompt": "{{ input }}"}],
            "repeats": scenario.repeats,
            "max_concurrency": 64,
        }
        (root / "candidates.yaml").write_text(json.dumps(candidates), encoding="utf-8")
        sys.path.insert(0, str(root))
        sys.modules.pop(MODULE, None)  # the previous scenario's module lives in another folder
        importlib.invalidate_caches()
        os.chdir(root)
        try:
            module = importlib.import_module(MODULE)
            config = load_config(root)
            config = dataclasses.replace(
                config,
                gate=GateSettings(alpha=ALPHA, max_repeats=scenario.max_repeats),
            )
            base = GateOptions(
                path=root / "goldens.jsonl",
                candidates=root / "candidates.yaml",
                baseline=root / "baseline.json",
                no_cache=True,
                force=True,
                progress=False,
            )
            write = dataclasses.replace(base, mode="write-baseline")
            check = dataclasses.replace(base, mode="check")
            yield write, check, config, module
        finally:
            os.chdir(previous)
            sys.path.remove(str(root))
            sys.modules.pop(MODULE, None)


def _calls(run: Any) -> int:
    made = run.to_dict()["summary"].get("model_calls", {}).get("made", 0)
    return int(made)


def _probabilities(values: tuple[float, ...]) -> dict[str, float]:
    return {f"g{i}": p for i, p in enumerate(values)}


def simulate(scenario: Scenario, gates: int, stop_when_adaptive: bool = False) -> Outcome:
    """Run ``gates`` simulated gates (or, for a probe, stop at the first check that made more
    calls than repeats x goldens)."""
    from assay.errors import AssayError
    from assay.gate import run_gate

    outcome = Outcome(scenario)
    before, after = _probabilities(scenario.before), _probabilities(scenario.after)
    start = time.perf_counter()
    with project(scenario) as (write, check, config, module):
        for gate in range(gates):
            seed = f"{scenario.seed}/{gate}"
            try:
                module.reseed(f"{seed}/0", before)
                written = run_gate(write, config)
                outcome.baseline_calls.append(_calls(written))
                if written.exit_code != 0 or written.baseline_path is None:
                    outcome.bugs.append(
                        f"gate {gate}: write-baseline exited {written.exit_code} "
                        f"({written.undecided or written.notes or written.gate_failures})"
                    )
                    outcome.exit_codes[f"baseline {written.exit_code}"] += 1
                    continue
                module.reseed(f"{seed}/1", after)
                checked = run_gate(check, config)
            except AssayError as exc:
                outcome.bugs.append(f"gate {gate}: {type(exc).__name__}: {exc}")
                outcome.exit_codes["exception"] += 1
                continue
            outcome.gates += 1
            code = checked.exit_code
            outcome.exit_codes[f"check {code}"] += 1
            outcome.check_calls.append(_calls(checked))
            if code == 2:
                outcome.alarms += 1
            elif code != 0:
                outcome.bugs.append(
                    f"gate {gate}: check exited {code} ({checked.undecided or checked.notes})"
                )
            if stop_when_adaptive and _calls(checked) > scenario.repeats * scenario.goldens:
                break
    outcome.wall_s = time.perf_counter() - start
    return outcome


def figures(outcome: Outcome) -> dict[str, Any]:
    from assay.gate._stats import wilson_interval

    s = outcome.scenario
    rate = outcome.alarms / outcome.gates if outcome.gates else float("nan")
    low, high = wilson_interval(outcome.alarms, outcome.gates)
    if s.kind == "null":
        ok = outcome.gates > 0 and rate <= s.target
        target = f"<= {s.target:g}"
    else:
        ok = outcome.gates > 0 and rate >= s.target
        target = f">= {s.target:g}"
    calls = outcome.check_calls
    return {
        "scenario": s.name,
        "group": s.group,
        "measures": "false-alarm rate" if s.kind == "null" else "power",
        "goldens": s.goldens,
        "repeats": s.repeats,
        "max_repeats": s.max_repeats,
        "before": sorted(set(s.before)),
        "after": sorted(set(s.after)),
        "seed": s.seed,
        "gates": outcome.gates,
        "alarms": outcome.alarms,
        "rate": rate,
        "ci95": [low, high],
        "target": target,
        "verdict": "PASS" if ok else "FAIL",
        "mean_calls_per_check": sum(calls) / len(calls) if calls else None,
        "max_calls_per_check": max(calls) if calls else None,
        "mean_calls_per_baseline": (
            sum(outcome.baseline_calls) / len(outcome.baseline_calls)
            if outcome.baseline_calls
            else None
        ),
        "exit_codes": dict(sorted(outcome.exit_codes.items())),
        "bugs": len(outcome.bugs),
        "first_bugs": outcome.bugs[:3],
        "wall_s": round(outcome.wall_s, 3),
    }


HEADER = (
    f"{'scenario':<34} {'goldens':>7} {'rep':>5} {'gates':>5} {'alarms':>6} "
    f"{'rate':>6} {'95% Wilson CI':>15} {'target':>8} {'verdict':>7} {'calls/check':>11} "
    f"{'bugs':>4} {'time':>6}"
)


def row(f: dict[str, Any]) -> str:
    repeats = str(f["repeats"])
    if f["max_repeats"] is not None:
        repeats += f"..{f['max_repeats']}"
    calls = f["mean_calls_per_check"]
    shown = f"{calls:11.1f}" if calls is not None else f"{'-':>11}"
    low, high = f["ci95"]
    return (
        f"{f['scenario']:<34} {f['goldens']:>7} {repeats:>5} {f['gates']:>5} {f['alarms']:>6} "
        f"{f['rate']:6.3f} [{low:5.3f}, {high:5.3f}] {f['target']:>8} {f['verdict']:>7} {shown} "
        f"{f['bugs']:>4} {f['wall_s']:5.1f}s"
    )


def adaptive_available(scenario: Scenario) -> bool:
    """Does run_gate honour [gate] max_repeats? A probe on the drop case: some check run of up
    to 10 gates makes more calls than repeats x goldens."""
    probe = simulate(scenario, 10, stop_when_adaptive=True)
    limit = scenario.repeats * scenario.goldens
    return any(calls > limit for calls in probe.check_calls)


def source_state() -> dict[str, Any]:
    """The commit the figures were measured at, and whether src/ had uncommitted changes."""
    import subprocess

    here = Path(__file__).resolve().parent.parent
    try:
        head = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=here, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "src"],
            cwd=here,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split("\n")
    except (OSError, subprocess.CalledProcessError):
        return {"commit": None, "src_changes": None}
    return {"commit": head, "src_changes": [line[3:] for line in dirty if line.strip()]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gates", type=int, default=500, help="simulated gates per scenario")
    parser.add_argument("--broad-goldens", type=int, default=50, help="goldens of the broad drop")
    parser.add_argument("--seed", type=int, default=0, help="added to every scenario's seed")
    parser.add_argument("--only", default="", help="comma-separated scenario-name substrings")
    parser.add_argument("--strict", action="store_true", help="exit 1 when any verdict is FAIL")
    args = parser.parse_args()
    if args.gates < 1:
        parser.error("--gates must be at least 1")

    import assay

    wanted = [w for w in args.only.split(",") if w]
    chosen = [
        dataclasses.replace(s, seed=s.seed + args.seed)
        for s in scenarios(args.broad_goldens)
        if not wanted or any(w in s.name for w in wanted)
    ]
    print(
        f"assay {assay.__version__}, python {platform.python_version()} on {os.cpu_count()} "
        f"cores; alpha {ALPHA:g}, {args.gates} gates per scenario, seed {args.seed}",
        flush=True,
    )
    started = time.perf_counter()
    results: list[dict[str, Any]] = []
    unavailable: list[str] = []
    adaptive: bool | None = None
    group = None
    for scenario in chosen:
        if scenario.adaptive:
            if adaptive is None:
                drops = [s for s in chosen if s.adaptive and s.kind == "power"]
                adaptive = adaptive_available(drops[0] if drops else scenario)
            if not adaptive:
                unavailable.append(scenario.name)
                continue
        if scenario.group != group:
            group = scenario.group
            print(f"\n{group}\n{HEADER}", flush=True)
        result = figures(simulate(scenario, args.gates))
        results.append(result)
        print(row(result), flush=True)
        for bug in result["first_bugs"]:
            print(f"    BUG: {bug}", flush=True)
    if unavailable:
        print("\nadaptive repeats: not available in this assay", flush=True)
        print(f"    skipped: {', '.join(unavailable)}", flush=True)
    wall = time.perf_counter() - started
    bugs = sum(r["bugs"] for r in results)
    failed = [r["scenario"] for r in results if r["verdict"] == "FAIL"]
    print(
        f"\ntotal wall time {wall:.1f} s; {bugs} gate(s) with an exit code other than 0/2; "
        f"{len(failed)} FAIL verdict(s)" + (f": {', '.join(failed)}" if failed else ""),
        flush=True,
    )
    OUT.mkdir(parents=True, exist_ok=True)
    document = {
        "bench": "gate_calibration",
        "assay": assay.__version__,
        "python": platform.python_version(),
        "cores": os.cpu_count(),
        "alpha": ALPHA,
        "gates_per_scenario": args.gates,
        "seed": args.seed,
        "adaptive_repeats_available": adaptive,
        "skipped": unavailable,
        "wall_s": round(wall, 3),
        "source": source_state(),
        "scenarios": results,
    }
    path = OUT / "gate-calibration.json"
    path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    print(f"figures written to {path}", flush=True)
    if bugs:
        return 1
    return 1 if args.strict and failed else 0


if __name__ == "__main__":
    sys.exit(main())
