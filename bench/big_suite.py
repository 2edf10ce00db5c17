"""Big suites on every core: `assay gate --check` beside the simplest fast loop, in one run.

Usage: python bench/big_suite.py [--md 10000] [--jsonl 100000] [--small 10] [--repeat 5]
                                 [--break-even] [--ref OTHER_TREE/src]

Generates, in a temporary folder, a suite of markdown goldens (YAML frontmatter, three
deterministic asserts each: contains, regex, is-json), one of JSONL goldens, a small one, their
outputs and their baselines; then measures, in rounds that alternate the commands (a shared
machine's noise falls on all of them alike), each as a fresh process:

- the bare loop: read each file, ``yaml.load(front, Loader=yaml.CSafeLoader)``, the three checks
  with ``re`` and ``json``, in one process: the simplest fast Python doing the same reading and
  checking (no baseline, no report);
- ``assay gate GOLDENS --outputs FILE --check``: on every core, and with ``ASSAY_WORKERS=1``;
- the same on the JSONL suite, with the peak memory of the process tree (``wait4``'s
  ``ru_maxrss``: the largest process, workers included; and, in one more run, the sum of the
  proportional set sizes of the tree, sampled every 20 ms);
- the start-up: ``assay gate --check`` on the small suite.

``--ref SRC`` measures another tree's assay (``SRC`` first on ``PYTHONPATH``; e.g. a
``git worktree`` of main) beside this one, every command of both in the same rounds, each side
with its own baselines.

Prints a markdown table: median and range over the rounds. ``--break-even`` measures one process
against all cores (forced) on growing suites, the figures behind assay's threshold.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path

ASSERTS = ["'contains:FROM'", '\'regex:"id":\\s*"g\\d+"\'', "is-json"]
BARE = '''"""The bare loop: read, parse the frontmatter with PyYAML's C loader, three checks."""
import json, os, re, sys
import yaml

root, outputs_path = sys.argv[1], sys.argv[2]
with open(outputs_path, encoding="utf-8") as handle:
    outputs = json.load(handle)
pattern = re.compile(r'"id":\\s*"g\\d+"')
total = passed = 0
for folder, _, names in os.walk(root):
    for name in names:
        if not name.endswith(".md"):
            continue
        with open(os.path.join(folder, name), encoding="utf-8") as handle:
            text = handle.read()
        golden = yaml.load(text.split("---\\n", 2)[1], Loader=yaml.CSafeLoader)
        output = outputs.get(golden["id"], "")
        ok = "FROM" in output and pattern.search(output) is not None
        try:
            json.loads(output)
        except ValueError:
            ok = False
        total += 1
        passed += ok
