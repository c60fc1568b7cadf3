from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from klaxon import Client, ConflictError, InvalidRequestError, MaintenanceWindow


def test_a_window_holds_alerts_until_it_is_ended(client: Client, gateway, alice: str) -> None:
    ends = (datetime.now(timezone.utc) + timedelta(hours=2)).replace(microsecond=0)
    window = client.start_maintenance(ends_at=ends, reason="press 7 relined", targets=[alice])
    assert isinstance(window, MaintenanceWindow)
    assert (window.status, window.ends_at, window.reason, window.targets, window.sources) == ("active", ends, "press 7 relined", [alice], [])
    assert window.created_by["type"] and window.raw["uuid"] == window.uuid

    held = client.send(alice, "press 7 pressure low", "high")
    assert held.status == "suppressed"
    assert [w.uuid for w in client.list_maintenance(status="active")] == [window.uuid]

    ended = client.end_maintenance(window.uuid)
    assert ended.status == "ended" and ended.ends_at < ends
    assert client.get_maintenance(window.uuid).status == "ended"
    with pytest.raises(ConflictError):
        client.end_maintenance(window.uuid)
    assert client.send(alice, "press 7 pressure low again", "high").status != "suppressed"


def test_a_planned_window_is_upcoming_and_one_naming_nothing_is_refused(client: Client) -> None:
    starts = (datetime.now(timezone.utc) + timedelta(days=1)).replace(microsecond=0)
    later = client.start_maintenance(starts_at=starts, ends_at=starts + timedelta(hours=4), reason="annual shutdown", sources=["line-3"])
    assert (later.status, later.starts_at) == ("upcoming", starts)
    assert later.uuid in [w.uuid for w in client.list_maintenance(status="upcoming")]
    with pytest.raises(InvalidRequestError):
        client.start_maintenance(ends_at=starts, reason="nothing named")
    with pytest.raises(ValueError):
        client.start_maintenance(ends_at=datetime(2026, 11, 26, 8, 0), reason="no zone", sources=["x"])
