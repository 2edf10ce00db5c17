from src.poller import changes, parse_status


def test_parse_status_maps_indicators():
    assert parse_status('{"status": {"indicator": "none"}}') == "operational"
    assert parse_status('{"status": {"indicator": "minor"}}') == "degraded"
    assert parse_status('{"status": {}}') == "outage"


def test_changes_reports_only_changed_pages():
    previous = {"a": "operational", "b": "degraded"}
    current = {"a": "operational", "b": "outage", "c": "operational"}
    assert changes(previous, current) == {
        "b": ("degraded", "outage"),
        "c": ("unknown", "operational"),
    }
