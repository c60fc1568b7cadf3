"""Verifying the gateway's signed webhooks (Standard Webhooks, CONTRACT section 7)."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import time
from typing import Any, Mapping, Optional, Union

_SECRET_PREFIX = "whsec_"
DEFAULT_TOLERANCE_SECONDS = 300


class WebhookVerificationError(Exception):
    """The delivery is not from the gateway, was altered, or is too old or too new to trust."""


class WebhookVerifier:
    """Checks ``webhook-signature`` (or its twin ``X-Service-Signature``) over
    ``"<webhook-id>.<webhook-timestamp>.<raw body>"`` with HMAC-SHA256 and the decoded ``whsec_``
    secret, and that the timestamp is within ``tolerance_seconds`` of the local clock.

    During a secret rotation a delivery carries two signatures; one matching is enough.
    """

    def __init__(self, secret: str, tolerance_seconds: int = DEFAULT_TOLERANCE_SECONDS) -> None:
        encoded = secret[len(_SECRET_PREFIX):] if secret.startswith(_SECRET_PREFIX) else secret
        try:
            self._key = base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError) as error:
            raise ValueError("the webhook secret is not whsec_ followed by base64") from error
        self._tolerance = tolerance_seconds

    def verify(self, payload: Union[bytes, str], headers: Mapping[str, str], *, now: Optional[float] = None) -> Any:
        """Returns the event (parsed JSON) when the delivery is genuine; raises WebhookVerificationError otherwise.

        Pass the raw body exactly as received: re-serialised JSON would not match the signature.
        """
        lowered = {name.lower(): value for name, value in headers.items()}
        message_id = lowered.get("webhook-id")
        timestamp = lowered.get("webhook-timestamp")
        signatures = lowered.get("webhook-signature") or lowered.get("x-service-signature")
        if not message_id or not timestamp or not signatures:
            raise WebhookVerificationError("missing webhook-id, webhook-timestamp or signature header")
        try:
            sent_at = int(timestamp)
        except ValueError:
            raise WebhookVerificationError("webhook-timestamp is not a number") from None
        clock = time.time() if now is None else now
        if sent_at < clock - self._tolerance:
            raise WebhookVerificationError("message timestamp too old")
        if sent_at > clock + self._tolerance:
            raise WebhookVerificationError("message timestamp too new")
        body = payload if isinstance(payload, bytes) else payload.encode("utf-8")
        signed = message_id.encode("utf-8") + b"." + timestamp.encode("utf-8") + b"." + body
        expected = base64.b64encode(hmac.new(self._key, signed, hashlib.sha256).digest()).decode("ascii")
        for candidate in signatures.split(" "):
            version, _, value = candidate.partition(",")
            if version == "v1" and hmac.compare_digest(value, expected):
                return json.loads(body.decode("utf-8"))
        raise WebhookVerificationError("no matching signature")
