"""What `assay import promptfoo` converts of a corpus of promptfoo's own example configs.

Usage: python bench/promptfoo_corpus.py [--corpus tests/data/promptfoo_corpus] [--json] [--limit N]

Each config is copied to a temporary folder and imported as the command line does it
(`python -m assay import promptfoo CONFIG -o OUT --allow-partial`, a fresh process), and what it
wrote is loaded with assay's own loaders. The script prints:

- how many configs the corpus has and how many import (the importer writes a suite; the others
  it refuses, with one line naming the file and field);
- how many of the imported suites have every provider converted to a runnable assay provider:
  no provider of the config listed as not converted, no fallback to `echo` (unless the config
  itself names echo), and each candidate's provider type served by a module assay has;
- the providers the corpus names (by how many configs name each kind);
- what is not converted, by feature (how many configs, how many times), refusals included.

To measure another revision of assay, put its sources first on the path (the child processes
inherit it): `PYTHONPATH=/path/to/that/src python bench/promptfoo_corpus.py`.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

CORPUS = Path(__file__).resolve().parents[1] / "tests" / "data" / "promptfoo_corpus"
_PROVIDER_ENTRY = re.compile(r"^(providers|targets)\[(\d+)\] \((.*)\)$")


@dataclass
class Outcome:
    """One config's import."""

    config: str
    kinds: set[str]
    refused: str | None = None
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (what, why)
    runnable: bool = False
    loads: bool = True
    why_not: str = ""


def is_config(path: Path) -> bool:
    """A YAML mapping with prompts, providers or targets at its top."""
    try:
        data = yaml.safe_load(path.read_text("utf-8"))
    except yaml.YAMLError:
        return False
    return isinstance(data, dict) and bool({"prompts", "providers", "targets"} & set(data))


def configs(corpus: Path) -> list[Path]:
    found = (p for p in corpus.rglob("*") if p.suffix in (".yaml", ".yml") and is_config(p))
    return sorted(found)


def provider_names(raw: dict[str, Any]) -> list[str]:
    """promptfoo's providers (or their alias, targets), as ids, in order."""
    entries = raw.get("providers", raw.get("targets")) or []
    if isinstance(entries, (str, dict)):
        entries = [entries]
    names: list[str] = []
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, dict) and "id" not in entry and len(entry) == 1:
            entry = {"id": next(iter(entry))}  # promptfoo's {provider-id: options} form
        name = entry.get("id") if isinstance(entry, dict) else entry
        names.append(name if isinstance(name, str) else "?")
    return names


def provider_kind(name: str) -> str:
    """The family a provider id names: `bedrock:...` is bedrock, a URL is http."""
    if name.startswith("file://") or name.endswith((".py", ".js", ".ts", ".mjs")):
        return "file://" + ("*.py" if ".py" in name else "*.js")
    if re.match(r"https?://", name) or name in ("http", "https"):
        return "http"
    return name.split(":", 1)[0]


def unserved_types(candidates: Any) -> tuple[set[str], set[str]]:
    """The provider types of the loaded candidates, and those no module of assay serves."""
    from assay.models import providers as registry

    served = getattr(registry, "_BUILTINS", {})
    types = {candidate.provider.type for candidate in candidates.candidates}
    missing: set[str] = set()
    for kind in types:
        module, _, cls = served.get(kind, ":").partition(":")
        try:
            if not hasattr(importlib.import_module(f"assay.models.providers.{module}"), cls):
                missing.add(kind)
        except ImportError:
            missing.add(kind)
    return types, missing


