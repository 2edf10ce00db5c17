"""Normalise, shingle, commit, and scan journal activity against the commitment.

Texts are normalised (Unicode NFKC, casefold, every run of non-alphanumerics collapsed to one
space) and cut into k-word shingles (sliding window, k = 6 by default). The commitment holds the
keyed HMAC-SHA256 of every shingle and of every whole text shorter than k words that is at least
12 characters long: never the text.

Sealing has the plaintext ground truth at hand, so it matches activity in plaintext (fast: a set
lookup per window, guarded by a first-word filter) and records only the digests that matched.
Verifying has only digests: it re-derives them by HMAC-ing every window of the journal's text.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

DEFAULT_K: Final = 6
MIN_SHORT_CHARS: Final = 12
DIGEST_HEX: Final = 32  # 128-bit truncated HMAC: collision-free in practice, half the size
_SPLIT = re.compile(r"[\W_]+")

GROUND_TRUTH_SHINGLE: Final = "ground_truth_shingle"
GROUND_TRUTH_SHORT: Final = "ground_truth_short"
GROUND_TRUTH_PATH: Final = "ground_truth_path"
OUT_OF_SCOPE_PATH: Final = "out_of_scope_path"
OUT_OF_SCOPE_ENDPOINT: Final = "out_of_scope_endpoint"
PATH_CLASSES: Final = frozenset({GROUND_TRUTH_PATH, OUT_OF_SCOPE_PATH})


def words_of(text: str) -> list[str]:
    folded = unicodedata.normalize("NFKC", text).casefold()
    return [w for w in _SPLIT.split(folded) if w]


def digest(key: bytes, text: str) -> str:
    return hmac.new(key, text.encode("utf-8"), hashlib.sha256).hexdigest()[:DIGEST_HEX]


@dataclass(slots=True)
class Truth:
    """Plaintext ground truth, in memory only for the duration of a seal."""

    k: int
    shingles: dict[str, str]  # plaintext shingle -> digest
    short: dict[str, str]  # plaintext short text -> digest
    short_lengths: tuple[int, ...]
    sources: int
    # First words of the shingles / short texts: a cheap filter before building a window.
    shingle_firsts: frozenset[str] = frozenset()
    short_firsts: frozenset[str] = frozenset()

    def commitment(self) -> dict[str, Any]:
        shingles = sorted(set(self.shingles.values()))
        short = sorted(set(self.short.values()))
        return {
            "k": self.k,
            "min_short_chars": MIN_SHORT_CHARS,
            "shingles": shingles,
            "short": short,
            "short_lengths": list(self.short_lengths),
            "coverage": {
                "sources": self.sources,
                "shingles": len(shingles),
                "short_texts": len(short),
            },
        }


def build_truth(key: bytes, texts: Iterable[str], given: Iterable[str] = ()) -> Truth:
    """The ground truth's shingles and short texts, less those found in the ``given`` texts
    (what the agent is handed to read is no secret)."""
    k = DEFAULT_K
    shingles: dict[str, str] = {}
    short: dict[str, str] = {}
    sources = 0
    for text in texts:
        sources += 1
        words = words_of(text)
        if len(words) >= k:
            for i in range(len(words) - k + 1):
                plain = " ".join(words[i : i + k])
                if plain not in shingles:
                    shingles[plain] = digest(key, plain)
        else:
            plain = " ".join(words)
            if len(plain) >= MIN_SHORT_CHARS and plain not in short:
                short[plain] = digest(key, plain)
    tables = [(k, shingles), *((size, short) for size in {len(p.split(" ")) for p in short})]
    for text in given:
        words = words_of(text)
        for size, table in tables:
            if not table:  # nothing left to subtract at this size
                continue
            for i in range(len(words) - size + 1):
                table.pop(" ".join(words[i : i + size]), None)
    lengths = tuple(sorted({len(p.split(" ")) for p in short}))

    def firsts(table: dict[str, str]) -> frozenset[str]:
        return frozenset(p.split(" ", 1)[0] for p in table)

    return Truth(k, shingles, short, lengths, sources, firsts(shingles), firsts(short))


def match_plain(truth: Truth, text: str) -> set[str]:
    """Digests of the ground truth found in ``text`` (plaintext matching, at seal time)."""
    words = words_of(text)
    tables = [(truth.k, truth.shingles, truth.shingle_firsts)]
    tables += [(size, truth.short, truth.short_firsts) for size in truth.short_lengths]
    found: set[str] = set()
    for size, table, firsts in tables:
        for i in range(len(words) - size + 1):
            if words[i] in firsts:  # a cheap filter before building the window
                hit = table.get(" ".join(words[i : i + size]))
                if hit is not None:
                    found.add(hit)
    return found


def match_digests(key: bytes, commitment: Mapping[str, Any], text: str) -> set[str]:
    """Digests of the commitment found in ``text`` (digest matching, at verify time)."""
    words = words_of(text)
    shingles, short = set(commitment["shingles"]), set(commitment["short"])
    sizes = [(int(commitment["k"]), shingles)]
    sizes += [(size, short) for size in commitment.get("short_lengths", [])]
    found: set[str] = set()
    for size, committed in sizes:
        for i in range(len(words) - size + 1):
            d = digest(key, " ".join(words[i : i + size]))
            if d in committed:
                found.add(d)
    return found


def event_texts(event: Mapping[str, Any]) -> list[str]:
    return [event[f] for f in ("content", "command", "path") if isinstance(event.get(f), str)]


def inside(path: str, folder: str) -> bool:
    """``path`` is ``folder`` or lies under it (both absolute and normalised)."""
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def path_flags(event: Mapping[str, Any], scope: Mapping[str, Any]) -> list[str]:
    """Boundary classes of an event's path (none without one), resolved relative to the
    worktree, symlinks followed.

    Inside the goldens folder is ``ground_truth_path`` whatever else holds; else outside the
    worktree, outside every ``allow_paths`` entry (the system, the toolchain) and not one of
    the ``allow_listing`` folders (exactly: the folders on the way to what the sandbox mounts,
    which hold nothing else there) is ``out_of_scope_path``.
    """
    path = event.get("path")
    if not isinstance(path, str):
        return []
    worktree, goldens = scope["worktree"], scope["goldens"]
    resolved = os.path.realpath(os.path.join(worktree, path))
    if goldens is not None and inside(resolved, goldens):
        return [GROUND_TRUTH_PATH]
    if inside(resolved, worktree) or any(inside(resolved, a) for a in scope.get("allow_paths", [])):
        return []
    if resolved in scope.get("allow_listing", ()):
        return []
    return [OUT_OF_SCOPE_PATH]


def endpoint_flags(event: Mapping[str, Any], scope: Mapping[str, Any]) -> list[str]:
    """``out_of_scope_endpoint`` for an event's endpoint not in ``allow_endpoints``."""
    endpoint = event.get("endpoint")
    if not isinstance(endpoint, str):
        return []
    allowed = {a.strip().lower() for a in scope["allow_endpoints"]}
    return [] if endpoint.strip().lower() in allowed else [OUT_OF_SCOPE_ENDPOINT]


