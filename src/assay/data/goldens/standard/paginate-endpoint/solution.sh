#!/usr/bin/env bash
# Reference solution: limit (default 50, 1 to 200) and offset (>= 0) on GET /orders, applied
# after the status filter; anything else is a 400 naming the parameter.
set -euo pipefail
cat > src/api/orders.py <<'PY'
"""GET /orders."""

from src.db import OrderStore

DEFAULT_LIMIT = 50
MAX_LIMIT = 200


class BadRequest(ValueError):
    """A query parameter that cannot be used (answered with 400)."""


def _int_param(query: dict[str, list[str]], name: str, default: int, low: int, high: int | None) -> int:
    values = query.get(name)
    if not values:
        return default
    raw = values[-1].strip()
    bounds = f"between {low} and {high}" if high is not None else f">= {low}"
    if not raw.isdigit() or not (low <= int(raw) and (high is None or int(raw) <= high)):
        raise BadRequest(f"{name} must be an integer {bounds}, not {values[-1]!r}")
    return int(raw)


def list_orders(query: dict[str, list[str]], store: OrderStore) -> tuple[int, dict]:
    """The orders, newest first, optionally only those with ``status``: ``limit`` of them
    (default 50, at most 200) from ``offset`` (default 0)."""
    try:
        limit = _int_param(query, "limit", DEFAULT_LIMIT, 1, MAX_LIMIT)
        offset = _int_param(query, "offset", 0, 0, None)
    except BadRequest as exc:
        return 400, {"error": str(exc)}
    rows = store.orders()
    status = query.get("status", [""])[-1]
    if status:
        rows = [r for r in rows if r["status"] == status]
    return 200, {"orders": rows[offset : offset + limit]}
PY
cat >> tests/test_orders.py <<'PY'


def test_limit_defaults_to_50():
    status, body = handle("GET", "/orders", make_store(120))
    assert status == 200
    assert ids(body) == list(range(120, 70, -1))


def test_limit_up_to_200_and_offset_past_the_end():
    big = make_store(250)
    assert len(handle("GET", "/orders?limit=200", big)[1]["orders"]) == 200
    assert handle("GET", "/orders?offset=300", big) == (200, {"orders": []})


def test_offset_applies_after_the_status_filter(store):
    assert ids(handle("GET", "/orders?status=refunded&offset=1&limit=2", store)[1]) == [9, 6]


@pytest.mark.parametrize(
    "query", ["limit=201", "limit=0", "limit=-5", "limit=ten", "limit=", "offset=-1", "offset=1.5"]
)
def test_bad_limit_or_offset_is_400(store, query):
    status, body = handle("GET", f"/orders?{query}", store)
    assert status == 400
    assert query.split("=")[0] in body["error"]
PY
echo "GET /orders takes limit (default 50, max 200) and offset; bad values are 400s; tests added."
