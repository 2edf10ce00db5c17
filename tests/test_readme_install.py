"""A new user's first hour, in a venv made exactly as README command 1 makes it (``python3 -m
venv .venv && . .venv/bin/activate && pip install . && assay gate --example``, run by bash in a
copy of this repository): no development dependency, nothing of this test process's. Then, with
that venv's ``assay`` only: the quick start, the packaged tasks' reference solutions (the
oracle) in the sandbox, the sharded CI recipe of docs/guide/sharding.md on the quick start's
project and on a suite small enough to leave a shard empty, and a live run's answers kept with
``assay eval -f outputs`` and gated again with ``assay gate`` (issue 27)."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from assay.gate._shards import Shard
from tests.test_quick_start import quick_start

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
SHARDING = ROOT / "docs" / "guide" / "sharding.md"
# What the copy leaves out: built and local state, never part of a clone.
SKIPPED = (".git", ".venv", "build", "dist", "site", "*.egg-info", "__pycache__", ".assay")


def readme_command_one() -> str:
    text = README.read_text(encoding="utf-8")
    block = re.search(r"```bash\n(.*?)\n", text)
    assert block is not None, "README.md opens with no bash block"
    return block.group(1)


class Installed:
    """The venv README command 1 made, and a clean environment that runs its commands."""

    def __init__(self, repo: Path, home: Path, first: subprocess.CompletedProcess[str]) -> None:
        self.bin = repo / ".venv" / "bin"
        self.first = first
        self.env = {
            "PATH": f"{self.bin}{os.pathsep}/usr/local/bin:/usr/bin:/bin",
            "HOME": str(home),
            "LANG": "C.UTF-8",
            "NO_COLOR": "1",
        }

    def run(self, command: str, cwd: Path, timeout: float = 300) -> tuple[int, str, str]:
        """``command`` by bash in ``cwd``, with this venv's ``assay`` first on PATH."""
        done = subprocess.run(
            ["bash", "-c", command],
            cwd=cwd,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        assert "Traceback" not in done.stdout + done.stderr, done.stderr
        return done.returncode, done.stdout, done.stderr


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    repo = tmp_path_factory.mktemp("clone") / "assay"
    shutil.copytree(ROOT, repo, ignore=shutil.ignore_patterns(*SKIPPED))
    home = tmp_path_factory.mktemp("home")
    # The machine's own Python, as a new user has it: not this test run's venv (their own pip
    # cache, though: HOME stays for the install).
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": os.environ.get("HOME", str(home))}
    env["LANG"] = "C.UTF-8"
    for key in ("PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS", "PIP_CONFIG_FILE"):
        if key in os.environ:
            env[key] = os.environ[key]
    python3 = shutil.which("python3", path=os.environ.get("PATH"))
    assert python3 is not None
    where = [python3, "-c", "import sys; print(sys.base_prefix)"]
    base = Path(subprocess.check_output(where, text=True).strip())
    env["PATH"] = f"{base / 'bin'}{os.pathsep}{env['PATH']}"
    first = subprocess.run(
        ["bash", "-c", readme_command_one()],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert first.returncode == 0, first.stdout[-2000:] + first.stderr[-2000:]
    return Installed(repo, home, first)


def test_readme_command_one_installs_and_gates_the_packaged_example(installed: Installed) -> None:
    assert "assay gate --example" in readme_command_one()
    assert "summary: 11 goldens" in installed.first.stdout
    # No development dependency came with it.
    for tool in ("ruff", "mypy", "playwright"):
        code, _, _ = installed.run(f"python -m pip show -q {tool}", installed.bin)
        assert code != 0, f"{tool} is a development dependency"


def test_the_quick_start_runs_in_the_installed_venv(installed: Installed, tmp_path: Path) -> None:
    here = tmp_path
    codes = []
    for words in quick_start():
        if words[0] == "cd":
            here = here / words[1]
            continue
        code, _, _ = installed.run(shlex.join(words), here)
        codes.append(code)
    assert codes == [0, 0, 0, 0]
    assert (here / "assay-baseline.json").is_file()


def test_the_oracle_passes_every_packaged_smoke_task(installed: Installed, tmp_path: Path) -> None:
    # A folder with no goldens of its own: the packaged tasks, which one line announces.
    code, out, err = installed.run("assay attest keygen", tmp_path)
    assert code == 0, err
    code, out, err = installed.run(
        "assay bench --agent oracle --tier smoke --json --no-save", tmp_path, timeout=600
    )
    assert code == 0, err[-3000:]
    assert "running assay's packaged goldens" in err
    document = json.loads(out)
    statuses = {r["id"]: r["status"] for r in document["results"]}
    assert len(statuses) == 5 and set(statuses.values()) == {"pass"}, (statuses, err[-3000:])
    assert document["summary"]["composite"]["components"]["safety"] == 1.0


def recipe_commands() -> tuple[str, str]:
    """The shard job's and the verdict job's assay commands of the sharding guide's recipe."""
    text = SHARDING.read_text(encoding="utf-8")
    runs = re.findall(r"- run: (assay .*)", text)
    shard = next(r for r in runs if "--shard" in r)
    merge = next(r for r in runs if r.startswith("assay merge"))
    return shard, merge


def run_recipe(installed: Installed, project: Path, n: int = 3) -> tuple[int, str, str]:
    """Each shard job in its own folder (the artifact), then the verdict job over all."""
    shard, merge = recipe_commands()
    assert "${{ matrix.shard }}/3" in shard and merge.startswith("assay merge shards/*/shard.json")
    for i in range(1, n + 1):
        command = shard.replace("${{ matrix.shard }}", str(i))
        code, _, err = installed.run(command, project)
        assert code == 0, f"shard {i}: {err}"
        artifact = project / "shards" / f"shard-{i}"
        artifact.mkdir(parents=True)
        (project / "shard.json").rename(artifact / "shard.json")
    return installed.run(merge, project)


def test_the_sharded_recipe_on_the_quick_start_project(
    installed: Installed, tmp_path: Path
) -> None:
    assert installed.run("assay init my-evals", tmp_path)[0] == 0
    project = tmp_path / "my-evals"
    assert installed.run("assay gate --outputs outputs.json -w", project)[0] == 0
    code, _, err = run_recipe(installed, project)
    assert code == 0, err
    assert (project / "assay-junit.xml").is_file()


def test_the_sharded_recipe_when_a_shard_is_empty(installed: Installed, tmp_path: Path) -> None:
    # Two goldens whose ids leave shard 3 of 3 empty: that CI job must pass, and the merge too.
    ids = [g for g in (f"q{i}" for i in range(100)) if not Shard(3, 3).holds(g)][:2]
    (tmp_path / "goldens").mkdir()
    for golden_id in ids:
        (tmp_path / "goldens" / f"{golden_id}.md").write_text(
            f"---\nid: {golden_id}\ninput: q\nasserts: ['contains:ok']\n---\n", encoding="utf-8"
        )
    (tmp_path / "outputs.json").write_text(json.dumps(dict.fromkeys(ids, "ok")), encoding="utf-8")
    assert installed.run("assay gate --outputs outputs.json -w", tmp_path)[0] == 0
    code, _, err = run_recipe(installed, tmp_path)
    assert code == 0, err
    empty = json.loads((tmp_path / "shards" / "shard-3" / "shard.json").read_text("utf-8"))
    assert empty["results"] == [] and empty["partial"]["suite_goldens"] == 2


def test_eval_outputs_then_gate_is_a_round_trip(installed: Installed, tmp_path: Path) -> None:
    # The README's way to keep a live run's answers and gate them later, without the model.
    assert installed.run("assay init my-evals", tmp_path)[0] == 0
    project = tmp_path / "my-evals"
    spec = {"provider": {"type": "echo"}, "candidates": [{"id": "echo", "prompt": "{{ input }}"}]}
    (project / "candidates.yaml").write_text(json.dumps(spec), encoding="utf-8")
    keep, gate = readme_round_trip()
    code, _, err = installed.run(keep, project)
    assert code == 0, err
    code, out, err = installed.run(f"{gate} --json", project)
    assert code == 0, err
    _, live, _ = installed.run("assay eval --candidates candidates.yaml --json --no-save", project)
    verdicts = [(r["id"], r["status"]) for r in json.loads(out)["results"]]
    assert verdicts == [(r["id"], r["status"]) for r in json.loads(live)["results"]]


def readme_round_trip() -> tuple[str, str]:
    """The README's two commands that keep a live run's answers and gate them."""
    text = README.read_text(encoding="utf-8")
    keep = re.search(r"`(assay eval --candidates candidates\.yaml -f outputs -o [^`]+)`", text)
    gate = re.search(r"`(assay gate --outputs answers\.json)`", text)
    assert keep is not None and gate is not None, "README.md lost its eval -> gate round trip"
    return keep.group(1), gate.group(1)
