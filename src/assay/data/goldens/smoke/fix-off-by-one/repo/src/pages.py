"""Pagination of listings: 1-based pages of a fixed size."""

from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")


def page_count(total: int, size: int) -> int:
    """How many pages ``total`` items fill, ``size`` a page (0 items: 0 pages)."""
    if size < 1:
        raise ValueError("size must be >= 1")
    return -(-total // size)


def paginate(items: Sequence[T], page: int, size: int) -> list[T]:
    """Page ``page`` (1-based) of ``items``: at most ``size`` items, [] past the last page."""
    if page < 1:
        raise ValueError("page must be >= 1")
    if size < 1:
        raise ValueError("size must be >= 1")
    start = (page - 1) * size + 1
    return list(items[start : start + size - 1])
