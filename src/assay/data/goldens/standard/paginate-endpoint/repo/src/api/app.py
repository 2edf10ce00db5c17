"""Routing: (method, path) to a handler taking the parsed query and the store."""

from urllib.parse import parse_qs, urlsplit

from src.api import orders
from src.db import OrderStore

ROUTES = {("GET", "/orders"): orders.list_orders}


def handle(method: str, target: str, store: OrderStore) -> tuple[int, dict]:
    """The (status, body) of one request; ``target`` is the path with its query string."""
    url = urlsplit(target)
    route = ROUTES.get((method, url.path))
    if route is None:
        return 404, {"error": f"no route for {method} {url.path}"}
    return route(parse_qs(url.query, keep_blank_values=True), store)
