"""Golden loading: markdown + YAML frontmatter, JSONL, YAML lists; tiers; packaged defaults."""

from ._loader import discover, iter_file, iter_goldens, load_suite, packaged_root
from ._model import DEFAULT_THRESHOLD, TIERS, Golden, Tier, build_golden

__all__ = [
    "DEFAULT_THRESHOLD",
    "TIERS",
    "Golden",
    "Tier",
    "build_golden",
    "discover",
    "iter_file",
    "iter_goldens",
    "load_suite",
    "packaged_root",
]
