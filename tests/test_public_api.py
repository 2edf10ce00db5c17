"""The public API: one sorted __all__, every name importable from the top-level package."""

from __future__ import annotations

import assay


def test_all_is_sorted_and_complete() -> None:
    assert assay.__all__ == sorted(assay.__all__)
    assert len(set(assay.__all__)) == len(assay.__all__)
    for name in assay.__all__:
        assert getattr(assay, name) is not None, name


def test_unknown_names_raise_attribute_error() -> None:
    try:
        assay.no_such_name  # noqa: B018 - the attribute access is the test
    except AttributeError as exc:
        assert "no_such_name" in str(exc)
    else:
        raise AssertionError("an unknown attribute must raise AttributeError")


def test_the_api_names_resolve_to_their_modules() -> None:
    from assay.comparison import evaluate_deterministic_scorer, evaluate_prompt_candidates
    from assay.gate import run_gate

    assert assay.evaluate_prompt_candidates is evaluate_prompt_candidates
    assert assay.evaluate_deterministic_scorer is evaluate_deterministic_scorer
    assert assay.run_gate is run_gate
