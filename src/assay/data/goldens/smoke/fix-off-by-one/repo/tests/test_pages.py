import pytest

from src.pages import page_count, paginate

ITEMS = list(range(1, 11))  # 10 items, 1..10


def test_page_count_rounds_up():
    assert page_count(10, 3) == 4
    assert page_count(9, 3) == 3
    assert page_count(0, 3) == 0


def test_first_page_starts_with_the_first_item():
    # Bug report #212: the listing never shows the newest product.
    assert paginate(ITEMS, 1, 3) == [1, 2, 3]


def test_page_past_the_end_is_empty():
    assert paginate(ITEMS, 5, 3) == []


@pytest.mark.parametrize(("page", "size"), [(0, 3), (1, 0), (-1, 3)])
def test_rejects_bad_arguments(page, size):
    with pytest.raises(ValueError):
        paginate(ITEMS, page, size)
