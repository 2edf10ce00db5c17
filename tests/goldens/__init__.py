"""Tests of golden loading (``assay.goldens``)."""
