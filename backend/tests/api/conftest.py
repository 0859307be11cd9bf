"""Helpers for the LangGraph API tests (live server via the official SDK)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from langgraph_sdk import get_client
from langgraph_sdk.client import LangGraphClient

from support.live import LiveServer, base_config

ECHO_ASSISTANT_ID = "046b5dc7-2108-582c-9c6c-31d556d138f0"


@pytest.fixture(scope="package")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """One live server for the whole API package (a start costs seconds on a busy machine)."""
    srv = LiveServer(tmp_path_factory.mktemp("api"), base_config()).start(timeout=60)
    yield srv
    srv.stop()


@pytest.fixture
def client(server: LiveServer) -> LangGraphClient:
    return get_client(url=server.api, api_key=None)
