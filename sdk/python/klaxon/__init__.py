"""Klaxon client: send, read, acknowledge and resolve alerts, manage recipients, ask who is on call,
start and end maintenance windows, verify webhooks.

    from klaxon import Client
    klaxon = Client()  # KLAXON_URL and KLAXON_API_KEY from the environment
    n = klaxon.send("0f8c5a2e-...", "Press 7 hydraulic oil over 80 °C", "critical", source="plc-7")
"""

from .client import DEFAULT_URL, PRIORITIES, Client
from .errors import (
    AuthenticationError,
    ConflictError,
    FieldError,
    InvalidRequestError,
    KlaxonError,
    NetworkError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitedError,
    ServerError,
)
from .models import (
    Attempt,
    ChannelAvailability,
    EscalationPolicy,
    EscalationSettings,
    EscalationState,
    MaintenanceWindow,
    Notification,
    OnCall,
    Person,
    PolicyLevel,
    QuietHours,
    Recipient,
    RoutingRule,
    Shift,
    ShiftTarget,
)
from .webhooks import WebhookVerificationError, WebhookVerifier

__version__ = "0.1.0"

__all__ = [
    "Attempt",
    "AuthenticationError",
    "ChannelAvailability",
    "Client",
    "ConflictError",
    "DEFAULT_URL",
    "EscalationPolicy",
    "EscalationSettings",
    "EscalationState",
    "FieldError",
    "InvalidRequestError",
    "KlaxonError",
    "MaintenanceWindow",
    "NetworkError",
    "Notification",
    "NotFoundError",
    "OnCall",
    "Person",
    "PermissionDeniedError",
    "PolicyLevel",
    "PRIORITIES",
    "QuietHours",
    "RateLimitedError",
    "Recipient",
    "RoutingRule",
    "ServerError",
    "Shift",
    "ShiftTarget",
    "WebhookVerificationError",
    "WebhookVerifier",
]
