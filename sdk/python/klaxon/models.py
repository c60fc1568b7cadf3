"""Typed views of the gateway's JSON (CONTRACT sections 2 and 4). Unknown fields are kept in ``raw``,
so a newer gateway's additions never break an older client."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Dict, List, Mapping, Optional


def parse_time(value: Optional[str]) -> Optional[datetime]:
    """An ISO 8601 UTC timestamp as an aware datetime (Python 3.9's fromisoformat lacks "Z")."""
    if not value:
        return None
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


@dataclass(frozen=True)
class Attempt:
    """One delivery attempt: a channel tried for one recipient at one escalation step."""

    channel: str
    recipient_uuid: str
    target: str
    step: int
    started_at: Optional[datetime]
    finished_at: Optional[datetime]
    outcome: str
    #: The channel's answer ("accepted by the SMTP server: 250 OK") or why the attempt did not reach the person.
    detail: Optional[str]
    #: Deprecated (read ``detail``): the same text only when the attempt did not reach the person; gone in 0.3.0.
    error: Optional[str]

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "Attempt":
        return cls(
            channel=data["channel"],
            recipient_uuid=data["recipient_uuid"],
            target=data.get("target", ""),
            step=data["step"],
            started_at=parse_time(data.get("started_at")),
            finished_at=parse_time(data.get("finished_at")),
            outcome=data["outcome"],
            detail=data.get("detail"),
            error=data.get("error"),
        )


@dataclass(frozen=True)
class EscalationState:
    step: int
    steps_total: int
    next_step_at: Optional[datetime]


@dataclass(frozen=True)
class Notification:
    """A notification in its long form: status, escalation, attempts and acknowledgement."""

    id: str
    status: str
    recipient_uuid: str
    message: str
    priority: str
    channels_planned: List[str]
    escalation_chain_id: str
    created_at: datetime
    updated_at: Optional[datetime]
    source: Optional[str]
    dedup_key: Optional[str]
    link: Optional[str]
    service: Optional[str]
    environment: Optional[str]
    occurrences: int
    acknowledged_at: Optional[datetime]
    acknowledged_by: Optional[str]
    acknowledged_via: Optional[str]
    acknowledged_note: Optional[str]
    resolved_at: Optional[datetime]
    escalation: EscalationState
    attempts: List[Attempt]
    links: Dict[str, str]
    #: True when the gateway replayed an earlier answer for the same Idempotency-Key.
    replayed: bool = False
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, data: Mapping[str, Any], replayed: bool = False) -> "Notification":
        escalation = data.get("escalation") or {}
        return cls(
            id=data["id"],
            status=data["status"],
            recipient_uuid=data["recipient_uuid"],
            message=data["message"],
            priority=data["priority"],
            channels_planned=list(data.get("channels_planned") or []),
            escalation_chain_id=data["escalation_chain_id"],
            created_at=parse_time(data["created_at"]),  # type: ignore[arg-type]
            updated_at=parse_time(data.get("updated_at")),
            source=data.get("source"),
            dedup_key=data.get("dedup_key"),
            link=data.get("link"),
            service=data.get("service"),
            environment=data.get("environment"),
            occurrences=data.get("occurrences", 1),
            acknowledged_at=parse_time(data.get("acknowledged_at")),
            acknowledged_by=data.get("acknowledged_by"),
            acknowledged_via=data.get("acknowledged_via"),
            acknowledged_note=data.get("acknowledged_note"),
            resolved_at=parse_time(data.get("resolved_at")),
            escalation=EscalationState(escalation.get("step", 0), escalation.get("steps_total", 0), parse_time(escalation.get("next_step_at"))),
            attempts=[Attempt.from_json(a) for a in data.get("attempts") or []],
            links=dict(data.get("links") or {}),
            replayed=replayed,
            raw=dict(data),
        )


@dataclass(frozen=True)
class ChannelAvailability:
    channel: str
    available: bool
    reason: Optional[str]


@dataclass(frozen=True)
class EscalationSettings:
    ack_timeout_seconds: int
    repeat: int


@dataclass(frozen=True)
class QuietHours:
    start: str
    end: str
    timezone: str
    allow_priorities: List[str]


@dataclass(frozen=True)
class RoutingRule:
    priorities: List[str]
    channels: List[str]


@dataclass(frozen=True)
class Recipient:
    uuid: str
    name: str
    telegram_id: Optional[str]
    phone: Optional[str]
    email: Optional[str]
    channel_order: List[str]
    escalation: EscalationSettings
    quiet_hours: Optional[QuietHours]
    routing_rules: List[RoutingRule]
    channels: List[ChannelAvailability]
    created_at: datetime
    updated_at: datetime
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "Recipient":
        quiet = data.get("quiet_hours")
        escalation = data.get("escalation") or {}
        return cls(
            uuid=data["uuid"],
            name=data["name"],
            telegram_id=data.get("telegram_id"),
            phone=data.get("phone"),
            email=data.get("email"),
            channel_order=list(data.get("channel_order") or []),
            escalation=EscalationSettings(escalation.get("ack_timeout_seconds", 120), escalation.get("repeat", 1)),
            quiet_hours=QuietHours(quiet["start"], quiet["end"], quiet["timezone"], list(quiet.get("allow_priorities") or ["critical"])) if quiet else None,
            routing_rules=[RoutingRule(list(r["priorities"]), list(r["channels"])) for r in data.get("routing_rules") or []],
            channels=[ChannelAvailability(c["channel"], bool(c["available"]), c.get("reason")) for c in data.get("channels") or []],
            created_at=parse_time(data["created_at"]),  # type: ignore[arg-type]
            updated_at=parse_time(data["updated_at"]),  # type: ignore[arg-type]
            raw=dict(data),
        )


