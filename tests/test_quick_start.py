"""A new user's first ten minutes: the README's quick start, command by command, in a fresh
folder, each output checked; then the promise it ends on (``--check`` passes until an output
gets worse) kept."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

from tests.helpers.cli import run_cli_subprocess

README = Path(__file__).resolve().parents[1] / "README.md"


def quick_start() -> list[list[str]]:
    """The quick start's commands (split on ``&&``, comments dropped), without the install."""
    text = README.read_text(encoding="utf-8")
    block = re.search(r"## Quick start\n\n```bash\n(.*?)```", text, re.S)
    assert block is not None, "README.md has no Quick start block"
    commands = []
    for line in block.group(1).splitlines():
        code = line.split("#", 1)[0].strip()
        for part in code.split("&&"):
            words = shlex.split(part)
            if words and words[:2] != ["pip", "install"]:
                commands.append(words)
    return commands


def test_the_readme_quick_start_works_as_written(tmp_path: Path) -> None:
    commands = quick_start()
    assert [c[:2] for c in commands] == [
        ["assay", "init"],
        ["cd", "my-evals"],
        ["assay", "gate"],
        ["assay", "gate"],
        ["assay", "gate"],
    ]
    here = tmp_path
    outputs: list[tuple[int, str, str]] = []
    for words in commands:
        if words[0] == "cd":
            here = here / words[1]
            assert here.is_dir()
            continue
        outputs.append(run_cli_subprocess(words[1:], here, timeout=60))
    (init, gate, write, check) = outputs
    assert init[0] == 0 and "assay init: created 9 files" in init[1]
    assert "assay gate --outputs outputs.json" in init[1]  # what it says to do next
    assert gate[0] == 0
    assert "summary: 6 goldens: 5 pass, 0 fail, 1 needs-judge" in gate[1]
    assert write[0] == 0 and (here / "assay-baseline.json").is_file()
    assert check[0] == 0 and "gate: passed" in check[1]
    for _, out, err in outputs:
        assert "Traceback" not in out + err

    # "--check passes until an output gets worse": make one worse, and it exits 2.
    answers = json.loads((here / "outputs.json").read_text(encoding="utf-8"))
    answers["sql-active-users"] = "DROP TABLE users;"
    (here / "outputs.json").write_text(json.dumps(answers), encoding="utf-8")
    code, out, _ = run_cli_subprocess(commands[-1][1:], here, timeout=60)
    assert code == 2
    assert "sql-active-users" in out and "gate: FAILED" in out
