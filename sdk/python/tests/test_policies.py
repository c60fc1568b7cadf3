from __future__ import annotations

import pytest

from klaxon import Client, EscalationPolicy, InvalidRequestError, PolicyLevel


def test_a_policy_is_created_listed_and_is_a_send_target(client: Client, gateway, alice: str) -> None:
    status, lead = gateway.call("POST", "/api/v1/recipients", {"name": "Foreman Ines", "email": "ines@plant.lan"})
    assert status == 201
    policy = client.create_escalation_policy(
        "Press hall", [PolicyLevel([alice], escalate_after_minutes=10), PolicyLevel([lead["uuid"]])], repeat=1
    )
    assert isinstance(policy, EscalationPolicy)
    assert (policy.name, policy.repeat) == ("Press hall", 1)
    assert policy.levels == [PolicyLevel([alice], 10), PolicyLevel([lead["uuid"]], None)]
    assert policy.raw["uuid"] == policy.uuid
    assert policy.uuid in [each.uuid for each in client.list_escalation_policies(page_size=1)]
    sent = client.send(policy.uuid, "press 4 guard open", "high")
    assert sent.status in ("queued", "notifying")


def test_a_policy_naming_nothing_is_refused(client: Client) -> None:
    with pytest.raises(InvalidRequestError) as refused:
        client.create_escalation_policy("Nobody", [PolicyLevel(["0b5e9a34-7a53-4c5e-9a3b-2f4f8d5a1e11"])])
    assert refused.value.status == 422