@dataclass(frozen=True)
class Person:
    """A recipient named in an answer: who is on call."""

    uuid: str
    name: str


@dataclass(frozen=True)
class ShiftTarget:
    """The recipient or group a shift (or a gap's fallback) pages; ``kind`` is "recipient" or "group"."""

    uuid: str
    kind: str
    name: str

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "ShiftTarget":
        return cls(data["uuid"], data["kind"], data["name"])


def _people(items: Any) -> List[Person]:
    return [Person(item["uuid"], item["name"]) for item in items or []]


@dataclass(frozen=True)
class Shift:
    """A final shift of a schedule, after overrides; ``source`` is rotation, shift_pattern or override."""

    starts_at: datetime
    ends_at: datetime
    target: ShiftTarget
    recipients: List[Person]
    source: str
    layer: Optional[int]
    layer_name: Optional[str]
    shift_name: Optional[str]
    crew: Optional[str]
    override_id: Optional[str]

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "Shift":
        return cls(
            starts_at=parse_time(data["starts_at"]),  # type: ignore[arg-type]
            ends_at=parse_time(data["ends_at"]),  # type: ignore[arg-type]
            target=ShiftTarget.from_json(data["target"]),
            recipients=_people(data.get("recipients")),
            source=data["source"],
            layer=data.get("layer"),
            layer_name=data.get("layer_name"),
            shift_name=data.get("shift_name"),
            crew=data.get("crew"),
            override_id=data.get("override_id"),
        )


@dataclass(frozen=True)
class OnCall:
    """Who a schedule pages at ``at``: the shift's people, or in a gap (``shift`` None) the fallback's."""

    at: datetime
    recipients: List[Person]
    shift: Optional[Shift]
    fallback: Optional[ShiftTarget]
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "OnCall":
        return cls(
            at=parse_time(data["at"]),  # type: ignore[arg-type]
            recipients=_people(data.get("recipients")),
            shift=Shift.from_json(data["shift"]) if data.get("shift") else None,
            fallback=ShiftTarget.from_json(data["fallback"]) if data.get("fallback") else None,
            raw=dict(data),
        )


@dataclass(frozen=True)
class MaintenanceWindow:
    """A maintenance window: while ``status`` is "active", the alerts it covers are recorded as
    "suppressed" and nobody is paged. ``ends_at`` moves to the moment a window was ended early."""

    uuid: str
    starts_at: datetime
    ends_at: datetime
    reason: str
    targets: List[str]
    sources: List[str]
    integrations: List[str]
    heartbeats: List[str]
    status: str
    created_at: datetime
    created_by: Dict[str, Any]
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "MaintenanceWindow":
        return cls(
            uuid=data["uuid"],
            starts_at=parse_time(data["starts_at"]),  # type: ignore[arg-type]
            ends_at=parse_time(data["ends_at"]),  # type: ignore[arg-type]
            reason=data["reason"],
            targets=list(data.get("targets") or []),
            sources=list(data.get("sources") or []),
            integrations=list(data.get("integrations") or []),
            heartbeats=list(data.get("heartbeats") or []),
            status=data["status"],
            created_at=parse_time(data["created_at"]),  # type: ignore[arg-type]
            created_by=dict(data.get("created_by") or {}),
            raw=dict(data),
        )


@dataclass(frozen=True)
class PolicyLevel:
    """One level of an escalation policy: the recipient, group and schedule uuids it pages when it
    starts, and the minutes until the next level (None on the last level)."""

    targets: List[str]
    escalate_after_minutes: Optional[int] = None

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "PolicyLevel":
        return cls(targets=list(data["targets"]), escalate_after_minutes=data.get("escalate_after_minutes"))


@dataclass(frozen=True)
class EscalationPolicy:
    """An escalation policy: ordered levels, and how many more times the whole policy runs while
    nobody acknowledges. Its ``uuid`` is a send target like a recipient's."""

    uuid: str
    name: str
    repeat: int
    levels: List[PolicyLevel]
    created_at: datetime
    updated_at: datetime
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "EscalationPolicy":
        return cls(
            uuid=data["uuid"],
            name=data["name"],
            repeat=int(data["repeat"]),
            levels=[PolicyLevel.from_json(level) for level in data["levels"]],
            created_at=parse_time(data["created_at"]),  # type: ignore[arg-type]
            updated_at=parse_time(data["updated_at"]),  # type: ignore[arg-type]
            raw=dict(data),
        )
