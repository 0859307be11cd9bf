"""Fixtures of the MCP client tests: the fixture server over stdio and over streamable
HTTP (uvicorn on loopback), and an OAuth 2 token endpoint."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mcp_client.fixture_server import BearerCheck, http_app
from mcp_client.servers import Served, TokenEndpoint

SCRIPT = str(Path(__file__).with_name("fixture_server.py").resolve())


def stdio_server(*args: str, **extra: Any) -> dict[str, Any]:
    return {"type": "stdio", "command": sys.executable, "args": [SCRIPT, *args], **extra}


@pytest.fixture(scope="module")
def http_mcp() -> Iterator[Served]:
    with Served(http_app()) as served:
        yield served


@pytest.fixture
def oauth_mcp() -> Iterator[tuple[Served, TokenEndpoint, BearerCheck]]:
    endpoint = TokenEndpoint()
    check = BearerCheck(http_app(), endpoint.valid)
    with Served(endpoint.app(), lifespan="off") as tokens, Served(check) as mcp:
        endpoint.url = tokens.url
        yield mcp, endpoint, check
