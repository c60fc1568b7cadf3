from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from klaxon import Client, NotFoundError, OnCall


@pytest.fixture(scope="module")
def press_line(gateway, alice: str):
    """A daily rotation of Alice that began 36 hours ago, Bob as the fallback."""
    status, bob = gateway.call("POST", "/api/v1/recipients", {"name": "Bob", "email": "bob@plant.lan"})
    assert status == 201, bob
    starts = (datetime.now(timezone.utc) - timedelta(hours=36)).replace(minute=0, second=0, microsecond=0)
    status, schedule = gateway.call(
        "POST",
        "/api/v1/schedules",
        {
            "name": "Press line",
            "timezone": "Europe/Berlin",
            "layers": [{"type": "rotation", "name": "Days", "members": [alice], "shift_length_days": 1, "starts_at": starts.isoformat()}],
            "fallback": bob["uuid"],
        },
    )
    assert status == 201, schedule
    return schedule["uuid"], bob["uuid"], starts


def test_on_call_now_names_the_shift(client: Client, press_line, alice: str) -> None:
    schedule, _, _ = press_line
    now = client.on_call(schedule)
    assert isinstance(now, OnCall)
    assert [person.uuid for person in now.recipients] == [alice]
    assert now.fallback is None and now.shift is not None
    assert (now.shift.source, now.shift.layer, now.shift.layer_name, now.shift.target.kind) == ("rotation", 0, "Days", "recipient")
    assert now.shift.starts_at <= datetime.now(timezone.utc) < now.shift.ends_at
    assert now.raw["shift"]["target"]["uuid"] == alice


def test_on_call_at_an_instant_in_a_gap_names_the_fallback(client: Client, press_line) -> None:
    schedule, bob, starts = press_line
    before = starts - timedelta(hours=1)
    gap = client.on_call(schedule, at=before)
    assert gap.at == before
    assert gap.shift is None
    assert gap.fallback is not None and gap.fallback.uuid == bob
    assert [person.name for person in gap.recipients] == ["Bob"]


def test_on_call_refuses_a_time_without_a_zone_and_an_unknown_schedule(client: Client, press_line) -> None:
    schedule, _, _ = press_line
    with pytest.raises(ValueError):
        client.on_call(schedule, at=datetime(2026, 11, 26, 8, 0))
    with pytest.raises(NotFoundError):
        client.on_call("5b0b5c53-0000-4000-8000-000000000000")
