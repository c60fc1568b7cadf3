"""Retries through a loopback proxy in front of the real gateway that fails on a script."""

from __future__ import annotations

import json
import threading
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, Iterator, List, Union

import pytest

from klaxon import Client, NetworkError, ServerError

# "forward", "drop", "lose" (forward, then drop the connection instead of answering), or {"status", "headers", "body"}
Action = Union[str, Dict[str, Any]]


class FlakyProxy:
    def __init__(self, upstream: str) -> None:
        self.upstream = upstream
        self.actions: List[Action] = []
        self.seen: List[Dict[str, Any]] = []
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def handle_any(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                proxy.seen.append({"method": self.command, "path": self.path, "headers": dict(self.headers), "body": body})
                action = proxy.actions.pop(0) if proxy.actions else "forward"
                if action == "drop":
                    self.close_connection = True
                    self.connection.close()
                    return
                if isinstance(action, dict):
                    payload = json.dumps(action.get("body", {})).encode()
                    self.send_response(action["status"])
                    for name, value in action.get("headers", {}).items():
                        self.send_header(name, value)
                    self.send_header("Content-Type", "application/problem+json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                    return
                headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection", "content-length")}
                request = urllib.request.Request(proxy.upstream + self.path, data=body or None, method=self.command, headers=headers)
                try:
                    response = urllib.request.urlopen(request, timeout=10)
                except urllib.error.HTTPError as error:
                    response = error
                payload = response.read()
                if action == "lose":
                    self.close_connection = True
                    self.connection.close()
                    return
                self.send_response(response.status if hasattr(response, "status") else response.code)
                for name, value in response.headers.items():
                    if name.lower() not in ("content-length", "transfer-encoding", "connection"):
                        self.send_header(name, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = do_PATCH = do_DELETE = handle_any

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture()
def proxy(gateway) -> Iterator[FlakyProxy]:
    flaky = FlakyProxy(gateway.url)
    yield flaky
    flaky.close()


UNAVAILABLE = {"status": 503, "headers": {"Retry-After": "1"}, "body": {"title": "Storage unavailable", "status": 503, "code": "storage_unavailable"}}
INTERNAL = {"status": 500, "body": {"title": "Internal error", "status": 500, "code": "internal_error"}}


def sends(proxy: FlakyProxy) -> List[Dict[str, Any]]:
    return [seen for seen in proxy.seen if seen["path"] == "/api/v1/notifications/send"]


def test_a_send_is_repeated_with_the_same_idempotency_key_and_pages_once(proxy: FlakyProxy, gateway, alice: str) -> None:
    proxy.actions += [UNAVAILABLE, "drop"]
    n = Client(proxy.url, gateway.admin_key).send(alice, "retried send", "critical")
    attempts = sends(proxy)
    assert len(attempts) == 3
    keys = {seen["headers"]["Idempotency-Key"] for seen in attempts}
    assert len(keys) == 1 and next(iter(keys)).startswith("klaxon-python-")
    assert len({seen["body"] for seen in attempts}) == 1
    _, page = gateway.call("GET", "/api/v1/notifications?limit=200")
    assert [item["id"] for item in page["items"] if item["message"] == "retried send"] == [n.id]


def test_a_lost_answer_is_replayed_on_retry(proxy: FlakyProxy, gateway, alice: str) -> None:
    client = Client(proxy.url, gateway.admin_key)
    first = client.send(alice, "answer lost", "high", idempotency_key="lost-1")
    proxy.actions += ["drop"]
    again = client.send(alice, "answer lost", "high", idempotency_key="lost-1")
    assert again.id == first.id and again.replayed


def test_gives_up_after_the_retries_with_the_last_error(proxy: FlakyProxy, gateway) -> None:
    proxy.actions += [INTERNAL, INTERNAL, INTERNAL]
    with pytest.raises(ServerError) as failure:
        Client(proxy.url, gateway.admin_key, retries=2).get("notif_00000000000000000000000000")
    assert failure.value.status == 500 and failure.value.code == "internal_error"
    assert len(proxy.seen) == 3


def test_honours_retry_after_on_429(proxy: FlakyProxy, gateway) -> None:
    proxy.actions += [{"status": 429, "headers": {"Retry-After": "1"}, "body": {"title": "Too many requests", "status": 429, "code": "rate_limited"}}]
    assert list(Client(proxy.url, gateway.admin_key).list_recipients()) is not None
    assert len(proxy.seen) == 2


def test_a_create_is_not_repeated_after_an_error_that_may_have_stored_it(proxy: FlakyProxy, gateway) -> None:
    proxy.actions += [INTERNAL]
    with pytest.raises(ServerError):
        Client(proxy.url, gateway.admin_key).create_recipient(name="Carol", email="carol@factory.lan")
    assert len(proxy.seen) == 1
    proxy.actions += [UNAVAILABLE]
    dave = Client(proxy.url, gateway.admin_key).create_recipient(name="Dave", email="dave@factory.lan")
    assert dave.name == "Dave" and len(proxy.seen) == 3


def test_an_unreachable_gateway_is_a_network_error(gateway) -> None:
    with pytest.raises(NetworkError) as failure:
        Client("http://127.0.0.1:39999", gateway.admin_key, retries=1).get("notif_x")
    assert failure.value.status is None and failure.value.refused
    assert gateway.admin_key not in str(failure.value)
