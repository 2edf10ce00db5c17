"""Tests of the prompt-candidate comparison API (``assay.comparison``)."""
