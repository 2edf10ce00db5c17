"""``-k`` / ``--filter``: only the goldens (or agent tasks) whose id matches one of the patterns.

A pattern is an id (``capitals#2``) or a shell-style glob over ids (``sql-*``, ``*#1``), case
sensitive as ids are. A pattern that matches nothing is an error, never an empty selection: a
typo in CI must not turn into a run of the other goldens, or of none.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from fnmatch import fnmatchcase

from assay.errors import GoldenError
from assay.goldens import Golden


@dataclass(frozen=True, slots=True)
class IdFilter:
    """The patterns of ``--filter``, in the order given."""

    patterns: tuple[str, ...]

    def __post_init__(self) -> None:
        for pattern in self.patterns:
            if not pattern.strip():
                raise GoldenError("--filter '': an empty pattern matches no golden id")

    def holds(self, golden_id: str) -> bool:
        """Whether ``golden_id`` is selected: equal to a pattern, or matched by its glob."""
        return any(golden_id == p or fnmatchcase(golden_id, p) for p in self.patterns)

    def select(self, goldens: Iterable[Golden]) -> list[Golden]:
        """The goldens selected, in their order.

        Raises:
            GoldenError: a pattern matches none of ``goldens`` (naming the pattern).
        """
        kept = [g for g in goldens if self.holds(g.id)]
        unused = [
            p for p in self.patterns if not any(g.id == p or fnmatchcase(g.id, p) for g in kept)
        ]
        if unused:
            names = ", ".join(repr(p) for p in unused)
            raise GoldenError(
                f"--filter {names}: no golden id matches (give an id, or a glob such as "
                "'sql-*'; the ids are in the report)"
            )
        return kept

    def __str__(self) -> str:
        return ",".join(self.patterns)


def id_filter(patterns: Iterable[str]) -> IdFilter | None:
    """The filter of these patterns; None when there are none (everything is selected).

    Raises:
        GoldenError: an empty pattern.
    """
    given = tuple(patterns)
    return IdFilter(given) if given else None
