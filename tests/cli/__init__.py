"""Tests of the ``assay`` command line (``assay.cli``), end to end."""
