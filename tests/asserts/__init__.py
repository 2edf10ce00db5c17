"""Tests of the asserts (``assay.asserts``): ops, pointers, JSON Schema conformance."""
