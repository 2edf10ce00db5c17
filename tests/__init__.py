"""assay's tests: one folder per stage of ``src/assay``, shared helpers in ``tests.helpers``."""
