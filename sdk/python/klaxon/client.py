"""The Klaxon API client."""

from __future__ import annotations

import dataclasses
import os
import urllib.parse
import uuid as uuid_module
from datetime import datetime
from typing import Any, Dict, Iterator, List, Optional, Sequence, Union

from ._failover import split_urls
from ._http import CREATE, IDEMPOTENT, Transport
from .models import EscalationPolicy, MaintenanceWindow, Notification, OnCall, PolicyLevel, Recipient

DEFAULT_URL = "http://127.0.0.1:8080"
PRIORITIES = ("critical", "high", "medium", "low", "info")


def _segment(value: str) -> str:
    """An id as one path segment, so "a/b" cannot address another resource."""
    return urllib.parse.quote(value, safe="")


def _jsonable(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {k: _jsonable(v) for k, v in dataclasses.asdict(value).items() if k != "raw"}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    return value


def _instant(value: datetime) -> str:
    """An aware datetime as the ISO 8601 instant the gateway wants (it refuses times without a zone)."""
    if value.tzinfo is None:
        raise ValueError("the time needs a zone, e.g. datetime.now(timezone.utc)")
    return value.isoformat()


class Client:
    """A client for one Klaxon gateway, or for the two boxes of a pair.

    ``url`` and ``api_key`` default to the ``KLAXON_URL`` and ``KLAXON_API_KEY`` environment
    variables (the URL then to http://127.0.0.1:8080). For a pair, ``url`` is a list of both boxes'
    URLs (or one string, or ``KLAXON_URL``, with the URLs separated by commas): a call moves on from
    a box that is down or answers as the standby, to the box the standby names when it is one of
    these, and the box that answered is where the next call starts. Failed calls are retried on network errors,
    429 and 5xx with backoff (``retries`` repeats); a send carries one Idempotency-Key reused by
    every repeat, so a retry never pages twice. Errors raise :class:`klaxon.KlaxonError` subclasses.
    """

    def __init__(self, url: Union[str, Sequence[str], None] = None, api_key: Optional[str] = None, *, timeout: float = 10.0, retries: int = 3) -> None:
        if url is None or isinstance(url, str):
            listed = split_urls(url or os.environ.get("KLAXON_URL") or DEFAULT_URL)
        else:
            listed = list(url)
        #: The configured gateways, in the order they are tried; ``url`` is the first.
        self.urls = listed or [DEFAULT_URL]
        self.url = self.urls[0]
        key = api_key or os.environ.get("KLAXON_API_KEY")
        if not key:
            raise ValueError("no API key: pass api_key= or set KLAXON_API_KEY")
        for gateway in self.urls:
            if not gateway.startswith(("http://", "https://")):
                raise ValueError(f"the gateway URL must start with http:// or https://, got {gateway!r}")
        self._http = Transport(self.urls, key, timeout, retries)

    def __repr__(self) -> str:
        # Never the key.
        return f"Client(url={self.url!r})" if len(self.urls) == 1 else f"Client(urls={self.urls!r})"

    # Notifications

    def send(
        self,
        recipient_uuid: str,
        message: str,
        priority: str,
        *,
        source: Optional[str] = None,
        dedup_key: Optional[str] = None,
        link: Optional[str] = None,
        service: Optional[str] = None,
        environment: Optional[str] = None,
        idempotency_key: Optional[str] = None,
    ) -> Notification:
        """Sends an alert to a recipient or group and returns the stored notification (status ``queued``).

        ``idempotency_key`` defaults to a new one per call; pass your own (e.g. derived from the event)
        to make repeated calls of your program safe too.
        """
        body: Dict[str, Any] = {"recipient_uuid": recipient_uuid, "message": message, "priority": priority}
        optional = {"source": source, "dedup_key": dedup_key, "link": link, "service": service, "environment": environment}
        body.update({name: value for name, value in optional.items() if value is not None})
        headers = {
            "Idempotency-Key": idempotency_key or f"klaxon-python-{uuid_module.uuid4()}",
            "Prefer": "return=representation",
        }
        answer = self._http.request("POST", "api/v1/notifications/send", body=body, headers=headers, retry=IDEMPOTENT)
        return Notification.from_json(answer.body, replayed=answer.headers.get("Idempotent-Replayed") == "true")

    def get(self, notification_id: str) -> Notification:
        return Notification.from_json(self._http.request("GET", f"api/v1/notifications/{_segment(notification_id)}").body)

    def ack(self, notification_id: str, *, by: Optional[str] = None, note: Optional[str] = None) -> Notification:
        """Acknowledges: stops the escalation. Acknowledging again returns the first acknowledgement."""
        body = {name: value for name, value in {"by": by, "note": note}.items() if value is not None}
        return Notification.from_json(self._http.request("POST", f"api/v1/notifications/{_segment(notification_id)}/ack", body=body).body)

    def resolve(self, notification_id: str) -> Notification:
        """Resolves: the problem is gone; stops the escalation."""
        return Notification.from_json(self._http.request("POST", f"api/v1/notifications/{_segment(notification_id)}/resolve").body)

    def list_notifications(
        self, *, status: Optional[str] = None, recipient_uuid: Optional[str] = None, priority: Optional[str] = None, page_size: Optional[int] = None
    ) -> Iterator[Notification]:
        """Every notification matching the filters, newest first, fetched page by page as you iterate."""
        filters = {"status": status, "recipient_uuid": recipient_uuid, "priority": priority}
        for item in self._pages("api/v1/notifications", filters, page_size):
            yield Notification.from_json(item)

    # Recipients

    def list_recipients(self, *, page_size: Optional[int] = None) -> Iterator[Recipient]:
        """Every recipient, in creation order, fetched page by page as you iterate."""
        for item in self._pages("api/v1/recipients", {}, page_size):
            yield Recipient.from_json(item)

    def get_recipient(self, uuid: str) -> Recipient:
        return Recipient.from_json(self._http.request("GET", f"api/v1/recipients/{_segment(uuid)}").body)

    def create_recipient(
        self,
        *,
        name: Optional[str] = None,
        phone: Optional[str] = None,
        email: Optional[str] = None,
        telegram_id: Optional[str] = None,
        channel_order: Optional[List[str]] = None,
        escalation: Optional[Dict[str, int]] = None,
        quiet_hours: Any = None,
        routing_rules: Optional[List[Any]] = None,
    ) -> Recipient:
        """Creates a recipient; at least one of ``phone``, ``email``, ``telegram_id`` is required.

        A create is not repeated after an error that may have stored it (only after connection
        refused, 429 or 503), so a retry cannot make two recipients.
        """
        fields = {
            "name": name, "phone": phone, "email": email, "telegram_id": telegram_id, "channel_order": channel_order,
            "escalation": escalation, "quiet_hours": quiet_hours, "routing_rules": routing_rules,
        }
        body = {k: _jsonable(v) for k, v in fields.items() if v is not None}
        return Recipient.from_json(self._http.request("POST", "api/v1/recipients", body=body, retry=CREATE).body)

    def update_recipient(self, uuid: str, **changes: Any) -> Recipient:
        """Changes only the fields given (JSON Merge Patch); a field given as None is cleared,
        e.g. ``update_recipient(uuid, quiet_hours=None)``."""
        if not changes:
            raise ValueError("nothing to change")
        headers = {"Content-Type": "application/merge-patch+json"}
        answer = self._http.request("PATCH", f"api/v1/recipients/{_segment(uuid)}", body=_jsonable(changes), headers=headers)
        return Recipient.from_json(answer.body)

    # Schedules

    def on_call(self, schedule_uuid: str, *, at: Optional[datetime] = None) -> OnCall:
        """Who the schedule pages now, or at ``at`` (an aware datetime, past or future)."""
        query = {"at": _instant(at)} if at is not None else None
        return OnCall.from_json(self._http.request("GET", f"api/v1/schedules/{_segment(schedule_uuid)}/on-call", query=query).body)

    # Maintenance windows

    def start_maintenance(
        self,
        *,
        ends_at: datetime,
        reason: str,
        starts_at: Optional[datetime] = None,
        targets: Optional[List[str]] = None,
        sources: Optional[List[str]] = None,
        integrations: Optional[List[str]] = None,
        heartbeats: Optional[List[str]] = None,
        idempotency_key: Optional[str] = None,
    ) -> MaintenanceWindow:
        """Starts a maintenance window now, or plans it from ``starts_at``: alerts to ``targets``
        (recipient, group or schedule uuids), from ``sources``, through ``integrations`` (ids) and
        for ``heartbeats`` (names) are recorded as suppressed until ``ends_at``. One list at least
        must name something. One Idempotency-Key serves every retry, so a retry never makes two."""
        lists = {"targets": targets, "sources": sources, "integrations": integrations, "heartbeats": heartbeats}
        body: Dict[str, Any] = {"ends_at": _instant(ends_at), "reason": reason}
        if starts_at is not None:
            body["starts_at"] = _instant(starts_at)
        body.update({name: list(value) for name, value in lists.items() if value})
        headers = {"Idempotency-Key": idempotency_key or f"klaxon-python-{uuid_module.uuid4()}"}
        return MaintenanceWindow.from_json(self._http.request("POST", "api/v1/maintenance", body=body, headers=headers, retry=IDEMPOTENT).body)

    def end_maintenance(self, uuid: str) -> MaintenanceWindow:
        """Ends a window now; what it held and is still firing pages at once. Ending an ended one raises ConflictError."""
        return MaintenanceWindow.from_json(self._http.request("POST", f"api/v1/maintenance/{_segment(uuid)}/end").body)

    def get_maintenance(self, uuid: str) -> MaintenanceWindow:
        return MaintenanceWindow.from_json(self._http.request("GET", f"api/v1/maintenance/{_segment(uuid)}").body)

    def list_maintenance(self, *, status: Optional[str] = None) -> List[MaintenanceWindow]:
        """The windows, latest start first; ``status`` is "upcoming", "active" or "ended"."""
        answer = self._http.request("GET", "api/v1/maintenance", query={"status": status})
        return [MaintenanceWindow.from_json(item) for item in answer.body["items"]]

    # Escalation policies

    def list_escalation_policies(self, *, page_size: Optional[int] = None) -> Iterator[EscalationPolicy]:
        """Every escalation policy, in creation order, fetched page by page as you iterate."""
        for item in self._pages("api/v1/escalation-policies", {}, page_size):
            yield EscalationPolicy.from_json(item)

    def create_escalation_policy(
        self, name: str, levels: Sequence[PolicyLevel], *, repeat: int = 0, idempotency_key: Optional[str] = None
    ) -> EscalationPolicy:
        """Creates an escalation policy: ``levels`` in order, each paging its targets (recipient, group
        or schedule uuids) until ``escalate_after_minutes`` start the next. A target that names
        nothing, or a policy, raises InvalidRequestError. One Idempotency-Key serves every retry."""
        body = {
            "name": name,
            "repeat": repeat,
            "levels": [{"targets": list(level.targets), "escalate_after_minutes": level.escalate_after_minutes} for level in levels],
        }
        headers = {"Idempotency-Key": idempotency_key or f"klaxon-python-{uuid_module.uuid4()}"}
        return EscalationPolicy.from_json(self._http.request("POST", "api/v1/escalation-policies", body=body, headers=headers, retry=IDEMPOTENT).body)

    def _pages(self, path: str, filters: Dict[str, Optional[str]], page_size: Optional[int]) -> Iterator[Dict[str, Any]]:
        cursor: Optional[str] = None
        while True:
            query = dict(filters, limit=str(page_size) if page_size else None, cursor=cursor)
            page = self._http.request("GET", path, query=query).body
            yield from page["items"]
            cursor = page.get("next_cursor")
            if not cursor:
                return