def import_one(path: Path, corpus: Path, work: Path) -> Outcome:
    from assay.errors import AssayError
    from assay.goldens._loader import iter_goldens
    from assay.importers.promptfoo import convert
    from assay.models._candidates_file import load_candidates_file

    raw = yaml.safe_load(path.read_text("utf-8"))
    names = provider_names(raw)
    outcome = Outcome(path.relative_to(corpus).as_posix(), {provider_kind(n) for n in names})
    folder = work / "example"
    shutil.copytree(path.parent, folder)
    command = [sys.executable, "-m", "assay", "import", "promptfoo", path.name]
    command += ["-o", str(work / "out"), "--allow-partial"]
    proc = subprocess.run(command, cwd=folder, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        outcome.refused = proc.stderr.strip().removeprefix("assay: error: ")
        return outcome
    try:
        conversion = convert(folder / path.name)
    except AssayError as err:  # the command converted it: this would be a bug
        outcome.refused = f"convert() refused what the command converted: {err}"
        return outcome
    # The temporary folder's path never reaches a feature's name.
    here = f"{folder}{os.sep}"
    outcome.skipped = [(s.what, s.why.replace(here, "")) for s in conversion.skipped]
    lost = sorted({int(m.group(2)) for w, _ in outcome.skipped if (m := _PROVIDER_ENTRY.match(w))})
    try:
        list(iter_goldens(work / "out" / "goldens"))
        candidates = load_candidates_file(work / "out" / "candidates.yaml")
    except AssayError as err:  # written but not loadable: an importer bug
        outcome.loads = False
        outcome.why_not = "what it wrote does not load: " + str(err).replace(f"{work}{os.sep}", "")
        return outcome
    types, missing = unserved_types(candidates)
    # echo that the config does not name is the importer's stand-in, not a converted provider.
    fallback = "echo" in types and "echo" not in outcome.kinds
    if lost:
        outcome.why_not = f"provider(s) not converted: {', '.join(names[i] for i in lost)}"
    elif fallback:
        outcome.why_not = "no provider converts: candidates.yaml falls back to echo"
    elif missing:
        outcome.why_not = f"no module serves type(s) {', '.join(sorted(missing))}"
    outcome.runnable = not outcome.why_not
    return outcome


def feature(what: str, why: str) -> str:
    """A skipped construct as a feature: indices, provider ids and file names generalised."""
    what = re.sub(r"\[\d+\]", "[]", what)
    entry = re.match(r"^(providers|targets)\[\] \((.*)\)$", what)
    if entry:
        what = f"{entry.group(1)}[] ({provider_kind(entry.group(2))})"
    what = re.sub(r"\(file://[^)]*?(\.\w+)\)", r"(file://*\1)", what)
    what = re.sub(r"\((?!file:)(\w+)://[^)]*\)", r"(\1://...)", what)
    what = re.sub(r"\(prompt \d+ of its file\)", "(prompt of a file)", what)
    why = re.sub(r" \(line \d+: .*\)$", "", why)
    return f"{what}: {why}"


def refusal(line: str) -> str:
    line = re.sub(r"^[^:]*\.ya?ml: ", "", line)
    line = re.sub(r"\[\d+\]", "[]", line)
    line = re.sub(r"\(prompt \d+ of its file\)", "(prompt of a file)", line)
    line = re.sub(r" \(line \d+: [^)]*\)", "", line)
    line = re.sub(r"\((?!file:)(\w+)://[^)]*\)", r"(\1://...)", line)
    return "refused: " + re.sub(r"\(file://[^)]*?(\.\w+)\)", r"(file://*\1)", line)


def features(outcomes: list[Outcome]) -> list[tuple[str, int, int]]:
    """(feature, configs, occurrences), most configs first."""
    per_config: Counter[str] = Counter()
    total: Counter[str] = Counter()
    for o in outcomes:
        found = [refusal(o.refused)] if o.refused else [feature(w, y) for w, y in o.skipped]
        total.update(found)
        per_config.update(set(found))
    return sorted(((f, per_config[f], total[f]) for f in total), key=lambda r: (-r[1], r[0]))


def report(outcomes: list[Outcome]) -> dict[str, Any]:
    imported = [o for o in outcomes if o.refused is None]
    runnable = [o for o in imported if o.runnable]
    kinds: Counter[str] = Counter(k for o in outcomes for k in o.kinds)
    return {
        "configs": len(outcomes),
        "imported": len(imported),
        "loads": sum(o.loads for o in imported),
        "all_providers_runnable": len(runnable),
        "share": round(len(runnable) / len(imported), 4) if imported else 0.0,
        "not_runnable": {o.config: o.why_not for o in imported if not o.runnable},
        "providers_named": dict(sorted(kinds.items(), key=lambda kv: (-kv[1], kv[0]))),
        "not_converted": [
            {"feature": f, "configs": c, "times": t} for f, c, t in features(outcomes)
        ],
    }


def print_report(figures: dict[str, Any]) -> None:
    import assay

    print(f"assay from {Path(assay.__file__).parent}")
    print(
        f"configs: {figures['configs']}, imported: {figures['imported']}, "
        f"of which what was written loads: {figures['loads']}"
    )
    print(
        f"suites whose every provider converts to a runnable assay provider: "
        f"{figures['all_providers_runnable']} of {figures['imported']} "
        f"({figures['share']:.1%})"
    )
    for config, why in figures["not_runnable"].items():
        print(f"  not: {config}: {why}")
    print("providers named (configs naming each kind):")
    for kind, count in figures["providers_named"].items():
        print(f"  {count:3d}  {kind}")
    print("not converted, by feature (configs, times):")
    for row in figures["not_converted"]:
        print(f"  {row['configs']:3d} {row['times']:4d}  {row['feature']}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--limit", type=int, default=0, help="only the first N configs")
    args = parser.parse_args()
    corpus = args.corpus.resolve()
    outcomes = []
    for path in configs(corpus)[: args.limit or None]:
        with tempfile.TemporaryDirectory() as work:
            outcomes.append(import_one(path, corpus, Path(work)))
    figures = report(outcomes)
    if args.json:
        print(json.dumps(figures, indent=2, ensure_ascii=False))
    else:
        print_report(figures)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONIOENCODING", "utf-8")
    sys.exit(main())
