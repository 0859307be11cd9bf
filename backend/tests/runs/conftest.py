"""Fixtures for run-engine tests: a live server and SDK clients."""

from __future__ import annotations

import pytest
from langgraph_sdk import get_client

from support.live import LiveServer


@pytest.fixture
def client(server: LiveServer):
    return get_client(url=server.api, timeout=30)
