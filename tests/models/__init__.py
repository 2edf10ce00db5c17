"""Tests of model calling (``assay.models``): providers, runner, cache, templates."""
