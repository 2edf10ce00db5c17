"""Tests of the report views (``assay.views``): Markdown, text, JUnit, HTML."""
