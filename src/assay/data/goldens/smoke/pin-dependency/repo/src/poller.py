"""Poll status pages; report the pages whose state changed since the last poll."""

import json
import sys
from pathlib import Path

STATES = ("operational", "degraded", "outage")


def parse_status(body: str) -> str:
    """The state in a status page's JSON summary (``{"status": {"indicator": ...}}``)."""
    indicator = json.loads(body).get("status", {}).get("indicator", "")
    return {"none": "operational", "minor": "degraded", "major": "outage"}.get(indicator, "outage")


def changes(previous: dict[str, str], current: dict[str, str]) -> dict[str, tuple[str, str]]:
    """Each page whose state differs from the last poll: its (old, new) states."""
    return {
        page: (previous.get(page, "unknown"), state)
        for page, state in current.items()
        if previous.get(page) != state
    }


def poll(urls: list[str]) -> dict[str, str]:  # pragma: no cover - network
    import requests

    return {url: parse_status(requests.get(url, timeout=10).text) for url in urls}


if __name__ == "__main__":  # pragma: no cover
    pages = Path(sys.argv[1]).read_text(encoding="utf-8").split()
    for page, (old, new) in changes({}, poll(pages)).items():
        print(f"{page}: {old} -> {new}")
