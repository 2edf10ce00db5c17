"""What the gate's loader hands on: the loaded suite, and what the loading processes computed.

Everything here is keyed by golden id, never by object identity: a golden may be rebuilt or
copied between the loader and the gate without its results or fingerprint going astray.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from assay.config import Config
    from assay.goldens import Golden
    from assay.models import RawOutputs
    from assay.results import Result

# The fingerprints the processes computed: golden id -> its fingerprint.
Prints = dict[str, str]
# What scoring a chunk of goldens gives: the outputs shape it assumed (per candidate or not),
# and per golden the result of each candidate (None for a golden of a tier not selected).
Scored = tuple[bool, list["tuple[Result, ...] | None"]]


@dataclass(frozen=True, slots=True)
class StaticScoring:
    """How workers may score: an outputs file with a deterministic tier 2 backend (one of
    :data:`DETERMINISTIC_BACKENDS`), no judge; results are handed only to a run of ``config``."""

    outputs: Path
    similarity: str
    config: Config


class Prescored:
    """Results the workers computed, for :class:`assay.gate._score.Scorer` to use as they are.

    They apply to one run: the config they were computed for, with the outputs
    :meth:`outputs_for` read (in the shape the selected golden ids give the file).
    """

    __slots__ = ("_given", "_per_candidate", "_raw", "_results", "config", "outputs", "similarity")

    def __init__(self, scoring: StaticScoring, raw: RawOutputs):
        self.outputs = scoring.outputs
        self.similarity = scoring.similarity
        self.config = scoring.config
        self._raw = raw
        # golden id -> (the outputs shape assumed, one result per candidate).
        self._results: dict[str, tuple[bool, tuple[Result, ...]]] = {}
        self._given: Any = None
        self._per_candidate: bool | None = None

    def file(self, goldens: Sequence[Golden], scored: Scored) -> None:
        """Keep the results a process computed for ``goldens`` (:data:`Scored`)."""
        shape, per_golden = scored
        for golden, results in zip(goldens, per_golden, strict=True):
            if results is not None:
                self._results[golden.id] = (shape, results)

    def outputs_for(
        self, path: Path, golden_ids: Collection[str]
    ) -> dict[str, dict[str, list[Any]]] | None:
        """The outputs of ``path`` for these goldens, as the gate holds them (``{candidate:
        {golden_id: [output]}}``), from the file as read before the workers started; None when
        ``path`` is not that file."""
        if path != self.outputs:
            return None
        self._per_candidate = self._raw.per_candidate(golden_ids)
        flat = self._raw.shaped(self._per_candidate)
        self._given = {c: {g: [o] for g, o in m.items()} for c, m in flat.items()}
        return self._given  # type: ignore[no-any-return]

    def lookup(
        self, outputs: dict[str, dict[str, list[Any]]], config: Config, similarity: str
    ) -> Callable[[Golden, int], Result | None] | None:
        """``(golden, candidate index) -> result`` for a scoring of ``outputs`` (the very
        object :meth:`outputs_for` returned) under ``config`` with ``similarity``; None when the
        results do not apply. The function gives None for a golden no worker scored for these
        outputs (then the caller scores it)."""
        if outputs is not self._given or config is not self.config or similarity != self.similarity:
            return None
        results, shape = self._results, self._per_candidate

        def find(golden: Golden, index: int) -> Result | None:
            found = results.get(golden.id)
            if found is None or found[0] != shape:
                return None
            return found[1][index]

        return find

    def all_of(self, goldens: Sequence[Golden], index: int) -> list[Result] | None:
        """Candidate ``index``'s result of every golden, as :meth:`lookup`'s function finds
        them one by one, or None when a worker scored not all of them for these outputs."""
        results = self._results
        try:
            found = [results[g.id] for g in goldens]
        except KeyError:
            return None
        shape = self._per_candidate
        if not all([f[0] == shape for f in found]):
            return None
        return [f[1][index] for f in found]


@dataclass(frozen=True, slots=True)
class LoadedSuite:
    """The goldens a run scores, in suite order, and what the processes that loaded them
    computed, keyed by golden id: the results against static outputs (None when no worker
    scored) and the fingerprints (None when not asked, or loaded in one process).
    """

    goldens: list[Golden]
    prescored: Prescored | None = None
    workers: int = 1
    fingerprints: Prints | None = None

    def keep(self, goldens: Iterable[Golden]) -> LoadedSuite:
        """A selection of these goldens (tiers, packaged goldens added) with the same results."""
        return replace(self, goldens=list(goldens))

    def fingerprints_of(self) -> dict[str, str] | None:
        """Golden id -> fingerprint (:func:`assay.gate.fingerprint`) of the goldens, from
        those the loading processes computed (the rest computed here); None when they computed
        none."""
        known = self.fingerprints
        if known is None:
            return None
        from assay.gate._baseline import fingerprint

        memo: dict[int, Any] = {}
        return {g.id: known.get(g.id) or fingerprint(g, memo) for g in self.goldens}
