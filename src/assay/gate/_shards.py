"""Shards: ``--shard I/N`` takes the goldens (or tasks) whose id hashes to ``I`` of ``N``.

The hash is SHA-256 of the id, so a golden's shard depends on its id and on ``N`` alone: not on
file order, not on which other goldens exist, and the same on every machine and Python (the
built-in ``hash`` of a string is salted per process). The N shards of a suite are disjoint and
together hold every golden; SHA-256 spreads ids evenly, so shards are balanced to within the
usual binomial wobble.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Protocol, TypeVar

_SPEC = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


class _HasId(Protocol):
    @property
    def id(self) -> str: ...


T = TypeVar("T", bound=_HasId)


@dataclass(frozen=True, slots=True)
class Shard:
    """Shard ``index`` (1-based) of ``count``."""

    index: int
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def holds(self, item_id: str) -> bool:
        digest = hashlib.sha256(item_id.encode("utf-8", "surrogatepass")).digest()
        return int.from_bytes(digest[:8], "big") % self.count == self.index - 1

    def select(self, items: Iterable[T]) -> Iterator[T]:
        return (item for item in items if self.holds(item.id))


def parse_shard(text: str) -> Shard:
    """``"2/3"`` → ``Shard(2, 3)``.

    Raises:
        ValueError: not ``I/N`` with 1 ≤ I ≤ N (the message says so).
    """
    match = _SPEC.match(text)
    if match is None:
        raise ValueError(f"{text!r} is not I/N (e.g. 1/3)")
    index, count = int(match.group(1)), int(match.group(2))
    if count < 1 or not 1 <= index <= count:
        raise ValueError(f"{text!r}: I must be between 1 and N, and N at least 1")
    return Shard(index, count)
