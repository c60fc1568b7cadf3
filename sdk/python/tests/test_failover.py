"""A client given both boxes of a pair follows the active (docs/clients.md, "Two boxes"), against a
real active gateway and a real one standing by."""

from __future__ import annotations

from typing import Callable, Iterator, List

import pytest
from conftest import free_port
from test_retries import FlakyProxy

from klaxon import Client, NetworkError, ServerError


def landed(gateway, message: str) -> int:
    _, page = gateway.call("GET", "/api/v1/notifications?limit=200")
    return sum(1 for item in page["items"] if item["message"] == message)


def dead_url() -> str:
    return f"http://127.0.0.1:{free_port()}"


@pytest.fixture()
def proxy_to() -> Iterator[Callable[[str], FlakyProxy]]:
    """Starts flaky proxies in front of the given upstreams, to script and count what reaches them."""
    started: List[FlakyProxy] = []

    def start(upstream: str) -> FlakyProxy:
        started.append(FlakyProxy(upstream))
        return started[-1]

    yield start
    for flaky in started:
        flaky.close()


def test_a_send_to_the_standby_lands_once_on_the_active_where_later_calls_start(proxy_to, standby: str, gateway, alice: str) -> None:
    standby_proxy = proxy_to(standby)
    client = Client([standby_proxy.url, gateway.url], gateway.admin_key, retries=0)
    n = client.send(alice, "py pair: standby first", "high")
    assert not n.replayed and landed(gateway, "py pair: standby first") == 1
    client.get(n.id)
    assert len(standby_proxy.seen) == 1


def test_a_box_that_is_down_is_passed(gateway, alice: str) -> None:
    Client(f"{dead_url()}, {gateway.url}", gateway.admin_key, retries=0).send(alice, "py pair: first box down", "high")
    assert landed(gateway, "py pair: first box down") == 1


def test_a_retry_on_the_other_box_gets_the_first_answer(proxy_to, gateway, alice: str) -> None:
    # The first box stores the send and its answer is lost; the other box (in a pair, the standby
    # that took over the journal) gets the same Idempotency-Key and answers with the stored send.
    proxy = proxy_to(gateway.url)
    proxy.actions += ["lose"]
    n = Client([proxy.url, gateway.url], gateway.admin_key, retries=0).send(alice, "py pair: answer lost", "high")
    assert n.replayed and landed(gateway, "py pair: answer lost") == 1


def test_the_box_the_standby_names_is_tried_next(proxy_to, standby: str, gateway, alice: str) -> None:
    between = proxy_to(gateway.url)
    between.actions += ["drop"]
    Client([standby, between.url, gateway.url], gateway.admin_key, retries=0).send(alice, "py pair: follow the link", "high")
    assert between.seen == []


def test_a_link_to_a_box_not_configured_is_not_followed(standby: str, gateway, alice: str) -> None:
    with pytest.raises(NetworkError):
        Client([standby, dead_url()], gateway.admin_key, retries=0).send(alice, "py pair: unknown active", "high")
    with pytest.raises(ServerError) as failure:
        Client(standby, gateway.admin_key, retries=0).send(alice, "py pair: unknown active", "high")
    assert failure.value.code == "standby" and failure.value.active == gateway.url and failure.value.retry_after
    assert landed(gateway, "py pair: unknown active") == 0
