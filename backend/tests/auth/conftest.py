"""A live server with `auth.mode: local`, set up once for the tests/auth package (per xdist
worker) through the real setup flow. Its tests share it, so each makes its own users (unique
names) and asserts on what it did itself, never on the whole user list or audit log."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from auth.authkit import AuthedServer, local_config, set_up
from support.live import LiveServer


@pytest.fixture(scope="package")
def authed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AuthedServer]:
    # Many tests fail on purpose from 127.0.0.1: keep the per-IP limit out of their way
    # (test_rate_limits.py covers it).
    config = local_config(auth={"max_failures_per_ip": 10_000})
    server = LiveServer(tmp_path_factory.mktemp("auth"), config).start()
    authed = AuthedServer(server, set_up(server))
    try:
        yield authed
    finally:
        authed.close()
        server.stop()
