"""Finding goldens: recursive and sorted, tiers from folders; the project's suite (its own
goldens, the packaged ones when asked for or when it has none)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import partial
from pathlib import Path

from assay._yaml import yaml_load
from assay.errors import GoldenError
from assay.goldens._defaults import read_defaults
from assay.goldens._markdown import parse_markdown
from assay.goldens._model import Defaults, Golden, build_goldens, with_line
from assay.io import iter_jsonl_objects, read_bytes, read_text, require_regular_file
from assay.vocabulary import TIERS, Tier

_SKIPPED_NAMES = frozenset({"readme.md", "index.md", "log.md"})
_JSONL = ".jsonl"
_YAML = (".yaml", ".yml")


def _is_golden_file(name: str) -> bool:
    if name.startswith(("_", ".")) or name.lower() in _SKIPPED_NAMES:
        return False
    return name.endswith((".md", _JSONL, *_YAML))


def discover_paths(root: Path) -> list[str]:
    """Every golden file under ``root`` (or ``root`` itself), sorted by relative path, as path
    strings (what ``str()`` of a ``Path`` gives): a suite of 10,000 files need not build 10,000
    ``Path`` objects to read them.

    Raises:
        GoldenError: no such folder, a folder that cannot be read, or an entry named like a
            golden that is no regular file (a FIFO, device, socket, symlink loop, dangling link).
    """
    if root.is_file():
        return [str(root)]
    if not root.is_dir():
        raise GoldenError("goldens folder not found", source=str(root))
    found: list[tuple[str, str]] = []
    _walk(str(root), "", found)
    # scandir joins a folder and a name with one separator, and the root is str() of a Path:
    # each string is already what str(Path(string)) would give.
    return [path for _, path in sorted(found)]


def _require_regular(entry: os.DirEntry[str]) -> None:
    """Raise, naming what it is, unless ``entry`` is a regular file: ``is_file()`` costs no
    system call for one (the directory says so)."""
    try:
        if entry.is_file():
            return
    except OSError:  # a symlink loop: require_regular_file names it
        pass
    require_regular_file(entry.path, GoldenError)


# A folder holding this file is an executable agent task: the file is its golden, the rest
# (the fixture repository, the reference solution) is the task's, never walked for goldens.
TASK_FILE = "task.md"


def _walk(folder: str, rel: str, found: list[tuple[str, str]]) -> None:
    try:
        entries = list(os.scandir(folder))
    except OSError as exc:  # os.walk would skip it silently: a suite must not shrink unseen
        raise GoldenError(f"cannot read the folder: {exc.strerror}", source=str(folder)) from None
    task = next((e for e in entries if e.name == TASK_FILE), None)
    if task is not None:  # a task folder (PATH may name one): its golden only
        _require_regular(task)
        found.append((rel + TASK_FILE, task.path))
        return
    for entry in entries:
        key = rel + entry.name
        if entry.is_dir(follow_symlinks=False):
            if not entry.name.startswith((".", "_")):
                _walk(entry.path, key + "/", found)
        elif _is_golden_file(entry.name):
            _require_regular(entry)
            found.append((key, entry.path))


def folder_tier(path: str) -> Tier | None:
    """The tier a golden's folder names (``smoke/x.md``; a task's ``smoke/t/task.md``), if any:
    ``Path(path).parent.name`` with string operations (``path`` is ``str()`` of a Path)."""
    return _tier_of(*os.path.split(path))


def _tier_of(folder: str, name: str) -> Tier | None:
    """:func:`folder_tier` of the path ``folder``/``name`` (``os.path.split`` of it)."""
    if name == TASK_FILE:
        folder = os.path.dirname(folder)
    tier = os.path.basename(folder)
    return tier if tier in TIERS else None


def _stem(name: str) -> str:
    """``PurePath.stem`` of a file name."""
    dot = name.rfind(".")
    return name[:dot] if 0 < dot < len(name) - 1 else name


def _read(path: str) -> bytes:
    """A golden's bytes in three system calls: ``open()`` builds a buffered file object, half
    the cost of reading a small golden. Any failure goes through :func:`assay.io.read_bytes`,
    which fails the same way and raises its error."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return read_bytes(path, GoldenError)
    try:
        chunks = []
        while chunk := os.read(fd, 1 << 16):
            chunks.append(chunk)
    except OSError:  # a folder (EISDIR), an I/O error: read_bytes says which
        return read_bytes(path, GoldenError)
    finally:
        os.close(fd)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def iter_path(
    source: str, *, strict: bool = False, defaults: Defaults | None = None
) -> Iterator[Golden]:
    """The goldens held by the file at ``source`` (as errors name it; ``strict``: every unknown
    frontmatter key is an error; ``defaults``: its folder's, see
    :func:`assay.goldens._defaults.read_defaults`)."""
    folder, name = os.path.split(source)
    build = partial(
        build_goldens, folder_tier=_tier_of(folder, name), strict=strict, defaults=defaults
    )
    if name.endswith(_JSONL):  # streamed, one line at a time (sources are ``file:line``)
        for where, data in iter_jsonl_objects(Path(source), GoldenError):
            yield from build(data, source=where, default_id=None)
    elif name.endswith(_YAML):
        yield from _iter_yaml_list(Path(source), build)
    else:
        front_text, front, has_origin = parse_markdown(_read(source), source)
        try:
            goldens = build(
                front,
                source=source,
                default_id=_stem(name),
                has_origin=has_origin,
                yaml_text=front_text,
            )
        except GoldenError as exc:
            # The frontmatter starts on the file's second line.
            raise with_line(exc, front_text, line_offset=1) from None
        yield from goldens


