"""Tests of the agent benchmark (``assay.agent``): telemetry, scoring, taxonomy."""
