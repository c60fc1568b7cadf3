from __future__ import annotations

from datetime import datetime, timezone

import pytest

from klaxon import (
    AuthenticationError,
    Client,
    ConflictError,
    InvalidRequestError,
    KlaxonError,
    Notification,
    NotFoundError,
    PermissionDeniedError,
    QuietHours,
    Recipient,
)

from conftest import make_key


def test_send_returns_a_typed_notification(client: Client, gateway, alice: str) -> None:
    n = client.send(alice, "Press 7 hydraulic oil over 80 °C", "critical", source="plc-7", service="press", link="https://grafana.lan/d/7")
    assert isinstance(n, Notification)
    assert n.id.startswith("notif_")
    assert n.status == "queued"
    assert (n.recipient_uuid, n.message, n.priority, n.source, n.service, n.link) == (alice, "Press 7 hydraulic oil over 80 °C", "critical", "plc-7", "press", "https://grafana.lan/d/7")
    assert n.escalation_chain_id.startswith("esc_")
    assert n.created_at.tzinfo is not None and abs((datetime.now(timezone.utc) - n.created_at).total_seconds()) < 300
    assert n.links["self"] == f"/api/v1/notifications/{n.id}"
    assert n.replayed is False
    status, stored = gateway.call("GET", f"/api/v1/notifications/{n.id}")
    assert status == 200 and stored["message"] == n.message


def test_get_ack_and_resolve(client: Client, alice: str) -> None:
    sent = client.send(alice, "compressor 2 tripped", "high")
    read = client.get(sent.id)
    assert read.id == sent.id and read.message == "compressor 2 tripped"
    assert read.escalation.steps_total >= 0

    acked = client.ack(sent.id, by="maria", note="valve closed")
    assert (acked.status, acked.acknowledged_by, acked.acknowledged_note, acked.acknowledged_via) == ("acknowledged", "maria", "valve closed", "api")
    assert isinstance(acked.acknowledged_at, datetime)
    again = client.ack(sent.id, by="someone else")
    assert again.acknowledged_by == "maria"

    resolved = client.resolve(sent.id)
    assert resolved.status == "resolved" and isinstance(resolved.resolved_at, datetime)
    with pytest.raises(ConflictError) as conflict:
        client.ack(sent.id)
    assert conflict.value.status == 409


def test_the_same_idempotency_key_is_replayed_not_sent_twice(client: Client, gateway, alice: str) -> None:
    first = client.send(alice, "nightly backup failed", "critical", idempotency_key="backup-2026-11-22")
    again = client.send(alice, "nightly backup failed", "critical", idempotency_key="backup-2026-11-22")
    assert again.id == first.id
    assert again.replayed is True
    _, page = gateway.call("GET", "/api/v1/notifications?limit=200")
    assert [n["id"] for n in page["items"] if n["message"] == "nightly backup failed"] == [first.id]


def test_dedup_key_and_environment_are_sent(client: Client, alice: str) -> None:
    # Whether a dedup'd send merges depends on the chain being open; this gateway has no channels,
    # so chains end at once: the gateway's own tests cover merging, this checks the field arrives.
    n = client.send(alice, "disk 91% full", "medium", dedup_key="nas-1-disk", environment="production")
    assert client.get(n.id).dedup_key == "nas-1-disk"
    assert n.environment == "production"


def test_errors_carry_the_problem_fields(client: Client, alice: str) -> None:
    with pytest.raises(InvalidRequestError) as invalid:
        client.send(alice, "x", "urgent")
    problem = invalid.value
    assert problem.status == 400 and problem.code == "invalid_request"
    assert problem.type and problem.title and problem.instance == "/api/v1/notifications/send"
    assert any(error.pointer == "/priority" for error in problem.errors)

    with pytest.raises(InvalidRequestError) as unknown:
        client.send("00000000-0000-4000-8000-000000000000", "nobody", "high")
    assert unknown.value.status == 422 and unknown.value.errors[0].pointer == "/recipient_uuid"

    with pytest.raises(NotFoundError) as missing:
        client.get("notif_00000000000000000000000000")
    assert missing.value.code == "not_found" and isinstance(missing.value, KlaxonError)


def test_authentication_and_permission_errors(gateway, alice: str) -> None:
    wrong = Client(gateway.url, "klx_abcdefgh_0123456789abcdef0123456789abcdef")
    with pytest.raises(AuthenticationError) as unauthenticated:
        wrong.get("notif_00000000000000000000000000")
    assert unauthenticated.value.status == 401
    assert "0123456789abcdef0123456789abcdef" not in str(unauthenticated.value)

    sender = Client(gateway.url, make_key(gateway, ["notifications:send"])["key"])
    sender.send(alice, "from a send-only key", "low")
    with pytest.raises(PermissionDeniedError):
        list(sender.list_recipients())


def test_reads_url_and_key_from_the_environment(gateway, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KLAXON_URL", gateway.url)
    monkeypatch.setenv("KLAXON_API_KEY", gateway.admin_key)
    from_env = Client()
    assert from_env.url == gateway.url
    assert gateway.admin_key not in repr(from_env)
    assert isinstance(next(from_env.list_recipients()), Recipient)
    monkeypatch.delenv("KLAXON_API_KEY")
    with pytest.raises(ValueError):
        Client()


def test_create_update_and_list_recipients_across_pages(client: Client) -> None:
    created = [client.create_recipient(name=f"Shift {i}", email=f"shift{i}@factory.lan") for i in range(3)]
    bob = client.create_recipient(
        name="Bob", phone="+4915199999999", channel_order=["voice_call", "sms"], escalation={"ack_timeout_seconds": 60, "repeat": 2},
        quiet_hours=QuietHours("22:00", "06:00", "Europe/Berlin", ["critical", "high"]),
        routing_rules=[{"priorities": ["low", "info"], "channels": ["sms"]}],
    )
    assert (bob.name, bob.phone, bob.channel_order) == ("Bob", "+4915199999999", ["voice_call", "sms"])
    assert (bob.escalation.ack_timeout_seconds, bob.escalation.repeat) == (60, 2)
    assert bob.quiet_hours == QuietHours("22:00", "06:00", "Europe/Berlin", ["critical", "high"])
    assert bob.routing_rules[0].channels == ["sms"]
    assert {c.channel for c in bob.channels} >= {"voice_call", "sms", "email", "telegram_voice"}

    updated = client.update_recipient(bob.uuid, name="Bob B.", escalation={"repeat": 0})
    assert (updated.name, updated.phone, updated.escalation.repeat, updated.escalation.ack_timeout_seconds) == ("Bob B.", "+4915199999999", 0, 60)
    cleared = client.update_recipient(bob.uuid, quiet_hours=None)
    assert cleared.quiet_hours is None
    assert client.get_recipient(bob.uuid).name == "Bob B."

    listed = [r.uuid for r in client.list_recipients(page_size=2)]
    assert len(listed) == len(set(listed))
    assert set(listed) >= {r.uuid for r in created} | {bob.uuid}

    with pytest.raises(InvalidRequestError) as invalid:
        client.create_recipient(name="Nobody")
    assert invalid.value.status == 400


def test_list_notifications_filters(client: Client, alice: str) -> None:
    sent = client.send(alice, "only info", "info")
    assert sent.id in [n.id for n in client.list_notifications(priority="info", page_size=1)]
    assert all(n.priority == "info" for n in client.list_notifications(priority="info"))