def _iter_yaml_list(path: Path, build: Callable[..., list[Golden]]) -> Iterator[Golden]:
    """Goldens from a YAML file holding a list of mappings, each made by ``build``
    (:func:`build_goldens` with the file's tier and settings)."""
    text = read_text(path, GoldenError)
    data = yaml_load(text, str(path))
    if not isinstance(data, list):
        raise GoldenError("a YAML goldens file must hold a list of goldens", source=str(path))
    for index, item in enumerate(data):
        try:
            goldens = build(
                item,
                source=f"{path}[{index}]",
                default_id=None,
                yaml_text=text,
                yaml_item=index,
            )
        except GoldenError as exc:
            raise with_line(exc, text, item=index) from None
        yield from goldens


def unique(goldens: Iterable[Golden]) -> Iterator[Golden]:
    """Pass goldens through, failing on the first duplicate id (naming both sources)."""
    seen: dict[str, str] = {}
    for golden in goldens:
        first = seen.get(golden.id)
        if first is not None:
            raise GoldenError(
                f"duplicate golden id '{golden.id}' (also in {first})",
                source=golden.source,
                field="id",
            )
        seen[golden.id] = golden.source
        yield golden


def iter_goldens(root: Path | str, *, strict: bool = False) -> Iterator[Golden]:
    """Stream every golden under ``root`` in sorted file order, ids checked for duplicates,
    each with the defaults of ``root``'s ``_defaults.yaml`` (unless it opts out).

    Raises:
        GoldenError: as :func:`discover_paths`, or a bad defaults file (before any golden).
    """
    paths = discover_paths(Path(root))
    defaults = read_defaults(root)
    return unique(g for path in paths for g in iter_path(path, strict=strict, defaults=defaults))


def packaged_root() -> Path:
    """The folder of default goldens shipped inside the wheel."""
    from importlib import resources  # 4 ms to import; only a project's suite needs it

    return Path(str(resources.files("assay").joinpath("data", "goldens")))


def holds_goldens(root: Path | str | None) -> bool:
    """Whether ``root`` is or holds a golden file (no: a project with no goldens); it stops
    at the first one found."""
    if root is None:
        return False
    try:
        entries = list(os.scandir(root))
    except NotADirectoryError:
        return _is_golden_file(Path(root).name)
    except OSError:
        return False
    for entry in entries:
        if entry.name == TASK_FILE or (entry.is_file() and _is_golden_file(entry.name)):
            return True
        hidden = entry.name.startswith((".", "_"))
        if not hidden and entry.is_dir(follow_symlinks=False) and holds_goldens(entry.path):
            return True
    return False


def suite_name(name: str, root: Path, *, packaged: bool) -> str:
    """What a run without PATH loaded, as its record says: the project's goldens folder
    (``name``), ``NAME + packaged`` with ``--packaged``, or ``packaged`` when the project has
    none (a different suite each: a baseline golden missing from a run of another suite is no
    removal)."""
    if packaged:
        return f"{name} + packaged"
    return name if holds_goldens(root) else "packaged"


def load_suite(
    project_root: Path | None,
    tiers: Iterable[Tier] | None = None,
    *,
    strict: bool = False,
    own: Sequence[Golden] | None = None,
    packaged: bool = False,
) -> list[Golden]:
    """The project's own goldens; assay's packaged goldens and agent tasks only when asked for
    (``packaged``: added to the project's, which shadow them by id) or when the project has
    none at all (its folder is missing or holds no golden file). A prompt project never gets
    the packaged coding-agent tasks unasked.

    Args:
        project_root: the project's goldens folder (may not exist: then packaged only).
        tiers: only these tiers (all when None).
        strict: every unknown frontmatter key is an error (``strict = true`` in the config).
        own: the goldens of ``project_root`` when they are loaded already (by
            :mod:`assay.gate._load`), in :func:`iter_goldens` order.
        packaged: add the packaged goldens to the project's.
    """
    wanted = set(tiers) if tiers else set(TIERS)
    if own is None:
        own = []
        if project_root is not None and project_root.exists():
            own = list(iter_goldens(project_root, strict=strict))
    extra: list[Golden] = []
    if packaged or (not own and not holds_goldens(project_root)):
        ids = {g.id for g in own}
        extra = [g for g in iter_goldens(packaged_root()) if g.id not in ids]
    return [g for g in unique([*own, *extra]) if g.tier in wanted]
