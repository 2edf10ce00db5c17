"""GET /orders."""

from src.db import OrderStore


def list_orders(query: dict[str, list[str]], store: OrderStore) -> tuple[int, dict]:
    """The orders, newest first, optionally only those with ``status``."""
    rows = store.orders()
    status = query.get("status", [""])[-1]
    if status:
        rows = [r for r in rows if r["status"] == status]
    return 200, {"orders": rows}
