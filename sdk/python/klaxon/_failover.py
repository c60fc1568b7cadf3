"""Which box of a pair to try next (docs/clients.md, "Two boxes"; docs/high-availability.md)."""

from __future__ import annotations

from typing import Iterable, List, Optional, Set

from .errors import KlaxonError, NetworkError


def moves_on(failure: KlaxonError, idempotent: bool) -> bool:
    """Whether another box may not have this failure: a connection that was refused (nothing
    arrived) or lost on a request that is safe to repeat, and a standby's 503."""
    if isinstance(failure, NetworkError):
        return failure.refused or idempotent
    return failure.status == 503 and (failure.code == "standby" or failure.active is not None)


def next_gateway(gateways: List[str], at: int, named: Optional[str], tried: Set[int]) -> Optional[int]:
    """The box the standby named when it is a configured, untried one (a Link to any other host is
    not followed: the request carries the API key), else the next untried one in the configured
    order; None when every one was tried."""
    if named:
        for index, gateway in enumerate(gateways):
            if index not in tried and _same_gateway(gateway, named):
                return index
    for step in range(1, len(gateways)):
        candidate = (at + step) % len(gateways)
        if candidate not in tried:
            return candidate
    return None


def active_link(values: Iterable[str]) -> Optional[str]:
    """The target of a ``Link`` header with ``rel="active"`` (RFC 8288), None when there is none."""
    for value in values:
        for link in value.split(","):
            target, _, params = link.strip().partition(";")
            if not (target.startswith("<") and target.endswith(">")):
                continue
            for param in params.split(";"):
                name, _, rel = param.strip().partition("=")
                if name.lower() == "rel" and rel.strip('"').lower() == "active":
                    return target[1:-1]
    return None


def split_urls(listed: str) -> List[str]:
    """Gateway URLs separated by commas, as ``KLAXON_URL`` may hold them, without empty entries."""
    return [part.strip() for part in listed.split(",") if part.strip()]


def _same_gateway(configured: str, named: str) -> bool:
    """Base URLs as written, ignoring a trailing slash and case."""
    return configured.rstrip("/").lower() == named.rstrip("/").lower()
