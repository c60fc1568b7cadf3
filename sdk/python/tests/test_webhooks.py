"""The verifier against deliveries signed by the gateway's real webhook outbox."""

from __future__ import annotations

import base64
import json
import queue
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, Iterator, Tuple

import pytest

from klaxon import Client, WebhookVerificationError, WebhookVerifier

Delivery = Tuple[Dict[str, str], bytes]


@pytest.fixture(scope="module")
def delivery(gateway, alice: str) -> Iterator[Tuple[Delivery, str]]:
    """One real delivery from the gateway to a loopback receiver, and the subscription's secret."""
    received: "queue.Queue[Delivery]" = queue.Queue()

    class Receiver(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            received.put((dict(self.headers), body))
            self.send_response(204)
            self.end_headers()

    server = ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        status, subscription = gateway.call("POST", "/api/v1/webhooks", {"url": f"http://127.0.0.1:{server.server_address[1]}/hook", "events": ["*"]})
        assert status == 201, subscription
        Client(gateway.url, gateway.admin_key).send(alice, "signed delivery", "high")
        yield received.get(timeout=30), subscription["secret"]
        gateway.call("DELETE", f"/api/v1/webhooks/{subscription['id']}")
    finally:
        server.shutdown()
        server.server_close()


def test_accepts_a_delivery_signed_by_the_gateway(delivery: Tuple[Delivery, str]) -> None:
    (headers, body), secret = delivery
    event = WebhookVerifier(secret).verify(body, headers)
    assert event["id"].startswith("evt_")
    assert event["type"] in ("escalation.started", "notification.sent", "contact.failed", "escalation.step", "escalation.exhausted")
    assert event["data"]["notification"]["message"] == "signed delivery"


def test_accepts_the_contract_header_name_alone(delivery: Tuple[Delivery, str]) -> None:
    (headers, body), secret = delivery
    only_service = {name: value for name, value in headers.items() if name.lower() != "webhook-signature"}
    assert "X-Service-Signature" in only_service or "x-service-signature" in {n.lower() for n in only_service}
    assert WebhookVerifier(secret).verify(body.decode("utf-8"), only_service)["data"]["notification"]["message"] == "signed delivery"


def test_rejects_a_changed_body_a_wrong_secret_and_a_missing_header(delivery: Tuple[Delivery, str]) -> None:
    (headers, body), secret = delivery
    tampered = body.replace(b"signed delivery", b"signed deliverY")
    with pytest.raises(WebhookVerificationError):
        WebhookVerifier(secret).verify(tampered, headers)
    other = "whsec_" + base64.b64encode(b"0123456789abcdef0123456789abcdef").decode()
    with pytest.raises(WebhookVerificationError):
        WebhookVerifier(other).verify(body, headers)
    without_id = {name: value for name, value in headers.items() if name.lower() != "webhook-id"}
    with pytest.raises(WebhookVerificationError):
        WebhookVerifier(secret).verify(body, without_id)


def test_enforces_the_tolerance_window(delivery: Tuple[Delivery, str]) -> None:
    (headers, body), secret = delivery
    sent_at = int({n.lower(): v for n, v in headers.items()}["webhook-timestamp"])
    verifier = WebhookVerifier(secret)
    assert verifier.verify(body, headers, now=sent_at + 299)
    assert verifier.verify(body, headers, now=sent_at - 299)
    with pytest.raises(WebhookVerificationError, match="too old"):
        verifier.verify(body, headers, now=sent_at + 301)
    with pytest.raises(WebhookVerificationError, match="too new"):
        verifier.verify(body, headers, now=sent_at - 301)


def test_matches_the_standard_webhooks_test_vector() -> None:
    # The vector in PROTOCOLS.md section 6, checked there with the stock standardwebhooks library.
    secret = "whsec_MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="
    body = '{"type":"alert.acknowledged","alert_id":"a1","by":"alice"}'
    headers = {"webhook-id": "msg_2f1c0e7e", "webhook-timestamp": "1700000000", "webhook-signature": "v1,iZMcFRoiPvr+M7j0g4x82zI/6DnySY+DjiUzRM+aPHA="}
    assert WebhookVerifier(secret).verify(body, headers, now=1700000010) == json.loads(body)
    rotated = dict(headers, **{"webhook-signature": "v1,c29tZXRoaW5nIGVsc2U= " + headers["webhook-signature"]})
    assert WebhookVerifier(secret).verify(body, rotated, now=1700000010)["by"] == "alice"