print(total, passed)
'''


def golden_text(i: int) -> str:
    tier = ("smoke", "standard", "stretch")[i % 3]
    return (
        f"---\nid: g{i:06d}\ntier: {tier}\ninput: 'question {i}'\nasserts:\n"
        + "".join(f"  - {a}\n" for a in ASSERTS)
        + f"---\nGenerated golden {i}.\n\n## Origin\nbench/big_suite.py\n"
    )


def output_for(i: int) -> str:
    return json.dumps({"id": f"g{i:06d}", "answer": f"SELECT name FROM t{i % 97}"})


def make_markdown(root: Path, n: int) -> tuple[Path, Path]:
    goldens, outputs = root / "goldens", root / "outputs.json"
    for i in range(n):
        folder = goldens / f"part{i // 1000:03d}"
        if i % 1000 == 0:
            folder.mkdir(parents=True)
        (folder / f"g{i:06d}.md").write_text(golden_text(i), encoding="utf-8")
    outputs.write_text(json.dumps({f"g{i:06d}": output_for(i) for i in range(n)}), "utf-8")
    return goldens, outputs


def make_jsonl(root: Path, n: int) -> tuple[Path, Path]:
    goldens, outputs = root / "goldens", root / "outputs.jsonl"
    goldens.mkdir(parents=True)
    asserts = ["contains:FROM", 'regex:"id":\\s*"g\\d+"', "is-json"]
    with open(goldens / "suite.jsonl", "w", encoding="utf-8") as handle:
        for i in range(n):
            row = {"id": f"g{i:06d}", "input": f"question {i}", "asserts": asserts, "origin": "b"}
            handle.write(json.dumps(row) + "\n")
    with open(outputs, "w", encoding="utf-8") as handle:
        for i in range(n):
            handle.write(json.dumps({"id": f"g{i:06d}", "output": output_for(i)}) + "\n")
    return goldens, outputs


def _env(extra: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.pop("ASSAY_WORKERS", None)
    env.pop("ASSAY_PARALLEL_MIN_MS", None)
    env.update(extra)
    return env


def timed(command: Sequence[str], cwd: Path, env: dict[str, str]) -> tuple[float, float, int]:
    """Run a fresh process: (wall seconds, peak RSS MB of its largest process, exit code)."""
    with tempfile.TemporaryFile() as errors:
        start = time.perf_counter()
        proc = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=errors)
        # wait4: this child's usage, its reaped workers included (ru_maxrss: the largest).
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = code = os.waitstatus_to_exitcode(status)
        if code not in (0, 2):
            errors.seek(0)
            sys.exit(f"{' '.join(command)} failed ({code}): {errors.read().decode()}")
    return wall, usage.ru_maxrss / 1024, code


def _digest(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    path.unlink()
    return digest.hexdigest()


def _tree(pid: int) -> list[int]:
    out, todo = [], [pid]
    while todo:
        current = todo.pop()
        out.append(current)
        try:
            for task in os.listdir(f"/proc/{current}/task"):
                with open(f"/proc/{current}/task/{task}/children") as handle:
                    todo.extend(int(p) for p in handle.read().split())
        except OSError:
            continue
    return out


def _pss_mb(pid: int) -> float:
    total = 0
    for member in _tree(pid):
        try:
            with open(f"/proc/{member}/smaps_rollup") as handle:
                for line in handle:
                    if line.startswith("Pss:"):
                        total += int(line.split()[1])
        except OSError:
            continue
    return total / 1024


def tree_pss(command: Sequence[str], env: dict[str, str], *, root: Path) -> float | None:
    """The peak of the summed PSS of the process tree (sampled every 20 ms), in MB."""
    if not os.path.exists("/proc/self/smaps_rollup"):
        return None
    proc = subprocess.Popen(command, cwd=root, env=env, stdout=subprocess.DEVNULL)
    peak = 0.0
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, _pss_mb(proc.pid))
            done.wait(0.02)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    proc.wait()
    done.set()
    sampler.join()
    return peak


def assay_command(goldens: Path, outputs: Path) -> list[str]:
    return [sys.executable, "-m", "assay", "gate", str(goldens), "--outputs", str(outputs)]


def _fmt(values: list[float], unit: str = "s") -> tuple[str, str]:
    median = statistics.median(values)
    digits = 3 if unit == "s" else 0
    return (
        f"{median:.{digits}f} {unit}",
        f"{min(values):.{digits}f}–{max(values):.{digits}f}",
    )


# The code measured: this tree (the installed assay), and with --ref another tree's src/.
Sides = dict[str, dict[str, str]]


def sides_of(args: argparse.Namespace) -> Sides:
    """Each side's extra environment: none for this tree; the reference's src/ first on
    PYTHONPATH (``python -m assay`` then imports that tree's assay)."""
    sides: Sides = {"this tree": {}}
    if args.ref is not None:
        src = str(Path(args.ref).resolve())
        path = os.environ.get("PYTHONPATH")
        sides["ref"] = {"PYTHONPATH": src if not path else src + os.pathsep + path}
    return sides


def prepare(root: Path, suites: dict[str, tuple[Path, Path]], sides: Sides) -> None:
    """Each side's baselines, and its documents from one process and from all cores compared
    (checked once, not timed; into files: this process stays small, and a child's peak RSS
    counts its parent's at the fork)."""
    for side, extra in sides.items():
        all_cores, one = _env(extra), _env({**extra, "ASSAY_WORKERS": "1"})
        for name, (goldens, outputs) in suites.items():
            base = root / name / f"baseline-{side.replace(' ', '-')}.json"
            command = [
                *assay_command(goldens, outputs),
                "--write-baseline",
                "--baseline",
                str(base),
            ]
            timed(command, root, one)
            documents = []
            for env, file in ((one, "one.json"), (all_cores, "all.json")):
                command = [*assay_command(goldens, outputs), "--json", "--output", str(root / file)]
                timed(command, root, env)
                documents.append(_digest(root / file))
            if documents[0] != documents[1]:
                sys.exit(f"{side}, {name}: one process and all cores gave different documents")


Row = tuple[list[str], dict[str, str]]


def rows_of(
    args: argparse.Namespace, root: Path, suites: dict[str, tuple[Path, Path]], sides: Sides
) -> dict[tuple[str, str], Row]:
    """The commands timed, by (what, side): the bare loop, then each side's runs."""
    md_goldens, md_outputs = suites["md"]
    bare = [sys.executable, str(root / "bare.py"), str(md_goldens), str(md_outputs)]
    rows: dict[tuple[str, str], Row] = {("bare", ""): (bare, _env({"ASSAY_WORKERS": "1"}))}
    for side, extra in sides.items():
        all_cores, one = _env(extra), _env({**extra, "ASSAY_WORKERS": "1"})

        def check(name: str, side: str = side) -> list[str]:
            goldens, outputs = suites[name]
            baseline = str(root / name / f"baseline-{side.replace(' ', '-')}.json")
            return [*assay_command(goldens, outputs), "--check", "--baseline", baseline]

        rows[("md", side)] = (check("md"), all_cores)
        rows[("md1", side)] = (check("md"), one)
        rows[("jsonl", side)] = (check("jsonl"), all_cores)
        rows[("jsonl1", side)] = (check("jsonl"), one)
        rows[("small", side)] = (check("small"), all_cores)
    return rows


def measure(args: argparse.Namespace, root: Path) -> None:
    suites = {
        "md": make_markdown(root / "md", args.md),
        "jsonl": make_jsonl(root / "jsonl", args.jsonl),
        "small": make_markdown(root / "small", args.small),
    }
    (root / "bare.py").write_text(BARE, encoding="utf-8")
    sides = sides_of(args)
    prepare(root, suites, sides)
    rows = rows_of(args, root, suites, sides)
    walls: dict[tuple[str, str], list[float]] = {k: [] for k in rows}
    rss: dict[tuple[str, str], list[float]] = {k: [] for k in rows}
    ratios: dict[str, list[float]] = {side: [] for side in sides}
    # Rounds alternate every command, both sides' included: a shared machine's noise falls on
    # all of them alike.
    for _ in range(args.repeat):
        for key, (command, env) in rows.items():
            wall, peak, code = timed(command, root, env)
            if key[0] != "bare" and code != 0:
                sys.exit(f"{key}: assay gate --check exited {code}")
            walls[key].append(wall)
            rss[key].append(peak)
        for side in sides:
            ratios[side].append(walls[("md", side)][-1] / walls[("bare", "")][-1])
    pss = {
        (k, side): tree_pss(*rows[(k, side)], root=root)
        for side in sides
        for k in ("jsonl", "jsonl1")
    }
    table(args, sides, walls, rss, pss, ratios)


def table(
    args: argparse.Namespace,
    sides: Sides,
    walls: dict[tuple[str, str], list[float]],
    rss: dict[tuple[str, str], list[float]],
    pss: dict[tuple[str, str], float | None],
    ratios: dict[str, list[float]],
) -> None:
    """The markdown table: each row's median and range, then the ratios of each side."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(
        f"python {sys.version.split()[0]}, {cores} cores, {args.repeat} rounds; "
        "each figure: median, range" + (f"; ref: {args.ref}" if args.ref is not None else ""),
        flush=True,
    )
    print()
    print("| what | code | wall | range | peak RSS (largest process) | tree PSS (sum, peak) |")
    print("|---|---|---|---|---|---|")
    labels = {
        "bare": f"bare loop (read, CSafeLoader, 3 checks), {args.md:,} markdown goldens",
        "md": f"`assay gate --check`, {args.md:,} markdown goldens, all cores",
        "md1": f"`assay gate --check`, {args.md:,} markdown goldens, `ASSAY_WORKERS=1`",
        "jsonl": f"`assay gate --check`, {args.jsonl:,} JSONL goldens, all cores",
        "jsonl1": f"`assay gate --check`, {args.jsonl:,} JSONL goldens, `ASSAY_WORKERS=1`",
        "small": f"`assay gate --check`, {args.small} markdown goldens (start-up)",
    }
    for what, side in walls:
        shown, spread = _fmt(walls[(what, side)])
        largest = f"{max(rss[(what, side)]):.0f} MB"
        shared = pss.get((what, side))
        tree = "" if shared is None else f"{shared:.0f} MB"
        print(f"| {labels[what]} | {side} | {shown} | {spread} | {largest} | {tree} |")
    bare = statistics.median(walls[("bare", "")])
    for side in sides:
        side_ratios = ratios[side]
        md_median = statistics.median(walls[("md", side)]) / bare
        print(
            f"| {args.md:,} markdown: assay (all cores) / bare loop, per round | {side} | "
            f"{statistics.median(side_ratios):.2f} × | "
            f"{min(side_ratios):.2f}–{max(side_ratios):.2f} | "
            f"ratio of medians {md_median:.2f} × | |"
        )
    for side in sides:
        one_core = statistics.median(walls[("md1", side)]) / statistics.median(walls[("md", side)])
        jl = statistics.median(walls[("jsonl1", side)]) / statistics.median(walls[("jsonl", side)])
        print(
            f"| speed-up of all cores over one: markdown {one_core:.2f} ×, JSONL {jl:.2f} × "
            f"| {side} | | | | |"
        )


def break_even(args: argparse.Namespace, root: Path) -> None:
    """One process against all cores, forced, on growing markdown and JSONL suites."""
    print("| suite | one process | all cores (forced) | all / one |")
    print("|---|---|---|---|")
    one = _env({"ASSAY_WORKERS": "1"})
    forced = _env({"ASSAY_PARALLEL_MIN_MS": "0"})
    sizes = [("md", n) for n in (500, 1000, 2000, 4000, 8000)]
    sizes += [("jsonl", n) for n in (5000, 10000, 20000, 40000)]
    for kind, n in sizes:
        folder = root / f"{kind}-{n}"
        goldens, outputs = (make_markdown if kind == "md" else make_jsonl)(folder, n)
        command = [
            *assay_command(goldens, outputs),
            "--check",
            "--baseline",
            str(folder / "b.json"),
        ]
        timed([*command[:-3], "--write-baseline", "--baseline", str(folder / "b.json")], root, one)
        a: list[float] = []
        b: list[float] = []
        for _ in range(args.repeat):
            a.append(timed(command, root, one)[0])
            b.append(timed(command, root, forced)[0])
        ma, mb = statistics.median(a), statistics.median(b)
        label = f"{n:,} {'markdown' if kind == 'md' else 'JSONL'}"
        print(f"| {label} | {ma:.3f} s | {mb:.3f} s | {mb / ma:.2f} |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--md", type=int, default=10_000, help="markdown goldens")
    parser.add_argument("--jsonl", type=int, default=100_000, help="JSONL goldens")
    parser.add_argument("--small", type=int, default=10, help="goldens of the start-up suite")
    parser.add_argument("--repeat", type=int, default=5, help="rounds")
    parser.add_argument("--break-even", action="store_true", help="measure the threshold")
    parser.add_argument(
        "--ref",
        metavar="SRC",
        help="another tree's src/ folder, measured side by side in the same rounds",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="assay-big-suite-") as tmp:
        (break_even if args.break_even else measure)(args, Path(tmp))


if __name__ == "__main__":
    main()
