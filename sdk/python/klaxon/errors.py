"""Errors raised by the client: one class per kind of RFC 9457 problem the gateway answers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Type


@dataclass(frozen=True)
class FieldError:
    """One invalid field: a JSON Pointer into the request body (or ``/<name>`` for a query parameter)."""

    pointer: str
    detail: str


class KlaxonError(Exception):
    """A request the gateway refused, or could not be reached for, after the retries ran out.

    Carries the problem+json fields (``type``, ``title``, ``status``, ``detail``, ``instance``,
    ``code``, ``errors``); ``status`` is None when no answer arrived at all.
    """

    def __init__(
        self,
        title: str,
        *,
        status: Optional[int] = None,
        type: Optional[str] = None,
        detail: Optional[str] = None,
        instance: Optional[str] = None,
        code: Optional[str] = None,
        errors: Optional[List[FieldError]] = None,
        retry_after: Optional[float] = None,
        active: Optional[str] = None,
    ) -> None:
        self.title = title
        self.status = status
        self.type = type
        self.detail = detail
        self.instance = instance
        self.code = code
        self.errors: List[FieldError] = errors or []
        self.retry_after = retry_after
        #: The URL a standby's ``Link: <...>; rel="active"`` names as the active box, else None.
        self.active = active
        super().__init__(self._message())

    def _message(self) -> str:
        head = f"{self.status} {self.title}" if self.status else self.title
        text = f"{head}: {self.detail}" if self.detail else head
        for error in self.errors:
            text += f"\n  {error.pointer or '(body)'}: {error.detail}"
        return text


class InvalidRequestError(KlaxonError):
    """400, 413, 415 or 422: the request is invalid or names something unknown; nothing was stored."""


class AuthenticationError(KlaxonError):
    """401: the API key is missing, unknown or revoked."""


class PermissionDeniedError(KlaxonError):
    """403: the API key lacks the scope this call needs."""


class NotFoundError(KlaxonError):
    """404: no such notification, recipient or endpoint."""


class ConflictError(KlaxonError):
    """409: the current state forbids the change (e.g. acknowledging a resolved notification)."""


class RateLimitedError(KlaxonError):
    """429: too many requests for this key; ``retry_after`` says when to come back."""


class ServerError(KlaxonError):
    """5xx: the gateway failed or cannot commit (503 with ``retry_after``)."""


class NetworkError(KlaxonError):
    """No answer: the connection was refused, reset or timed out. ``status`` is None."""

    def __init__(self, message: str, *, refused: bool = False) -> None:
        super().__init__(message)
        #: True when the connection was refused: the request never reached the gateway.
        self.refused = refused


_BY_STATUS: Dict[int, Type[KlaxonError]] = {
    400: InvalidRequestError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    409: ConflictError,
    413: InvalidRequestError,
    415: InvalidRequestError,
    422: InvalidRequestError,
    429: RateLimitedError,
}


def error_from_problem(status: int, body: Any, reason: str, retry_after: Optional[float], active: Optional[str] = None) -> KlaxonError:
    """The exception for a non-2xx answer; a body that is not problem+json (a proxy's page) still gives one."""
    problem: Mapping[str, Any] = body if isinstance(body, dict) else {}
    cls = _BY_STATUS.get(status, ServerError if status >= 500 else KlaxonError)
    errors = [FieldError(str(e.get("pointer", "")), str(e.get("detail", ""))) for e in problem.get("errors") or [] if isinstance(e, dict)]
    return cls(
        str(problem.get("title") or reason or "HTTP error"),
        status=status,
        type=problem.get("type"),
        detail=problem.get("detail"),
        instance=problem.get("instance"),
        code=problem.get("code"),
        errors=errors,
        retry_after=retry_after,
        active=active,
    )
