"""The mirrorsync command line: ``sync SOURCE DEST``."""

import argparse
import shutil
import sys
from pathlib import Path


def changed_files(source: Path, dest: Path) -> list[Path]:
    """The files under ``source`` (relative paths, sorted) that ``dest`` lacks or has older."""
    out = []
    for path in sorted(p for p in source.rglob("*") if p.is_file()):
        rel = path.relative_to(source)
        target = dest / rel
        if not target.exists() or target.stat().st_mtime < path.stat().st_mtime:
            out.append(rel)
    return out


def sync(source: Path, dest: Path) -> int:
    if not source.is_dir():
        print(f"error: source not found: {source}", file=sys.stderr)
        return 1
    copied = 0
    for rel in changed_files(source, dest):
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            shutil.copy2(source / rel, target)
        except OSError as exc:
            print(f"error: cannot copy {rel}: {exc.strerror}", file=sys.stderr)
            return 1
        print(f"copied {rel.as_posix()}")
        copied += 1
    print(f"synced {copied} file(s)")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mirrorsync")
    commands = parser.add_subparsers(dest="command", required=True)
    sync_cmd = commands.add_parser("sync", help="copy new and updated files from SOURCE to DEST")
    sync_cmd.add_argument("source", type=Path)
    sync_cmd.add_argument("dest", type=Path)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return sync(args.source, args.dest)


if __name__ == "__main__":
    sys.exit(main())
