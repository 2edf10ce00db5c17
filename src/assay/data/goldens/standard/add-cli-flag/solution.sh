#!/usr/bin/env bash
# Reference solution: a --quiet flag on sync that silences progress (not errors), documented in
# the README and tested both ways.
set -euo pipefail
python3 - <<'PY'
from pathlib import Path


def edit(name, *pairs):
    path = Path(name)
    text = path.read_text(encoding="utf-8")
    for old, new in pairs:
        assert text.count(old) == 1, f"{name} is not the fixture's: {old!r}"
        text = text.replace(old, new)
    path.write_text(text, encoding="utf-8")


edit(
    "src/cli.py",
    ("def sync(source: Path, dest: Path) -> int:\n",
     "def sync(source: Path, dest: Path, *, quiet: bool = False) -> int:\n"
     '    """Copy the changed files; progress on stdout unless ``quiet``, errors on stderr."""\n'),
    ('        print(f"copied {rel.as_posix()}")\n',
     '        if not quiet:\n            print(f"copied {rel.as_posix()}")\n'),
    ('    print(f"synced {copied} file(s)")\n',
     '    if not quiet:\n        print(f"synced {copied} file(s)")\n'),
    ('    sync_cmd.add_argument("dest", type=Path)\n',
     '    sync_cmd.add_argument("dest", type=Path)\n'
     '    sync_cmd.add_argument(\n'
     '        "-q", "--quiet", action="store_true", help="print no progress (errors still go to stderr)"\n'
     '    )\n'),
    ("    return sync(args.source, args.dest)\n",
     "    return sync(args.source, args.dest, quiet=args.quiet)\n"),
)
edit(
    "README.md",
    ("python -m src.cli sync SOURCE DEST\n```\n",
     "python -m src.cli sync [--quiet] SOURCE DEST\n```\n"),
    ("the exit status is 1.\n",
     "the exit status is 1.\n\n"
     "`--quiet` (`-q`) prints no progress: nothing at all on success, for cron jobs. Errors\n"
     "still go to stderr, with exit status 1.\n"),
)
PY
cat >> tests/test_cli.py <<'PY'


def test_sync_quiet_still_reports_errors_on_stderr(tmp_path, capsys):
    assert main(["sync", "-q", str(tmp_path / "nope"), str(tmp_path / "dest")]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "source not found" in captured.err
PY
echo "Added sync --quiet (-q) to src/cli.py, documented it in README.md and tested it both ways."
