"""A plain gate run must not pay for heavy subsystems it does not use (import discipline)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

# difflib: only a frontmatter key that is no field needs it; importlib.metadata: only a plugin
# name (pkg/name) makes assay read the installed packages; the baseline, the comparison and its
# statistics only a run that writes or checks a baseline; jinja2 only prompt templates (a
# candidates file).
HEAVY = (
    "asyncio",
    "assay.gate._baseline",
    "assay.gate._regressions",
    "assay.gate._stats",
    "scipy",
    "difflib",
    "httpx",
    "importlib.metadata",
    "jinja2",
    "jsonschema",
    "sqlglot",
    "sentence_transformers",
    "sqlite3",
    "ray",
)

PROBE = """
import sys
from assay.cli import main
try:
    main(["gate", sys.argv[1], "--outputs", sys.argv[2], "--json", "--output", sys.argv[3]])
except SystemExit as exit:
    code = exit.code
print(code, sorted(m for m in {heavy!r} if m in sys.modules))
"""


def test_a_plain_suite_imports_no_heavy_module(tmp_path: Path) -> None:
    goldens = tmp_path / "goldens"
    goldens.mkdir()
    (goldens / "g.md").write_text(
        "---\nid: g\ninput: q\nasserts: ['contains:FROM', 'regex:^SELECT', is-json]\n---\n",
        encoding="utf-8",
    )
    outputs = tmp_path / "out.json"
    outputs.write_text(json.dumps({"g": "SELECT 1 FROM t"}), encoding="utf-8")
    probe = PROBE.format(heavy=HEAVY)
    done = subprocess.run(
        [sys.executable, "-c", probe, str(goldens), str(outputs), str(tmp_path / "r.json")],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert done.stdout.split(" ", 1) == ["0", "[]\n"], done.stdout + done.stderr
    assert json.loads((tmp_path / "r.json").read_text())["summary"]["counts"]["fail"] == 1
