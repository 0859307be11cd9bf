"""One in-process gateway with `auth.mode: local` for the DeerFlow-compatibility tests of this
package (per xdist worker), its first admin made through Pronghorn's setup flow. Tests make
their own users (unique names) and assert only on what they did."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from support.inproc import InProcessServer
from support.live import base_config

ADMIN = "root"
ADMIN_PASSWORD = "correct horse battery staple"


@pytest.fixture(scope="package")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[InProcessServer]:
    config = base_config(auth={"mode": "local", "max_failures_per_ip": 10_000})
    server = InProcessServer(tmp_path_factory.mktemp("deerflow_b"), config).start()
    token = (server.workdir / "data" / "setup-token").read_text().strip()
    with server.http() as http:
        body = {"username": ADMIN, "password": ADMIN_PASSWORD, "token": token}
        assert http.post("/api/auth/setup", json=body).status_code == 201
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def admin(app: InProcessServer) -> Iterator[httpx.Client]:
    """Pronghorn's own UI login as the admin: a client that sends the CSRF header."""
    with app.http() as http:
        resp = http.post("/api/auth/login", json={"username": ADMIN, "password": ADMIN_PASSWORD})
        assert resp.status_code == 200, resp.text
        http.headers["X-CSRF-Token"] = resp.json()["csrf_token"]
        yield http
