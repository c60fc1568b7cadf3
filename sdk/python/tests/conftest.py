"""A real gateway for the tests: started from the repository with Node, as `npm start` does, on a
free loopback port with a temp data dir."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Dict, Iterator, Optional, Tuple

import pytest

from klaxon import Client

REPO = Path(__file__).resolve().parents[3]
START_TIMEOUT_SECONDS = 60


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Gateway:
    def __init__(self, url: str, admin_key: str, data_dir: str) -> None:
        self.url = url
        self.admin_key = admin_key
        self.data_dir = data_dir

    def call(self, method: str, path: str, body: Any = None, key: Optional[str] = None) -> Tuple[int, Any]:
        """A raw API call with the admin key, to set up and check what the client did."""
        data = json.dumps(body).encode() if body is not None else None
        headers = {"X-API-Key": key or self.admin_key}
        if data is not None:
            headers["Content-Type"] = "application/json"
        request = urllib.request.Request(self.url + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                raw = response.read()
                return response.status, json.loads(raw) if raw else None
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read() or b"null")


class Process:
    """A gateway process started from the repository with extra settings in its environment."""

    def __init__(self, **settings: str) -> None:
        self.data_dir = tempfile.mkdtemp(prefix="klaxon-pytest-")
        port = free_port()
        env = dict(os.environ, KLAXON_DATA_DIR=self.data_dir, KLAXON_PORT=str(port), KLAXON_HOST="127.0.0.1", KLAXON_LOG_LEVEL="warn", **settings)
        env.pop("KLAXON_CONFIG", None)
        self.log = open(Path(self.data_dir) / "gateway.log", "wb")
        self.process = subprocess.Popen(["node", "--import", "@swc-node/register/esm-register", "src/main.ts"], cwd=REPO, env=env, stdout=self.log, stderr=subprocess.STDOUT)
        self.url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + START_TIMEOUT_SECONDS
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"the gateway exited with {self.process.returncode}: {(Path(self.data_dir) / 'gateway.log').read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(self.url + "/healthz", timeout=1):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    self.process.kill()
                    raise RuntimeError("the gateway did not start in time")
                time.sleep(0.2)

    def stop(self) -> None:
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
        self.log.close()
        shutil.rmtree(self.data_dir, ignore_errors=True)


@pytest.fixture(scope="session")
def gateway() -> Iterator[Gateway]:
    started = Process()
    try:
        admin_key = (Path(started.data_dir) / "initial-admin-key").read_text().strip()
        yield Gateway(started.url, admin_key, started.data_dir)
    finally:
        started.stop()


@pytest.fixture(scope="session")
def standby(gateway: Gateway) -> Iterator[str]:
    """The URL of a second gateway standing by as the other box of ``gateway``'s pair
    (docs/high-availability.md): every API route answers 503 standby with a Link to ``gateway``.
    Its copy stays empty (its follower is /bin/true), so it never takes over."""
    started = Process(
        KLAXON_REPLICATION_ROLE="standby",
        KLAXON_REPLICATION_PEER=gateway.url,
        KLAXON_REPLICATION_LITESTREAM="/bin/true",
        KLAXON_REPLICATION_REPLICA="/nonexistent/replica",
        KLAXON_REPLICATION_INCOMING="/nonexistent/incoming",
    )
    try:
        yield started.url
    finally:
        started.stop()


@pytest.fixture()
def client(gateway: Gateway) -> Client:
    return Client(gateway.url, gateway.admin_key)


@pytest.fixture(scope="session")
def alice(gateway: Gateway) -> str:
    status, body = gateway.call("POST", "/api/v1/recipients", {"name": "Alice", "phone": "+4915112345678", "email": "alice@example.com"})
    assert status == 201, body
    return body["uuid"]


def make_key(gateway: Gateway, scopes: list) -> Dict[str, Any]:
    status, body = gateway.call("POST", "/api/v1/keys", {"name": "pytest " + ",".join(scopes), "scopes": scopes})
    assert status == 201, body
    return body
