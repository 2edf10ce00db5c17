"""Golden loading: markdown + YAML frontmatter, JSONL, YAML lists; tiers; packaged defaults."""

from assay.goldens._consistency import Inconsistency, SelfTestReport, self_test
from assay.goldens._loader import (
    TASK_FILE,
    discover,
    iter_file,
    iter_goldens,
    load_suite,
    packaged_root,
)
from assay.goldens._model import DEFAULT_THRESHOLD, Golden, build_golden
from assay.vocabulary import TIERS, Tier

__all__ = [
    "DEFAULT_THRESHOLD",
    "TASK_FILE",
    "TIERS",
    "Golden",
    "Inconsistency",
    "SelfTestReport",
    "Tier",
    "build_golden",
    "discover",
    "iter_file",
    "iter_goldens",
    "load_suite",
    "packaged_root",
    "self_test",
]
