import pytest

from src.text import slugify, truncate_words


def test_slugify_joins_words_with_dashes():
    assert slugify("Hello, World!") == "hello-world"


def test_slugify_folds_accents():
    assert slugify("Crème Brûlée") == "creme-brulee"


def test_slugify_collapses_separators():
    assert slugify("  a -- b__c  ") == "a-b-c"


def test_truncate_words_cuts_with_ellipsis():
    assert truncate_words("one two three four", 2) == "one two…"


def test_truncate_words_keeps_short_text():
    assert truncate_words("one two", 5) == "one two"


def test_truncate_words_rejects_negative_n():
    with pytest.raises(ValueError):
        truncate_words("x", -1)
