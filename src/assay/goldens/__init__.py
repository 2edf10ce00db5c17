"""Golden loading: markdown + YAML frontmatter, JSONL, YAML lists; tiers; the packaged goldens."""

from assay.goldens._consistency import (
    Inconsistency,
    SelfTestReport,
    check_python_files,
    self_test,
)
from assay.goldens._defaults import read_defaults
from assay.goldens._loader import (
    TASK_FILE,
    discover_paths,
    folder_tier,
    holds_goldens,
    iter_goldens,
    iter_path,
    load_suite,
    packaged_root,
    suite_name,
    unique,
)
from assay.goldens._model import DEFAULT_THRESHOLD, Defaults, Golden, build_goldens
from assay.vocabulary import TIERS, Tier

__all__ = [
    "DEFAULT_THRESHOLD",
    "TASK_FILE",
    "TIERS",
    "Defaults",
    "Golden",
    "Inconsistency",
    "SelfTestReport",
    "Tier",
    "build_goldens",
    "check_python_files",
    "discover_paths",
    "folder_tier",
    "holds_goldens",
    "iter_goldens",
    "iter_path",
    "load_suite",
    "packaged_root",
    "read_defaults",
    "self_test",
    "suite_name",
    "unique",
]
