"""Tests of clean-run attestation (``assay.attest``): journal, scan, seal, verify."""