def matches_of(
    activity: Sequence[Mapping[str, Any]], commitment: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """The match list implied by an activity list: one entry per (event, class)."""
    shingles = set(commitment["shingles"])
    out: list[dict[str, Any]] = []
    for entry in activity:
        classes: set[str] = set(entry.get("flags", []))
        for d in entry.get("digests", []):
            classes.add(GROUND_TRUTH_SHINGLE if d in shingles else GROUND_TRUTH_SHORT)
        out.extend({"event": entry["index"], "class": c} for c in sorted(classes))
    return out


def evidence_where(
    event: Mapping[str, Any], cls: str, worktree: str, holds_truth: Callable[[str], bool]
) -> str:
    """Where one match was seen, for a reader of the record: the path a path class names (made
    absolute against the worktree, symlinks not followed: the path the agent named), the
    endpoint of an endpoint class, else (a content match) the event's kind.

    Never text the agent saw: a path or endpoint that itself holds ground truth (a file named
    after the answer) is named by the event's kind too. Verify re-derives it from the journal.
    """
    field = "path" if cls in PATH_CLASSES else "endpoint" if cls == OUT_OF_SCOPE_ENDPOINT else ""
    value = event.get(field)
    if not isinstance(value, str) or holds_truth(value):
        return str(event["kind"])
    return os.path.normpath(os.path.join(worktree, value)) if field == "path" else value
