"""HTTP with the retry rules every Klaxon client shares (docs/clients.md)."""

from __future__ import annotations

import json
import random
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
from email.utils import parsedate_to_datetime
from http.client import HTTPException
from typing import Any, Callable, Dict, Mapping, Optional, Sequence, Set

from ._failover import active_link, moves_on, next_gateway
from .errors import KlaxonError, NetworkError, ServerError, error_from_problem

#: Repeating cannot change the outcome: reads, sends with an Idempotency-Key, ack, resolve, merge patches.
IDEMPOTENT = "idempotent"
#: A repeat after an unknown outcome could create a duplicate: only retried when nothing was stored.
CREATE = "create"

_BASE_BACKOFF_SECONDS = 0.5
_MAX_BACKOFF_SECONDS = 8.0
# A gateway asking for a longer pause is overloaded or out of disk: report it rather than block the caller.
_MAX_RETRY_AFTER_SECONDS = 60.0


def backoff_seconds(retry: int, rand: Callable[[], float] = random.random) -> float:
    """Exponential backoff from 0.5 s, capped at 8 s, with ±20% jitter."""
    base = min(_MAX_BACKOFF_SECONDS, _BASE_BACKOFF_SECONDS * 2 ** (retry - 1))
    return base * (0.8 + rand() * 0.4)


def parse_retry_after(value: Optional[str]) -> Optional[float]:
    """A Retry-After header (delta seconds or an HTTP date) in seconds from now."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None


class Answer:
    """A 2xx answer: status, headers and the parsed JSON body (None when empty)."""

    def __init__(self, status: int, headers: Mapping[str, str], body: Any) -> None:
        self.status = status
        self.headers = headers
        self.body = body


class Transport:
    """Requests to one gateway, or to the boxes of a pair tried in order (``base_urls``)."""

    def __init__(
        self,
        base_urls: Sequence[str],
        api_key: str,
        timeout: float,
        retries: int,
        sleep: Callable[[float], None] = time.sleep,
        rand: Callable[[], float] = random.random,
        user_agent: str = "klaxon-python",
    ) -> None:
        self._gateways = [base_url.rstrip("/") + "/" for base_url in base_urls]
        # The box that answered last: each call starts there.
        self._current = 0
        self._api_key = api_key
        self._timeout = timeout
        self._retries = max(0, retries)
        self._sleep = sleep
        self._rand = rand
        self._user_agent = user_agent

    def request(
        self,
        method: str,
        path: str,
        *,
        query: Optional[Mapping[str, Optional[str]]] = None,
        body: Any = None,
        headers: Optional[Mapping[str, str]] = None,
        retry: str = IDEMPOTENT,
    ) -> Answer:
        attempts = 1 + self._retries
        attempt = 1
        while True:
            try:
                return self._pass(method, path, query, body, headers, retry == IDEMPOTENT)
            except KlaxonError as failure:
                if not _retryable(failure, retry) or attempt >= attempts:
                    raise
                if failure.retry_after is not None and failure.retry_after > _MAX_RETRY_AFTER_SECONDS:
                    raise
                self._sleep(max(backoff_seconds(attempt, self._rand), failure.retry_after or 0.0))
                attempt += 1

    def _pass(self, method: str, path: str, query: Optional[Mapping[str, Optional[str]]], body: Any, headers: Optional[Mapping[str, str]], idempotent: bool) -> Answer:
        """One attempt: from the box that answered last, moving on while a box cannot serve it
        (down, or the standby) with the same body and Idempotency-Key, so a send lands once."""
        tried: Set[int] = set()
        at = self._current
        while True:
            tried.add(at)
            try:
                answer = self._attempt(self._gateways[at], method, path, query, body, headers)
            except KlaxonError as failure:
                if not moves_on(failure, idempotent):
                    if not isinstance(failure, NetworkError):
                        self._current = at
                    raise
                following = next_gateway(self._gateways, at, failure.active, tried)
                if following is None:
                    raise
                at = following
                continue
            self._current = at
            return answer

    @staticmethod
    def _url(gateway: str, path: str, query: Optional[Mapping[str, Optional[str]]]) -> str:
        url = urllib.parse.urljoin(gateway, path.lstrip("/"))
        params = {name: value for name, value in (query or {}).items() if value not in (None, "")}
        return url + ("?" + urllib.parse.urlencode(params) if params else "")

    def _attempt(self, gateway: str, method: str, path: str, query: Optional[Mapping[str, Optional[str]]], body: Any, headers: Optional[Mapping[str, str]]) -> Answer:
        all_headers: Dict[str, str] = {
            "Accept": "application/json, application/problem+json",
            "User-Agent": self._user_agent,
            "X-API-Key": self._api_key,
        }
        data = None
        if body is not None:
            data = json.dumps(body).encode("utf-8")
            all_headers["Content-Type"] = "application/json"
        all_headers.update(headers or {})
        request = urllib.request.Request(self._url(gateway, path, query), data=data, method=method, headers=all_headers)
        try:
            with urllib.request.urlopen(request, timeout=self._timeout) as response:
                return Answer(response.status, response.headers, _parse(response.read()))
        except urllib.error.HTTPError as error:
            with error:
                raw = error.read()
            retry_after = parse_retry_after(error.headers.get("Retry-After"))
            raise error_from_problem(error.code, _parse(raw), error.reason, retry_after, active_link(error.headers.get_all("Link") or [])) from None
        except (urllib.error.URLError, socket.timeout, ConnectionError, HTTPException, OSError) as error:
            reason = getattr(error, "reason", error)
            raise NetworkError(f"cannot reach the gateway at {gateway}: {reason}", refused=isinstance(reason, ConnectionRefusedError)) from None


def _retryable(failure: KlaxonError, policy: str) -> bool:
    if isinstance(failure, NetworkError):
        # Connection refused: the request never arrived, so even a create is safe to repeat.
        return policy == IDEMPOTENT or failure.refused
    if failure.status in (429, 503) or failure.code == "idempotency_in_flight":
        return True
    return isinstance(failure, ServerError) and policy == IDEMPOTENT


def _parse(raw: bytes) -> Any:
    if not raw:
        return None
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return raw.decode("utf-8", "replace")
