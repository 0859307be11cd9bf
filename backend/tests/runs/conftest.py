"""Fixtures for run-engine tests: SDK clients on the session's in-process gateway."""

from __future__ import annotations

import pytest

from support.inproc import InProcessServer


@pytest.fixture
def client(server: InProcessServer):
    return server.sdk(timeout=30)
