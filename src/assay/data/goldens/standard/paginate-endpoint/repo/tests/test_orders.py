import pytest

from src.api.app import handle
from src.db import OrderStore


def make_store(n):
    return OrderStore.of(
        {"id": i, "created": f"2024-05-{1 + i // 10:02d}T{i % 10:02d}:00", "status": "paid" if i % 3 else "refunded"}
        for i in range(1, n + 1)
    )


@pytest.fixture
def store():
    return make_store(12)


def ids(body):
    return [order["id"] for order in body["orders"]]


def test_orders_newest_first(store):
    status, body = handle("GET", "/orders", store)
    assert status == 200
    assert ids(body) == list(range(12, 0, -1))


def test_orders_filter_by_status(store):
    status, body = handle("GET", "/orders?status=refunded", store)
    assert status == 200
    assert ids(body) == [12, 9, 6, 3]


def test_unknown_route_is_404(store):
    assert handle("POST", "/orders", store)[0] == 404


def test_limit_and_offset_select_a_window(store):
    status, body = handle("GET", "/orders?limit=3&offset=2", store)
    assert status == 200
    assert ids(body) == [10, 9, 8]
