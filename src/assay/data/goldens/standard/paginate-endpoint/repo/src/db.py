"""The order store (in memory here; PostgreSQL in production, same interface)."""

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any


@dataclass
class OrderStore:
    rows: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def of(cls, rows: Iterable[dict[str, Any]]) -> "OrderStore":
        return cls([dict(r) for r in rows])

    def orders(self) -> list[dict[str, Any]]:
        """Every order, newest first (by ``created``, then by ``id``)."""
        return sorted(self.rows, key=lambda r: (r["created"], r["id"]), reverse=True)
